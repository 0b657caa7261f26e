"""The fixture networks are what the other tests and the firmware build rely on."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

import npu.api
from npu.read.model import load_model


def test_build_blob_signature_is_stable(generator):
    params = list(inspect.signature(generator.build_blob).parameters)
    assert params == ["network", "accelerator", "system_config", "memory_mode", "out_dir"]
    assert {"tiny", "convpool", "residual", "large", "deep"} <= set(generator.NETWORKS)


def test_dedicated_sram_fixtures_stage_in_region_2(compiled):
    dedicated = [c for c in compiled if c.memory_mode == "Dedicated_Sram_384KB"]
    assert len(dedicated) == 5
    for c in dedicated:
        with np.load(c.npz, allow_pickle=True) as npz:
            assert int(npz["scratch_fast_region"]) == 2, c.id
            assert 16 * 1024 < int(npz["scratch_fast_size"]) <= 384 * 1024, c.id
        assert 2 in load_model(c.blob).regions_used()


def test_networks_cover_the_operations(compiled):
    ops, fc = set(), False
    for c in compiled:
        result = npu.api.run(c.blob, **c.config)
        ops |= {o["op"] for o in result.operations}
        # the fully connected layer 4096 -> 10 runs as a 1x1 CONV of 40960 MACs
        fc |= c.network == "tiny" and result.operations[-1]["op"] == "CONV" and result.operations[-1]["macs"] == 40960
    assert {"CONV", "DEPTHWISE", "POOL", "ELEMENTWISE", "DMA"} <= ops
    assert fc


def test_large_feature_maps_spill_past_the_fast_scratch(compiled):
    c = next(c for c in compiled if c.network == "large" and c.memory_mode == "Dedicated_Sram_384KB")
    result = npu.api.run(c.blob, **c.config)
    arena = next(r for r in result.region_traffic if r["region"] == 1)
    assert arena["memory"] == "DDR" and arena["feature_maps_write_bytes"] > 384 * 1024
    staging = next(r for r in result.region_traffic if r["region"] == 2)
    assert staging["dma_write_bytes"] > 0 and staging["memory"] == "SRAM"


def test_second_build_is_cached(generator, compiled, model_cache):
    c = compiled[0]
    before = c.blob.stat().st_mtime_ns
    assert generator.build_blob(c.network, c.accelerator, c.system_config, c.memory_mode, model_cache) == c.blob
    assert c.blob.stat().st_mtime_ns == before
    assert not any(Path(model_cache).glob(".*.tmp"))

"""Vela's offline memory plan in a .tflite (the OfflineMemoryAllocation metadata TFLM's planner
honours), and what it gives a functional run: checked against Vela's raw output for the same
network and config (its npz holds the weights and each feature map's region and offset)."""
from __future__ import annotations

import numpy as np
import pytest

from npu.read.model import load_model, load_models
from npu.read.tflite import read_tflite
from weaklink.builders import firmware as fixtures, tflm as fixtures_tflm

CONFIGS = [("u55", "tiny"), ("u85", "tiny"), ("u85", "split")]


def _tflite(target, network):
    return fixtures.vela_tflite(target, network).read_bytes()


@pytest.mark.parametrize("target, network", CONFIGS)
def test_the_plan_is_read_for_every_entry(target, network):
    data = _tflite(target, network)
    model = read_tflite(data)
    assert model.offline_plan == "present"
    for op in model.operators:
        for t in op.entries[1:]:                  # scratch, fast scratch, feature maps
            assert t.offline_offset is not None and t.offline_offset >= 0
        assert op.entries[0].offline_offset == -1  # the weights: a buffer, never planned
        assert op.num_inputs == 4 and len(op.entries) == 5


def test_feature_maps_and_weights_equal_velas_raw_output():
    t = fixtures.TARGETS["u55"]
    raw = fixtures._model_generator().compile_network(
        "tiny", t.accelerator, t.system_config, t.memory_mode, fixtures.cache_dir() / "models")
    npz = load_model(raw / "tiny_vela.npz")
    tfl = load_model(fixtures.vela_tflite("u55", "tiny"))
    assert tfl.weight_data == npz.weight_data and tfl.missing == ""
    for a, b in ((tfl.inputs, npz.inputs), (tfl.outputs, npz.outputs)):
        assert [(io.region, io.offset, io.elem_size) for io in a] == \
            [(io.region, io.offset, io.elem_size) for io in b]
        assert [tuple(d for d in io.shape if d != 1) for io in a] == \
            [tuple(d for d in io.shape if d not in (0, 1)) for io in b]
    assert any(io.offset for io in tfl.inputs)   # a feature map at a non-zero offset


def test_without_the_plan_the_model_names_what_is_missing(tmp_path):
    tflite = fixtures_tflm.without_offline_plan(fixtures.vela_tflite("u55", "tiny"), tmp_path / "m.tflite")
    assert read_tflite(tflite.read_bytes()).offline_plan == "absent"
    [model] = load_models(tflite)
    assert model.weight_data is not None and not model.inputs
    assert "OfflineMemoryAllocation metadata is absent" in model.missing


def test_a_plan_with_the_wrong_count_is_one_tflm_refuses():
    data = bytearray(_tflite("u55", "tiny"))
    name = data.find(b"OfflineMemoryAllocation")
    words = np.frombuffer(bytes(data), dtype="<i4", count=len(data) // 4)
    # the metadata buffer: [version 0, 1 subgraph, count, offsets...]; find it after the name
    count = int(read_tflite(bytes(data)).operators[0].entries[-1].index) + 1
    starts = [i for i in range(len(words) - 3) if words[i] == 0 and words[i + 1] == 1
              and words[i + 2] == count]
    assert name > 0 and len(starts) == 1
    data[starts[0] * 4 + 8:starts[0] * 4 + 12] = (count + 1).to_bytes(4, "little")
    model = read_tflite(bytes(data))
    assert "TFLM refuses the model" in model.offline_plan
    assert all(t.offline_offset is None for t in model.operators[0].entries)

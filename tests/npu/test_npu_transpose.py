"""A Transpose (NCHW -> NHWC, as ExecuTorch's graphs begin) against Vela's own estimate.

Vela costs a Transpose as one operation; the stream holds what it became: on U55 two passes
of 1x1 average pools with swapped OFM strides (one whole-volume H/W swap, then one pass per
row), on U85 one pool whose OFM is written transposed. The network is our own: one int8
TRANSPOSE then a 3x3 conv, compiled by the real Vela.
"""
from __future__ import annotations

import subprocess

import numpy as np
import npu.api
import pytest
from ethosu.vela.tflite.TensorType import TensorType
from vela_oracle import total_cycles

TOLERANCE = 0.20
CONFIGS = {"u55": ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
           "u85": ("ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram_384KB")}


def _network(generator) -> bytes:
    g = generator.Graph(seed=0)
    x = g.input((1, 3, 64, 64))
    perm = g._tensor("perm", (4,), TensorType.INT32, data=np.array([0, 2, 3, 1], dtype=np.int32))
    t = g.tensors[x]
    y = g._tensor("transposed", (1, 64, 64, 3), scale=t.scale, zp=t.zero_point)
    g._op(generator._graph.Op.TRANSPOSE, (x, perm), (y,))
    return g.serialize([g.conv(y, 16, 3)])


def _compile(generator, model_cache, config):
    out = model_cache / "transpose" / "__".join(config)
    out.mkdir(parents=True, exist_ok=True)
    tflite, log = out / "transpose.tflite", out / "vela.log"
    data = _network(generator)
    if not log.exists() or not tflite.exists() or tflite.read_bytes() != data:
        tflite.write_bytes(data)
        proc = subprocess.run(generator.vela_command(tflite, *config, out), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        log.write_text(proc.stdout)
    return out / "transpose_vela.npz", log.read_text()


def _vela_transposes(log: str) -> list[int]:
    """Op Cycles of each Transpose row of Vela's --verbose-performance table."""
    return [int(line.split()[5]) for line in log.splitlines() if line.startswith("Transpose ")]


def _run(generator, model_cache, name):
    config = CONFIGS[name]
    npz, log = _compile(generator, model_cache, config)
    result = npu.api.run(npz, accelerator=config[0], system_config=config[1], memory_mode=config[2])
    assert result.status == "ok", result.diagnosis
    return result, log


def test_u55_transpose_passes_cost_what_vela_estimates(generator, model_cache):
    result, log = _run(generator, model_cache, "u55")
    vela_ops = _vela_transposes(log)
    pools = [o for o in result.operations if o["op"] == "POOL"]
    assert len(vela_ops) == 2 and len(pools) > 2          # Vela's two swaps, the stream's many passes
    assert pools[0]["cycles"] == vela_ops[0]                # the whole-volume swap: Vela's figure exactly
    assert pools[0]["macs"] == 0                            # Vela counts no MACs for a Transpose
    vela = total_cycles(log)
    assert abs(result.cycles["total"] - vela) / vela <= TOLERANCE, (result.cycles["total"], vela)


def test_u85_transposed_ofm_costs_what_vela_estimates(generator, model_cache):
    result, log = _run(generator, model_cache, "u85")
    (vela_op,) = _vela_transposes(log)
    pool = result.operations[0]
    assert pool["op"] == "POOL"
    assert pool["cycles"] == pytest.approx(vela_op, rel=0.01)
    vela = total_cycles(log)
    assert abs(result.cycles["total"] - vela) / vela <= TOLERANCE, (result.cycles["total"], vela)

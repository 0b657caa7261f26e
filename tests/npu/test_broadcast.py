"""Elementwise operands that broadcast are read in their own shape: the timing engine's bounds and
bytes, and the functional engines' reads. The fixture network (fixtures/models/functional_nets.py,
``broadcast``) adds, subtracts and multiplies by second inputs that broadcast across channels
(a constant and a computed map), height and width, height, width, and a scalar; its constants
lie at the end of region 0, which is exactly the weights' size, so an operand read at the OFM's
shape runs past it. LiteRT's reference kernels are the byte oracle."""
from __future__ import annotations

import numpy as np
import pytest

import npu.api
from npu.emulate.ops import KernelOp, operations
from npu.functional import run_functional
from npu.hw import accelerator

from test_functional import CONFIGS, assert_bit_exact, compiled, input_shape, placement

NETWORK = "broadcast"
H, W, C = 12, 10, 20
# bytes of each constant second input: (1,h,w,1), (1,1,1,c), (1,1,w,c), (1,h,1,c)
CONSTANTS = {H * W, C, W * C, H * C}
U55, U85 = "ethos-u55-128", "ethos-u85-256/Dedicated_Sram_384KB"


def _elementwise(model) -> list[KernelOp]:
    return [op for op in operations(model.commands) if isinstance(op, KernelOp) and op.op == "ELEMENTWISE"]


@pytest.mark.parametrize("config", [U55, U85])
def test_the_network_broadcasts_every_way(generator, model_cache, config):
    model, _ = compiled(generator, model_cache, NETWORK, config)
    text = " ".join(str(c.fields) for c in model.commands if c.command == "NPU_SET_IFM2_BROADCAST")
    if config == U55:
        for flag in ("broadcast_h", "broadcast_w", "broadcast_c", "broadcast_constant"):
            assert f"'{flag}': 'BROADCAST_MODE_ENABLE'" in text, flag
    else:
        for mode in ("C", "HW", "H", "W", "SCALAR"):
            assert f"'BROADCAST_MODE_{mode}'" in text, mode


@pytest.mark.parametrize("config", [U55, U85])
def test_second_inputs_are_read_in_their_broadcast_shape(generator, model_cache, config):
    model, _ = compiled(generator, model_cache, NETWORK, config)
    ops = _elementwise(model)
    reads = [a for op in ops for a in op.accesses if a.what == "IFM2"]
    constants = [a for a in reads if a.region == 0]
    assert {a.length for a in constants} == CONSTANTS
    assert max(a.offset + a.length for a in constants) <= len(model.weight_data)
    # the scalar is a register value: six operations, five second inputs in memory
    assert len(ops) >= 6 and len(reads) == 5
    # the computed 1-channel map: h*w elements, not the OFM's h*w*c
    (computed,) = [a for a in reads if a.region != 0]
    assert computed.length < H * W * C


@pytest.mark.parametrize("config", [U55, U85])
def test_the_run_stays_inside_region_0(generator, model_cache, config):
    model, _ = compiled(generator, model_cache, NETWORK, config)
    acc, system, mode = CONFIGS[config]
    result = npu.api.run(model, accelerator=acc, system_config=system, memory_mode=mode)
    assert result.status == "ok", result.diagnosis


@pytest.mark.parametrize("config", list(CONFIGS))
def test_bytes_equal_litert(generator, model_cache, config):
    assert_bit_exact(generator, model_cache, NETWORK, config)


@pytest.mark.parametrize("config", [U55, U85])
def test_functional_reads_are_the_broadcast_shape(generator, model_cache, config):
    model, tflite = compiled(generator, model_cache, NETWORK, config)
    x = np.random.default_rng(7).integers(-128, 128, size=input_shape(tflite), dtype=np.int8)
    where = placement(model)
    run = run_functional(model, accelerator(CONFIGS[config][0]), where, [x])
    base = where[0][0]
    region0 = [r for r in run.reads if r.region == 0 and r.what.startswith("IFM2")]
    assert {r.end - r.start for r in region0} == CONSTANTS
    assert max(r.end for r in region0) <= base + len(model.weight_data)

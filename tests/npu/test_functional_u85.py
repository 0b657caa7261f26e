"""Ethos-U85 weights and scales against the model's own numbers, and the output stage against
TensorFlow Lite's integer formulas.

The weight test decodes every convolution, depthwise and fully connected stream of every
compiled network (operator, random and fixture networks; U85-256 and U85-512 in both memory
modes, and the operator networks on U85-128/1024/2048 for one and four weight streams) while the
functional engine runs it, and requires each to be a slice of the .tflite's int8 weights minus
their zero point, every padding slot of the weight order to hold 0, and every output channel of
every weight tensor to be met. The weight order's IFM block depth is Vela's rule (no register
holds it): the Vela version is pinned in npu/functional/u85_order.py."""
from __future__ import annotations

import random

import numpy as np
import pytest

from npu.functional import prepare
from npu.functional.u85_order import VELA_VERSION
from npu.functional.u85_output import decode_scales, rescale
from npu.functional.u85_weights import _values
from npu.hw import accelerator
from npu.read.model import load_model

tflite_schema = pytest.importorskip("ethosu.vela.tflite.Model")
from ethosu.vela.tflite.BuiltinOperator import BuiltinOperator as Op  # noqa: E402

from test_functional import (OPERATOR_NETWORKS, RANDOM_NETWORKS, U85_SYSTEM,  # noqa: E402
                             placement)

FIXTURE_NETWORKS = ["tiny", "convpool", "residual", "large", "deep"]
MODES = ("Dedicated_Sram_384KB", "Sram_Only")
CONFIGS = {f"{acc}/{mode}": (acc, mode) for acc in ("ethos-u85-256", "ethos-u85-512") for mode in MODES}
CORE_CONFIGS = {f"{acc}/Sram_Only": (acc, "Sram_Only") for acc in ("ethos-u85-128", "ethos-u85-1024",
                                                                     "ethos-u85-2048")}


def test_the_pinned_vela_is_the_installed_one():
    from ethosu.vela import _version
    assert _version.__version__ == VELA_VERSION


def model_weights(tflite) -> list[np.ndarray]:
    """Each CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED weight tensor as (cout, kh, kw, cin)
    int32 minus its zero point (depthwise as (C, kh, kw, 1), fully connected as (units, 1, 1, cin))."""
    m = tflite_schema.Model.GetRootAsModel(tflite.read_bytes(), 0)
    sg = m.Subgraphs(0)
    out = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex()).BuiltinCode()
        if code not in (Op.CONV_2D, Op.DEPTHWISE_CONV_2D, Op.FULLY_CONNECTED):
            continue
        t = sg.Tensors(op.Inputs(1))
        w = m.Buffers(t.Buffer()).DataAsNumpy().view(np.int8).reshape(t.ShapeAsNumpy()).astype(np.int32)
        w -= int(t.Quantization().ZeroPoint(0))
        if code == Op.DEPTHWISE_CONV_2D:
            w = w.transpose(3, 1, 2, 0)
        elif code == Op.FULLY_CONNECTED:
            w = w.reshape(w.shape[0], 1, 1, w.shape[1])
        out.append(w)
    return out


def decoded(model, acc: str):
    """Every weight stream the engine decoded while running the model on a zero input."""
    inputs = [np.zeros(int(np.prod([d for d in io.shape if d])), dtype=np.int8) for io in model.inputs]
    _, engine = prepare(model, accelerator(acc), placement(model), inputs)
    engine.record_weights = True
    engine.run()
    return engine.decoded


def padding_values(streams, fast, t, where, lengths) -> np.ndarray:
    """The values the streams hold at the weight order's padding positions (all zero in Vela's
    output)."""
    pairs = _values(streams, fast, t, where, tuple(lengths))
    return np.concatenate([values[order < 0] for order, values in pairs])


def assert_weights_are_the_models(generator, model_cache, network, acc, mode):
    vdir = generator.compile_network(network, acc, U85_SYSTEM, mode, model_cache)
    model = load_model(vdir / f"{network}_vela.npz")
    weights = model_weights(model_cache / f"{network}.tflite")
    by_first_channel: dict[tuple, list[tuple[int, int]]] = {}
    for ti, w in enumerate(weights):
        for c in range(w.shape[0]):
            by_first_channel.setdefault((w.shape[1:], w[c].tobytes()), []).append((ti, c))
    covered = [np.zeros(w.shape[0], dtype=bool) for w in weights]
    ops = decoded(model, acc)
    assert bool(ops) == bool(weights), f"{network}: {len(ops)} weight streams for {len(weights)} tensors"
    for offset, t, fast, streams, lengths, w in ops:
        where = f"{network} {acc} {mode}, operation at 0x{offset:06x} ({t.kind}, {'fast' if fast else 'default'})"
        match = [(ti, c) for ti, c in by_first_channel.get((w.shape[1:], w[0].tobytes()), ())
                 if np.array_equal(weights[ti][c:c + len(w)], w)]
        assert match, f"{where}: the decoded weights are no slice of the model's weights"
        ti, c = match[0]
        covered[ti][c:c + len(w)] = True
        pad = padding_values(streams, fast, t, where, lengths)
        assert not pad.any(), f"{where}: {np.count_nonzero(pad)} of {pad.size} padding slots are not 0"
    missing = [(ti, int(np.count_nonzero(~c))) for ti, c in enumerate(covered) if not c.all()]
    assert not missing, f"{network} {acc} {mode}: output channels never decoded (tensor, count): {missing}"


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", OPERATOR_NETWORKS + RANDOM_NETWORKS + FIXTURE_NETWORKS)
def test_weights_decode_to_the_models_weights(generator, model_cache, network, config):
    assert_weights_are_the_models(generator, model_cache, network, *CONFIGS[config])


@pytest.mark.parametrize("config", CORE_CONFIGS)
@pytest.mark.parametrize("network", OPERATOR_NETWORKS)
def test_weights_decode_on_one_and_four_cores(generator, model_cache, network, config):
    assert_weights_are_the_models(generator, model_cache, network, *CORE_CONFIGS[config])


# -- the output stage ------------------------------------------------------------------------
def _srdhm_then_rdbpot(x: int, m: int, right: int, first: int = 31) -> int:
    """TensorFlow Lite's SaturatingRoundingDoublingHighMul (a product rounded at bit `first`,
    ties toward +infinity, C division) then RoundingDivideByPOT (ties away from zero), in Python
    integers."""
    ab = x * m
    nudge = (1 << (first - 1)) if ab >= 0 else 1 - (1 << (first - 1))
    t = ab + nudge
    high = t // (1 << first) if t >= 0 else -((-t) // (1 << first))
    mask = (1 << right) - 1
    rem, threshold = high & mask, (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if rem > threshold else 0)


def test_double_symmetric_is_tflite_multiply_by_quantized_multiplier():
    rnd = random.Random(7)
    cases = [(rnd.randint(-(1 << 26), 1 << 26), rnd.randint(1 << 30, (1 << 31) - 1), rnd.randint(32, 63))
             for _ in range(4000)]
    cases += [(k * (1 << 12) + (1 << 11), 1 << 30, 43) for k in range(-60, 60)]       # exact ties
    x, m, s = (np.array(v, dtype=np.int64) for v in zip(*cases))
    got = rescale(x, m, s, "DOUBLE_SYMMETRIC")
    assert got.tolist() == [_srdhm_then_rdbpot(xi, mi, si - 31) for xi, mi, si in cases]


def test_double_round_point_is_tflite_add_input_scaling():
    """TFLite ADD scales (x << 20) by a multiplier below one; Vela programs the same multiplier
    with shift 11 - exponent and dbl_rnd 20 (15 and dbl_rnd 15 for 16-bit inputs)."""
    rnd = random.Random(3)
    for left in (20, 15):
        cases = [(rnd.randint(-(1 << 16), 1 << 16), rnd.randint(1 << 30, (1 << 31) - 1), rnd.randint(0, 12))
                 for _ in range(3000)]
        x, m, e = (np.array(v, dtype=np.int64) for v in zip(*cases))
        got = rescale(x, m, 31 - left + e, "DOUBLE_SYMMETRIC", left)
        want = [_srdhm_then_rdbpot(xi << left, mi, ei) for xi, mi, ei in cases]
        assert got.tolist() == want


@pytest.mark.parametrize("mode,want", [
    ("NATURAL", [2, -1, 3, -2, 1, -1]),            # ties toward +infinity
    ("SYMMETRIC", [2, -2, 3, -3, 1, -1]),          # ties away from zero
    ("TRUNCATE_TO_ZERO", [1, -1, 2, -2, 1, -1]),
    ("TRUNCATE_TO_LOWER", [1, -2, 2, -3, 1, -1]),
    ("DOUBLE_ASYMMETRIC", [2, -1, 3, -2, 1, -1]),  # shift 1: no double rounding
])
def test_single_rounding_modes(mode, want):
    x = np.array([3, -3, 5, -5, 2, -2], dtype=np.int64)
    assert rescale(x, 1, 1, mode).tolist() == want


def test_shift_zero_and_63():
    x = np.array([-7, 0, 7], dtype=np.int64)
    for mode in ("DOUBLE_SYMMETRIC", "NATURAL", "SYMMETRIC", "TRUNCATE_TO_ZERO", "TRUNCATE_TO_LOWER"):
        assert rescale(x, 3, 0, mode).tolist() == [-21, 0, 21]
    big = np.array([1 << 31], dtype=np.int64)
    assert rescale(big, (1 << 31) - 1, 63, "NATURAL").tolist() == [0]
    assert rescale(big, (1 << 31) - 1, 62, "NATURAL").tolist() == [1]


def _record32(bias, scale, shift):
    return (bias & 0xFFFFFFFF).to_bytes(4, "little") + scale.to_bytes(4, "little") + bytes([shift, 0])


def _record48(bias, scale, shift):
    return (bias & (1 << 48) - 1).to_bytes(6, "little") + scale.to_bytes(2, "little") + bytes([shift, 0])


def test_scale_records_i32_and_i48():
    rows = [(-(1 << 31), (1 << 31) - 1, 63), ((1 << 31) - 1, 1, 0), (-5, 1 << 30, 41)]
    bias, scale, shift = decode_scales(b"".join(_record32(*r) for r in rows), 3, False, "scales")
    assert list(zip(bias.tolist(), scale.tolist(), shift.tolist())) == rows
    rows = [(-(1 << 47), (1 << 15) - 1, 30), ((1 << 47) - 1, 1, 0), (-123456789012, 20000, 47)]
    bias, scale, shift = decode_scales(b"".join(_record48(*r) for r in rows), 3, True, "scales")
    assert list(zip(bias.tolist(), scale.tolist(), shift.tolist())) == rows


def test_a_short_scale_stream_is_one_clear_error():
    from npu.errors import InputError
    with pytest.raises(InputError, match="16 OFM channels need 160"):
        decode_scales(bytes(150), 16, False, "CONV scale stream")

"""The SOFTMAX Vela lowers for Ethos-U55/U65 is bit-exact against LiteRT's reference kernels.
int8: a depthwise max, a SUB whose 32-bit OFM goes through a 256-entry 32-bit exp table, SHR,
a reduce sum, CLZ, SHL and a Newton-Raphson reciprocal in int32 MUL/ADD/SUB. int16: the exp and
the reciprocal through two interpolated 512-entry tables on 16-bit OFMs. The networks
(fixtures/models/functional_nets.py ``SOFTMAX``) include a person_detect-shaped classifier
(convolutions, a global average pool, two classes, SOFTMAX), compiled for ethos-u55-128,
ethos-u55-256 and ethos-u65-256, on three random inputs each; no tolerance."""
from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from npu.errors import InputError
from npu.functional import run_functional
from npu.functional.kernels.elementwise import ShiftError, combine, count_leading_zeros
from npu.functional.lut import LUT_AREA, LutError, lookup
from npu.functional.scale import round_shift
from npu.hw import accelerator
from npu.read.model import load_model

interpreter = pytest.importorskip("ai_edge_litert.interpreter")
from test_functional import placement, reference  # noqa: E402  (after LiteRT's skip)

CONFIGS = {"ethos-u55-128": ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
           "ethos-u55-256": ("ethos-u55-256", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
           "ethos-u65-256": ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram")}
NETWORKS = ("softmax_c12", "softmax_c1", "softmax_zp34", "softmax_c100_beta", "softmax_fc40", "softmax_person_detect",
            "softmax_int16_c12", "softmax_int16_c100_beta")
SEEDS = 3


def compiled(generator, model_cache, network, config):
    vdir = generator.compile_network(network, *CONFIGS[config], model_cache)
    return load_model(vdir / f"{network}_vela.npz"), model_cache / f"{network}.tflite"


def inputs(tflite, seed: int) -> np.ndarray:
    """Uniform over the input type's range (int8 or int16)."""
    d = interpreter.Interpreter(model_path=str(tflite)).get_input_details()[0]
    info = np.iinfo(d["dtype"])
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=tuple(d["shape"]), dtype=d["dtype"])


def run(model, config, x):
    return run_functional(model, accelerator(CONFIGS[config][0]), placement(model), [x]).outputs[0]


def test_the_networks_are_the_fixture_list(generator):
    assert set(NETWORKS) == {n for n in generator.FUNCTIONAL_NETWORKS if n.startswith("softmax_")}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", NETWORKS)
def test_softmax_bit_exact(generator, model_cache, network, config):
    model, tflite = compiled(generator, model_cache, network, config)
    assert any(c.fields.get("activation_function", "").startswith("ACTIVATION_FUNCTION_TABLE")
               and c.command == "NPU_SET_ACTIVATION" for c in model.commands)     # the 32-bit LUT path
    for seed in range(SEEDS):
        x = inputs(tflite, seed)
        want = reference(tflite, x)
        got = run(model, config, x)
        assert got.tobytes() == want.tobytes(), (
            f"{network} on {config}, input seed {seed}: {np.count_nonzero(got.ravel() != want.ravel())} of "
            f"{want.size} output bytes differ")


@pytest.mark.parametrize("network", ["softmax_c12", "softmax_fc40", "softmax_c100_beta", "softmax_int16_c12",
                                     "softmax_int16_c100_beta"])
def test_outputs_are_spread(generator, model_cache, network):
    """Equality means something: the probabilities take many values, not only -128 and 127."""
    model, tflite = compiled(generator, model_cache, network, "ethos-u55-128")
    assert len(np.unique(reference(tflite, inputs(tflite, 0)))) >= 10


def _lut_source(model) -> int:
    """The weight-region offset the first DMA into SHRAM (the exp table) reads."""
    src = 0
    for c in model.commands:
        if c.command == "NPU_SET_DMA0_SRC":
            src = c.fields["addr"]
        elif c.command == "NPU_OP_DMA_START":
            return src
    raise AssertionError("no DMA in the stream")


def test_a_wrong_table_entry_changes_the_output(generator, model_cache):
    """Entry 255 is exp(0), which every row's largest element reads."""
    model, tflite = compiled(generator, model_cache, "softmax_c12", "ethos-u55-128")
    x = inputs(tflite, 0)
    weights = bytearray(model.weight_data)
    at = _lut_source(model) + 255 * 4
    assert int.from_bytes(weights[at:at + 4], "little") == 0x7FFFFFFF
    weights[at:at + 4] = (0x40000000).to_bytes(4, "little")
    got = run(dataclasses.replace(model, weight_data=bytes(weights)), "ethos-u55-128", x)
    assert got.tobytes() != reference(tflite, x).tobytes()


def test_a_wrong_multiply_shift_changes_the_output(generator, model_cache):
    """The Q31 multiply of the reciprocal is an int32 MUL whose OFM_SCALE shift is 31."""
    model, tflite = compiled(generator, model_cache, "softmax_c12", "ethos-u55-128")
    x = inputs(tflite, 0)
    commands = list(model.commands)
    i = next(i for i, c in enumerate(commands) if c.command == "NPU_SET_OFM_SCALE" and c.fields["shift"] == 31)
    commands[i] = dataclasses.replace(commands[i], fields={**commands[i].fields, "shift": 30})
    got = run(dataclasses.replace(model, commands=tuple(commands)), "ethos-u55-128", x)
    assert got.tobytes() != reference(tflite, x).tobytes()


def test_a_table_past_shram_is_one_clear_error(generator, model_cache):
    """TABLE_7 with 256 32-bit entries would run 768 bytes past the end of SHRAM."""
    model, tflite = compiled(generator, model_cache, "softmax_c12", "ethos-u55-128")
    commands = tuple(dataclasses.replace(c, fields={**c.fields, "activation_function": "ACTIVATION_FUNCTION_TABLE_7"})
                     if c.command == "NPU_SET_ACTIVATION" and "TABLE" in c.fields.get("activation_function", "")
                     else c for c in model.commands)
    with pytest.raises(InputError) as e:
        run(dataclasses.replace(model, commands=commands), "ethos-u55-128", inputs(tflite, 0))
    message = str(e.value)
    assert "table 7 of 256 32-bit entries ends at SHRAM byte" in message and "\n" not in message
    assert "ELEMENTWISE at stream offset 0x" in message


def as_older_vela(model, zero_point: int):
    """The stream with the OFM zero point the Vela 2.x/3.x softmax writes on its int32
    intermediates: the softmax IFM's (``no_scale_quant`` in its ``softmax.py``), here on every
    32-bit OFM whose clip range is the OFM's own; every other kernel keeps the compiled value."""
    commands, regs, compiled_zp = [], {}, 0
    for c in model.commands:
        if c.command == "NPU_SET_OFM_ZERO_POINT":
            compiled_zp = c.fields["zero_point"]
            continue
        if c.command.startswith("NPU_SET_"):
            regs[c.command] = c.fields
        elif c.command in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE"):
            int32 = regs.get("NPU_SET_OFM_PRECISION", {}).get("activation_precision", "").endswith("B32")
            own = regs.get("NPU_SET_ACTIVATION", {}).get("activation_clip_range", "").endswith("OFM_PRECISION")
            zp = zero_point & 0xFFFF if int32 and own else compiled_zp
            commands.append(dataclasses.replace(c, command="NPU_SET_OFM_ZERO_POINT", param=zp, code=0x0118,
                                                payload=None, fields={"zero_point": zp}))
        commands.append(c)
    return dataclasses.replace(model, commands=tuple(commands))


@pytest.mark.parametrize("config", ["ethos-u55-128", "ethos-u65-256"])
def test_the_older_vela_zero_point_on_int32_intermediates_is_not_applied(generator, model_cache, config):
    """The Zephyr tflm_ethosu sample's model (an older Vela, arch 1.0.6) programs its SOFTMAX
    input's zero point, 34, on the int32 SHR, reduce sum, CLZ, SUB and SHL; adding it to
    those OFMs made the headroom shift 79. The NPU adds no zero point to a 32-bit OFM without a
    forced 8/16-bit clip range (scale.py), and the outputs stay LiteRT's."""
    model, tflite = compiled(generator, model_cache, "softmax_zp34", config)
    older = as_older_vela(model, 34)
    changed = sum(c.command == "NPU_SET_OFM_ZERO_POINT" and c.fields["zero_point"] == 34 for c in older.commands)
    assert changed >= 8                      # SHR, reduce sum, CLZ, two SUBs, two SHLs, ...
    for seed in range(SEEDS):
        x = inputs(tflite, seed)
        assert run(older, config, x).tobytes() == reference(tflite, x).tobytes()


# ------------------------------------------------------------------ units against Python integers
def test_count_leading_zeros_is_that_of_32_bits():
    rng = random.Random(1)
    values = [0, 1, 2, 3, 0x7FFFFFFF, -1, -(1 << 31)] + [rng.randrange(-(1 << 31), 1 << 31) for _ in range(500)]
    want = [0 if v < 0 else 32 - v.bit_length() for v in values]
    assert count_leading_zeros(np.array(values, dtype=np.int64)).tolist() == want


def test_shr_rounds_as_gemmlowp_on_non_negative_values():
    """RoundingDivideByPOT (ties away from zero) equals NATURAL (ties up) where x >= 0."""
    rng = random.Random(2)
    xs = [rng.randrange(0, 1 << 31) for _ in range(300)] + [6, 7, 8, 2 ** 30]
    ns = [rng.randrange(0, 32) for _ in xs]
    want = [(x + (1 << (n - 1))) >> n if n else x for x, n in zip(xs, ns)]
    got = combine("ELEMENTWISE_MODE_SHR", np.array(xs, dtype=np.int64), np.array(ns, dtype=np.int64),
                  "ROUND_MODE_NATURAL")
    assert got.tolist() == want


def test_round_shift_truncates_toward_zero():
    x = np.array([-7, -8, -9, 7, 9], dtype=np.int64)
    assert round_shift(x, 3, "ROUND_MODE_TRUNCATE").tolist() == [0, -1, -1, 0, 1]
    assert round_shift(x, 3, "ROUND_MODE_NATURAL").tolist() == [-1, -1, -1, 1, 1]


def test_the_int32_multiply_is_the_doubling_high_multiply():
    """OFM_SCALE 2**30/31 on an int32 MUL (shift only) gives gemmlowp's
    SaturatingRoundingDoublingHighMul for every pair but INT32_MIN squared."""
    rng = random.Random(3)
    a = [rng.randrange(-(1 << 31) + 1, 1 << 31) for _ in range(500)]
    b = [rng.randrange(-(1 << 31) + 1, 1 << 31) for _ in range(500)]

    def srdhm(x, y):
        ab = x * y
        nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
        q = abs(ab + nudge) // (1 << 31)
        return q if ab + nudge >= 0 else -q                 # C division truncates toward zero
    got = round_shift(combine("ELEMENTWISE_MODE_MUL", np.array(a), np.array(b)), 31, "ROUND_MODE_DBL")
    assert got.tolist() == [srdhm(x, y) for x, y in zip(a, b)]


@pytest.mark.parametrize("mode,amount", [("ELEMENTWISE_MODE_SHL", 32), ("ELEMENTWISE_MODE_SHR", 64),
                                         ("ELEMENTWISE_MODE_SHR", -1)])
def test_a_shift_outside_the_modelled_range_is_refused(mode, amount):
    with pytest.raises(ShiftError, match="not modelled"):
        combine(mode, np.ones(4, dtype=np.int64), np.full(4, amount, dtype=np.int64), "ROUND_MODE_NATURAL")


def test_lookup_reads_32_bit_entries_from_the_slot():
    shram = np.zeros(16 * 1024, dtype=np.uint8)
    start = len(shram) - LUT_AREA + 4 * 256                 # TABLE_4: the second 1 KB
    shram[start:start + 1024] = (np.arange(256, dtype="<i4") * 1000 - 7).view(np.uint8)
    got = lookup(shram, 4, np.array([-128, 0, 127]), 32, True)
    assert got.tolist() == [-7, 128 * 1000 - 7, 255 * 1000 - 7]
    with pytest.raises(LutError, match="past its"):
        lookup(shram, 5, np.array([0]), 32, True)
    with pytest.raises(LutError, match="64-bit OFM is not modelled"):
        lookup(shram, 0, np.array([0]), 64, True)


def test_a_16_bit_table_interpolates_as_tflite():
    """TensorFlow Lite's generic_int16_table_lookup on the 513 samples Vela's table encodes
    as 512 entries of slope * 2**16 + base (negative bases and slopes included)."""
    rng = np.random.default_rng(4)
    samples = [int(v) for v in rng.integers(-16000, 16000, size=513)]   # slopes fit int16, as TFLite's
    entries = np.array([((samples[i + 1] - samples[i]) << 16) + samples[i] for i in range(512)], dtype=np.int64)
    shram = np.zeros(16 * 1024, dtype=np.uint8)
    shram[-LUT_AREA:] = entries.astype("<i4").view(np.uint8)      # int32 wrap, as the table tensor holds it
    values = [-32768, -1, 0, 1, 127, 128, 32767] + [int(v) for v in rng.integers(-32768, 32768, size=500)]

    def tflite(v):
        index, offset = 256 + (v >> 7), v & 0x7F
        return samples[index] + (((samples[index + 1] - samples[index]) * offset + 64) >> 7)
    assert lookup(shram, 0, np.array(values), 16, True).tolist() == [tflite(v) for v in values]

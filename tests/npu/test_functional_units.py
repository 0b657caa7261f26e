"""Units of the functional engine against independent references: the weight order against
Vela's own encoder (mlw_codec.reorder_encode), the rounding against TensorFlow Lite's
integer formulas written out in Python integers, memory aliasing, and the command line."""
from __future__ import annotations

import random

import numpy as np
import pytest

from npu.cli import main as npu_main
from npu.functional.memory import AddressSpace
from npu.functional.scale import rescale
from npu.functional.weights import Traversal, decode_weights

mlw_codec = pytest.importorskip("ethosu.mlw_codec")


@pytest.mark.parametrize("kind,kh,kw,cin,cout,block,dilation", [
    ("depth_first", 1, 1, 4096, 10, 16, (1, 1)),
    ("depth_first", 3, 3, 40, 24, 16, (1, 1)),
    ("part_kernel", 3, 3, 8, 16, 16, (1, 1)),
    ("part_kernel", 5, 5, 12, 24, 8, (1, 1)),
    ("part_kernel", 9, 9, 3, 8, 8, (1, 1)),          # split into 8x8 sub-kernels
    ("depth_first", 3, 3, 16, 8, 8, (2, 2)),          # dilated: 4x4 sub-kernels
    ("depthwise", 3, 3, 1, 48, 16, (1, 1)),
    ("depthwise", 5, 5, 1, 20, 32, (1, 1)),
])
def test_weight_order_inverts_vela_encoder(kind, kh, kw, cin, cout, block, dilation):
    rng = np.random.default_rng(kh * 100 + cin)
    ohwi = rng.integers(-255, 256, size=(cout, kh, kw, cin if kind != "depthwise" else 1)).astype(np.int16)
    volume = ohwi                                     # OHWI; depthwise as (C, H, W, 1)
    encoded = mlw_codec.reorder_encode(8, 8, volume, block, kind == "depthwise", kind == "part_kernel",
                                       8, 8 // dilation[0], 8 // dilation[1])
    stream = encoded[0] if isinstance(encoded, tuple) else encoded
    t = Traversal(kind, kh, kw, cin, cout, block, 8, 8, dilation)
    assert np.array_equal(decode_weights(bytes(stream), t), ohwi)


def _tflite_multiply(x: int, m: int, shift: int) -> int:
    """TFLite MultiplyByQuantizedMultiplier (double rounding), in Python integers."""
    left, right = max(31 - shift, 0), max(shift - 31, 0)
    ab = (x << left) * m
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    t = ab + nudge
    high = t // (1 << 31) if t >= 0 else -((-t) // (1 << 31))       # C division truncates
    mask = (1 << right) - 1
    rem, threshold = high & mask, (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if rem > threshold else 0)


def test_double_rounding_is_tflite_multiply_by_quantized_multiplier():
    rnd = random.Random(5)
    cases = [(rnd.randint(-(1 << 24), 1 << 24), rnd.randint(1 << 30, (1 << 31) - 1), rnd.randint(31, 50))
             for _ in range(3000)]
    # shift < 31 is TFLite's left shift of an int32 accumulator: values that stay in int32
    cases += [(rnd.randint(-(1 << 19), 1 << 19), rnd.randint(1 << 30, (1 << 31) - 1), rnd.randint(20, 30))
              for _ in range(1000)]
    cases += [(k * (1 << 12) + (1 << 11), 1 << 30, 43) for k in range(-50, 50)]   # exact ties
    x, m, s = (np.array(v, dtype=np.int64) for v in zip(*cases))
    got = rescale(x, m, s, "ROUND_MODE_DBL")
    assert got.tolist() == [_tflite_multiply(*c) for c in cases]


def test_natural_rounding_ties_toward_plus_infinity():
    x = np.array([3, -3, 5, -5], dtype=np.int64)
    assert rescale(x, 1, 1, "ROUND_MODE_NATURAL").tolist() == [2, -1, 3, -2]
    assert rescale(x, 1, 1, "ROUND_MODE_TRUNCATE").tolist() == [1, -1, 2, -2]


def test_overlapping_regions_share_bytes():
    mem = AddressSpace.build({1: 0x2000_0000, 2: 0x2000_0100}, {1: 0x400, 2: 0x100})
    mem.load(2, 0x10, b"\xaa\xbb", "test")
    assert mem.read(1, 0x110, 2, "test") == b"\xaa\xbb"


def test_access_outside_a_region_is_one_clear_error():
    from npu.errors import InputError
    mem = AddressSpace.build({1: 0}, {1: 16})
    with pytest.raises(InputError, match="outside its 16 bytes"):
        mem.read(1, 8, 16, "IFM")


def _tiny(generator, model_cache, acc, sysconf, mode):
    return generator.build_blob("tiny", acc, sysconf, mode, model_cache)


def test_cli_writes_outputs_and_keeps_timing(generator, model_cache, tmp_path, capsys):
    blob = _tiny(generator, model_cache, "ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram")
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 32, 32, 8), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    common = ["run", str(blob), "--accelerator", "ethos-u55-128", "--system-config",
              "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram", "--json"]
    assert npu_main(common) == 0
    plain = capsys.readouterr().out
    assert npu_main(common + ["--functional", "--input", str(tmp_path / "x.npy"),
                              "--outputs", str(tmp_path / "out")]) == 0
    functional = capsys.readouterr().out
    import json
    a, b = json.loads(plain), json.loads(functional)
    assert a["cycles"] == b["cycles"] and b["functional"]["kernels"] == 3
    assert np.load(tmp_path / "out" / "output_0.npy").size == 10


@pytest.mark.parametrize("mode", ["Sram_Only", "Dedicated_Sram_384KB"])
def test_cli_u85_outputs_equal_litert(generator, model_cache, tmp_path, capsys, mode):
    """`npu run --functional` on the U85 blob (fast-format weights in Sram_Only, weights staged
    in the fast scratch by DMA in Dedicated_Sram_384KB) writes LiteRT's bytes."""
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    blob = _tiny(generator, model_cache, "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", mode)
    x = np.random.default_rng(1).integers(-128, 128, size=(1, 32, 32, 8), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    code = npu_main(["run", str(blob), "--accelerator", "ethos-u85-256", "--system-config",
                     "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", mode, "--functional",
                     "--input", str(tmp_path / "x.npy"), "--outputs", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr()
    it = interpreter.Interpreter(model_path=str(model_cache / "tiny.tflite"),
                                 experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    want = it.get_tensor(it.get_output_details()[0]["index"])
    assert np.load(tmp_path / "out" / "output_0.npy").tobytes() == want.tobytes()


def test_wrong_input_size_exits_2(generator, model_cache, tmp_path, capsys):
    blob = _tiny(generator, model_cache, "ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram")
    np.save(tmp_path / "x.npy", np.zeros((1, 8), dtype=np.int8))
    code = npu_main(["run", str(blob), "--accelerator", "ethos-u55-128", "--system-config",
                     "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram", "--functional",
                     "--input", str(tmp_path / "x.npy"), "--outputs", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "input 0" in err[0]
    assert not (tmp_path / "out").exists()


def test_float32_accumulation_is_exact_at_its_bound():
    """The worst case the float32 path accepts: 257 terms of 255 x 256 sums below 2**24."""
    from npu.functional.kernels.conv import EXACT_FLOAT32_TERMS, conv2d
    n = EXACT_FLOAT32_TERMS
    ifm = np.full((1, 1, n), 255, dtype=np.int64)
    w = np.full((2, 1, 1, n), 256, dtype=np.int32)
    w[1] = -256
    acc = conv2d(ifm, w, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1))
    assert acc.ravel().tolist() == [255 * 256 * n, -255 * 256 * n]
    assert 255 * 256 * (n + 1) >= 1 << 24          # one more term would leave float32's exact range


def test_npu_average_equals_the_reference_division_for_every_int8_sum():
    """Average pooling without padding: Vela programs OFM_SCALE = ((1 << (31+k)) + (1 << k)) // n,
    shift 31+k (k = bit length of n-1) with natural rounding, where TFLite divides by n rounding
    half away from zero. The two agree on every sum n int8 values can reach, n = 1..256."""
    for n in range(1, 257):
        k = (n - 1).bit_length()
        scale, shift = ((1 << (31 + k)) + (1 << k)) // n, 31 + k
        s = np.arange(-255 * n, 255 * n + 1, dtype=np.int64)
        npu_avg = rescale(s, scale, shift, "ROUND_MODE_NATURAL")
        reference = np.where(s >= 0, (s + n // 2) // n, -((-s + n // 2) // n))
        assert np.array_equal(npu_avg, reference), n

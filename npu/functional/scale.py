"""The output stage: the scale stream, the rounding modes, the OFM zero point and clamps.

Facts:
- Scale stream (Vela ``encode_bias``): 10 bytes per OFM channel, little-endian:
  a signed 40-bit bias, an unsigned 32-bit scale and a 6-bit shift.
- ``round_mode`` (OFM/IFM precision registers) selects how ``x * scale >> shift`` rounds:
  ``ROUND_MODE_DBL`` rounds twice as TensorFlow Lite's ``MultiplyByQuantizedMultiplier``
  does (a saturating rounding doubling high multiply at bit 31, then a rounding right shift
  by ``shift - 31``, ties away from zero); ``ROUND_MODE_TRUNCATE`` truncates toward zero;
  ``ROUND_MODE_NATURAL`` adds half and floors (ties toward +infinity).
- A global OFM scale (``OFM_SCALE_MODE_GLOBAL``) comes from ``NPU_SET_OFM_SCALE``.
- 32-bit IFMs of elementwise operations (int32): the NPU applies only the
  shift of ``OFM_SCALE``, not its multiplier, to the 64-bit result. Two of Vela 5.2.0's
  lowerings rest on that: int8 softmax programs a Q31 multiply (gemmlowp's
  SaturatingRoundingDoublingHighMul, a product divided by 2**31) as an int32 MUL with
  ``OFM_SCALE`` = 2**30 / shift 31, and LeakyReLU with a negative alpha multiplies an int32
  IFM by the quantised alpha itself while programming the same multiplier again as the OFM
  scale (``tflite_graph_optimiser.py``). The shift rounds half up (DBL and NATURAL: the
  doubling high multiply's rounding) or toward zero (TRUNCATE).
- A reduce sum (``POOLING_MODE_REDUCE_SUM``) over a 32-bit IFM gets the whole ``OFM_SCALE``,
  multiplier and shift. Vela 5.1.0 lowers a TOSA MATMUL for the U55 (ExecuTorch's
  ``torch.mm``) to a transpose, an int8 MUL into int32, and a reduce sum whose OFM_SCALE
  (measured: scale 8421505, shift 32) carries the whole output rescale, which would give 0
  with the shift alone; ExecuTorch runs that lowering on the Corstone-300 FVP in its CI
  (pytorch/executorch backends/arm/test/ops/test_mm.py, ``test_mm_u55_INT``). With the
  multiplier applied, an ExecuTorch ``add_mul`` stream equals the TOSA reference model's
  output bit for bit. The softmax streams of tests/npu/test_functional_softmax.py (Vela
  5.2.0's, and the older Vela's int32 reduce sum) give the same outputs either way.
- ``ACTIVATION_MIN``/``MAX`` are 16-bit: on a 32-bit OFM they do not clamp unless
  ``activation_clip_range`` forces an 8/16-bit range (Vela programs -32768..32767 for int32
  OFMs whose values, the softmax's exp sums, reach 2**31).
- ``OFM_ZERO_POINT`` follows the same rule: a 32-bit OFM gets it only where
  ``activation_clip_range`` forces an 8/16-bit range. Vela 5.2.0's int8 softmax programs
  zero point 127 with FORCE_INT8 on the 32-bit OFM that indexes the exp table; the Vela 2.x/3.x
  softmax (``softmax.py``, ``no_scale_quant`` keeps the IFM's zero point) programs the IFM's
  zero point on every int32 intermediate (SHR, reduce sum, CLZ, SUB, SHL) and reads each back
  with zero point 0, so adding it would turn CLZ's 12 into a shift of 79. Without the zero
  point that stream computes the output TFLM's reference kernels give (docs/npu.md §3).
"""
from __future__ import annotations

import numpy as np

from npu.errors import InputError

SCALE_ENTRY = 10          # bytes per channel in the scale stream


def decode_scales(stream: bytes, channels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bias int64, scale int64, shift int64) per channel."""
    if len(stream) < channels * SCALE_ENTRY:
        raise InputError(None, f"scale stream of {len(stream)} bytes: {channels} OFM channels "
                         f"need {channels * SCALE_ENTRY}")
    raw = np.frombuffer(stream[:channels * SCALE_ENTRY], dtype=np.uint8).reshape(channels, SCALE_ENTRY)
    le = raw.astype(np.int64)
    bias = sum(le[:, i] << (8 * i) for i in range(5))
    bias = np.where(bias >= 1 << 39, bias - (1 << 40), bias)
    scale = sum(le[:, 5 + i] << (8 * i) for i in range(4))
    shift = le[:, 9] & 0x3F
    return bias, scale, shift


def _trunc_shift(x: np.ndarray, n) -> np.ndarray:
    """x / 2**n rounded toward zero (C integer division by a power of two): a negative x
    gets 2**n - 1 added before the arithmetic shift."""
    bias = (x >> 63) & ((np.int64(1) << n) - 1)
    return (x + bias) >> n


def _round_shift_away(x: np.ndarray, n) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2**n, ties away from zero. In place on x (int64).
    Adding half (less one below zero) and shifting arithmetically is the same rounding."""
    n = np.asarray(n, dtype=np.int64)
    if not n.any():
        return x
    half = np.where(n > 0, np.int64(1) << np.maximum(n - 1, 0), 0)
    below = x >> 63                                       # -1 below zero, else 0
    if not n.all():
        below &= -(n > 0).astype(np.int64)                # no correction where n == 0
    x += half
    x += below
    x >>= n
    return x


def _double_round(x: np.ndarray, scale, shift, inplace: bool = False) -> np.ndarray:
    """TensorFlow Lite's MultiplyByQuantizedMultiplier with multiplier `scale` (Q31) and
    right shift `shift - 31` (a left shift when `shift` < 31).

    SaturatingRoundingDoublingHighMul's nudge-and-truncate, (ab + nudge) / 2**31 with
    nudge = 2**30 (ab >= 0) or 1 - 2**30 (ab < 0), equals floor((ab + 2**30) / 2**31) for
    every ab: ties round toward +infinity. The saturating case (both operands INT32_MIN)
    cannot occur: the scale is unsigned and below 2**31."""
    scale = np.asarray(scale, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(31 - shift, 0)
    right = np.maximum(shift - 31, 0)
    ab = (x << left) if left.any() else (x if inplace else x.copy())
    ab *= scale
    ab += np.int64(1 << 30)
    ab >>= 31
    return _round_shift_away(ab, right)


def rescale(x: np.ndarray, scale, shift, round_mode: str, inplace: bool = False) -> np.ndarray:
    """x * scale / 2**shift with the stream's rounding mode (int64 in, int64 out);
    `inplace` lets it reuse x's memory."""
    x = x.astype(np.int64, copy=False)
    if round_mode.endswith("DBL"):
        return _double_round(x, scale, shift, inplace and x.flags.writeable)
    return round_shift(x * np.asarray(scale, dtype=np.int64), shift, round_mode)     # TRUNCATE, NATURAL


def round_shift(x: np.ndarray, n, round_mode: str) -> np.ndarray:
    """x / 2**n (n >= 0, scalar or per element) rounded half up, or toward zero for
    ``ROUND_MODE_TRUNCATE``: the 32-bit output stage and the SHR shifter."""
    x = x.astype(np.int64, copy=False)
    n = np.asarray(n, dtype=np.int64)
    if round_mode.endswith("TRUNCATE"):
        return _trunc_shift(x, n)
    half = np.where(n > 0, np.int64(1) << np.maximum(n - 1, 0), 0)
    return (x + half) >> n


# activation_clip_range: the range an output is clamped to besides ACTIVATION_MIN/MAX
CLIP_RANGES = {"ACTIVATION_CLIP_RANGE_FORCE_UINT8": (0, 255), "ACTIVATION_CLIP_RANGE_FORCE_INT8": (-128, 127),
               "ACTIVATION_CLIP_RANGE_FORCE_INT16": (-32768, 32767)}


def to_ofm(values: np.ndarray, zero_point: int, lo: int, hi: int, bits: int, signed: bool,
           clip_range: str = "") -> np.ndarray:
    """Add the OFM zero point, clamp to the activation range and the OFM type's range; a 32-bit
    OFM without a forced 8/16-bit clip range gets neither, only int32 saturation (module docstring)."""
    tmin, tmax = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if clip_range in CLIP_RANGES:
        tmin, tmax = max(tmin, CLIP_RANGES[clip_range][0]), min(tmax, CLIP_RANGES[clip_range][1])
    elif bits == 32:
        lo, hi, zero_point = tmin, tmax, 0
    out = values + zero_point
    np.maximum(out, max(lo, tmin), out=out)
    return np.minimum(out, min(hi, tmax), out=out)

"""The Ethos-U85 output stage: the scale records, the rounding modes, the double-round point.

Facts (ethos-u-vela 5.2.0 sources):
- Scale stream (``ethos_u85_weight_encoder.cpp``, ``EncodeBias32``/``EncodeBias48``,
  ``EthosU85ScaleSource``): 10 bytes per output channel, little-endian, in channel order.
  ``ACC_FORMAT_I32``: a signed 32-bit bias (bytes 0-3), an unsigned 31-bit scale (bytes 4-7),
  a 6-bit shift (byte 8), byte 9 zero. ``ACC_FORMAT_I48``: a signed 48-bit bias (bytes 0-5),
  an unsigned 15-bit scale (bytes 6-7), the shift (byte 8). The record count is rounded up
  to the micro-block depth rounded up to 16; the extra records are zero.
- ``NPU_SET_OFM_SCALE`` / ``NPU_SET_IFM_SCALE`` / ``NPU_SET_IFM2_SCALE`` carry a 31-bit scale, a
  6-bit shift (0-63), a 5-bit double-round point ``dbl_rnd`` and a rounding mode
  (``ethos_u85_interface.hpp``); the OFM rounding mode applies to per-channel scales too.
- The rounding (Vela's own model of the NPU's scaling, ``Scale`` in
  ``ethosu/regor/compiler/graphir_optimiser.cpp``, which the compiler uses to fold constants the
  way the NPU computes them): ``(v * scale + round) >> shift`` with ``round`` =
  2**(shift-1) (NATURAL); less 1 for v < 0 (SYMMETRIC: ties away from zero); 0 or
  2**shift - 1 for v < 0 (TRUNCATE_TO_ZERO); 0 (TRUNCATE_TO_LOWER); and for the double modes
  2**(shift-1) plus D = 2**(30 - dbl_rnd) when shift > 31 - dbl_rnd: +D (DOUBLE_ASYMMETRIC),
  +D for v >= 0 and -D below (DOUBLE_SYMMETRIC). DOUBLE_SYMMETRIC with dbl_rnd 0 is TensorFlow
  Lite's MultiplyByQuantizedMultiplier; dbl_rnd 20 (15 for 16-bit) is its add/sub input
  scaling of a value shifted left by 20 (15) bits.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from npu.errors import InputError

RECORD = 10
MODES = ("DOUBLE_SYMMETRIC", "NATURAL", "DOUBLE_ASYMMETRIC", "SYMMETRIC", "TRUNCATE_TO_ZERO",
         "TRUNCATE_TO_LOWER")


def decode_scales(stream: bytes, channels: int, acc48: bool, where: str) -> tuple[np.ndarray, ...]:
    """(bias, scale, shift) int64 arrays of `channels` records."""
    if len(stream) < channels * RECORD:
        raise InputError(None, f"{where}: {len(stream)} bytes; {channels} OFM channels need "
                               f"{channels * RECORD} ({RECORD}-byte records)")
    le = np.frombuffer(stream[:channels * RECORD], dtype=np.uint8).reshape(channels, RECORD).astype(np.int64)
    bias_bytes, scale_bytes = (6, 2) if acc48 else (4, 4)
    bias = sum(le[:, i] << (8 * i) for i in range(bias_bytes))
    top = 1 << (8 * bias_bytes - 1)
    bias = np.where(bias >= top, bias - 2 * top, bias)
    scale = sum(le[:, bias_bytes + i] << (8 * i) for i in range(scale_bytes))
    scale &= (1 << (8 * scale_bytes - 1)) - 1          # uint31 / uint15
    shift = le[:, 8] & 0x3F
    return bias, scale, shift


def mode_name(field: str) -> str:
    """ROUND_MODE_OFM_DOUBLE_SYMMETRIC -> DOUBLE_SYMMETRIC (IFM modes likewise)."""
    for prefix in ("ROUND_MODE_OFM_", "ROUND_MODE_IFM_"):
        if field.startswith(prefix):
            return field[len(prefix):]
    return field


@dataclass(frozen=True)
class Rounding:
    """One scaling, ready to apply: ``(v * scale + add) >> shift`` with ``add`` = ``rnd`` for
    v >= 0 and ``rnd - neg`` below zero. Per-channel values are arrays over the last axis."""
    scale: object
    shift: object
    rnd: object
    neg: object
    identity: bool = False

    def __call__(self, v: np.ndarray) -> np.ndarray:
        if self.identity:
            return v
        if self.neg is not None:
            below = v >> 63                  # -1 below zero, else 0: a mask for `neg`
            below &= self.neg
        prod = v * self.scale
        if self.rnd is not None:
            prod += self.rnd
        if self.neg is not None:
            prod -= below
        prod >>= self.shift
        return prod


def _uniform(a: np.ndarray):
    """A per-channel array whose values are all equal, as one int (numpy broadcasts a scalar
    faster)."""
    return int(a.flat[0]) if a.size and (a == a.flat[0]).all() else a


def rounding(scale, shift, mode: str, dbl_rnd: int = 0) -> Rounding:
    if mode not in MODES:
        raise ValueError(mode)
    scale = np.asarray(scale, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    half = np.where(shift > 0, np.int64(1) << np.maximum(shift - 1, 0), 0)
    zero = np.zeros_like(half)
    if mode == "TRUNCATE_TO_LOWER":
        rnd, neg = zero, zero
    elif mode == "NATURAL":
        rnd, neg = half, zero
    elif mode == "SYMMETRIC":
        rnd, neg = half, (shift > 0).astype(np.int64)          # shift 0 leaves nothing to round
    elif mode == "TRUNCATE_TO_ZERO":
        rnd, neg = zero, -((np.int64(1) << shift) - 1)
    else:
        d = np.where(shift > 31 - dbl_rnd, np.int64(1) << (30 - dbl_rnd), 0)
        rnd, neg = half + d, (2 * d if mode == "DOUBLE_SYMMETRIC" else zero)
    scale, shift, rnd, neg = (_uniform(a) for a in (scale, shift, rnd, neg))
    identity = isinstance(scale, int) and scale == 1 and isinstance(shift, int) and shift == 0
    return Rounding(scale, shift, None if isinstance(rnd, int) and rnd == 0 else rnd,
                    None if isinstance(neg, int) and neg == 0 else neg, identity)


@functools.lru_cache(maxsize=4096)
def global_rounding(scale: int, shift: int, mode: str, dbl_rnd: int = 0) -> Rounding:
    """A register's scaling (OFM_SCALE, IFM_SCALE, IFM2_SCALE), built once."""
    return rounding(scale, shift, mode, dbl_rnd)


@functools.lru_cache(maxsize=1024)
def channel_scaling(stream: bytes, channels: int, acc48: bool, mode: str, dbl_rnd: int,
                    where: str) -> tuple[np.ndarray, Rounding]:
    """(bias, rounding) of a scale stream under the OFM rounding mode, built once per stream."""
    bias, scale, shift = decode_scales(stream, channels, acc48, where)
    bias.flags.writeable = False
    return bias, rounding(scale, shift, mode, dbl_rnd)


def rescale(v: np.ndarray, scale, shift, mode: str, dbl_rnd: int = 0) -> np.ndarray:
    """(v * scale + round) >> shift for each element (int64 in and out); scale and shift may
    be per-channel arrays broadcasting against v's last axis."""
    return rounding(scale, shift, mode, dbl_rnd)(np.array(v, dtype=np.int64))

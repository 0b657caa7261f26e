"""Elementwise add, sub, mul, min, max on zero-point-corrected operands.

Input scaling (``scale_mode`` in ``NPU_SET_IFM_PRECISION``), as Vela's scaling.py programs it:
- ``IFM_SCALE_MODE_OPA_OPB_16``: each operand times its 16-bit ``OPA_SCALE``/``OPB_SCALE``.
- ``IFM_SCALE_MODE_OPA_32`` / ``OPB_32`` ("advanced" add/sub): the named operand is scaled
  by the 32-bit ``OPA_SCALE`` with its shift, the other passes unscaled. The scaled operand
  is an 8-bit (16-bit) input shifted left by 20 (15) bits before the rounding multiply, and
  the unscaled one is that shifted input halved, as TensorFlow Lite's ADD computes it.
The sum (or product) is then rescaled by ``OFM_SCALE`` with the OFM rounding mode.

The integer modes, as Vela 5.2.0 lowers int8 softmax with them (int32 operands, no scaling):
- ``SHR``: IFM arithmetically shifted right by IFM2, rounded with the OFM rounding mode
  (NATURAL: half up, as gemmlowp's RoundingDivideByPOT on the non-negative values there).
- ``SHL``: IFM shifted left by IFM2; the OFM stage saturates to int32.
- ``CLZ``: the count of leading zero bits of the 32-bit IFM (32 for zero); IFM2 is not read.
Shift amounts outside 0..31 (SHL) or 0..63 (SHR) are not modelled: refused.
"""
from __future__ import annotations

import numpy as np

from npu.functional.scale import rescale, round_shift


def input_shift(bits: int) -> int:
    return 20 if bits == 8 else 15


def scale_operands(a, b, scale_mode: str, opa: tuple[int, int], opb: int, bits: int, round_mode: str):
    """The two operands after input scaling, as int64."""
    if scale_mode.endswith("OPA_32") or scale_mode.endswith("OPB_32"):
        k = input_shift(bits)
        scale, shift = opa

        def scaled(v):
            return rescale(v << k, scale, shift + k, round_mode)
        if scale_mode.endswith("OPA_32"):
            return scaled(a), b << (k - 1)
        return a << (k - 1), scaled(b)
    return a * opa[0], b * opb


MODES = ("ADD", "SUB", "MUL", "MIN", "MAX", "SHL", "SHR", "CLZ")
UNARY = ("CLZ",)
SHIFT_RANGE = {"SHL": 31, "SHR": 63}


class ShiftError(ValueError):
    """A shift amount outside the modelled range: the engine turns it into one line."""


def count_leading_zeros(a: np.ndarray) -> np.ndarray:
    """CLZ of int32 values held in int64: 0 for negatives, 32 for zero."""
    _, exponent = np.frexp(np.maximum(a, 0).astype(np.float64))  # exact: |a| < 2**31 < 2**53
    return np.where(a < 0, 0, 32 - exponent).astype(np.int64)


def shift(mode: str, a, b, round_mode: str) -> np.ndarray:
    kind = mode.rsplit("_", 1)[1]
    if b.size and (b.min() < 0 or b.max() > SHIFT_RANGE[kind]):
        raise ShiftError(f"{kind} by {int(b.min())}..{int(b.max())}: shift amounts outside "
                         f"0..{SHIFT_RANGE[kind]} are not modelled")
    if kind == "SHL":
        return a << b
    return round_shift(a, b, round_mode)


def combine(mode: str, a, b, round_mode: str = "") -> np.ndarray:
    if mode.endswith("ADD"):
        return a + b
    if mode.endswith("SUB"):
        return a - b
    if mode.endswith("MUL"):
        return a * b
    if mode.endswith("MIN"):
        return np.minimum(a, b)
    if mode.endswith("MAX"):
        return np.maximum(a, b)
    if mode.endswith(("SHL", "SHR")):
        return shift(mode, a, b, round_mode)
    if mode.endswith("CLZ"):
        return count_leading_zeros(a)
    raise ValueError(mode)                  # the engine checks MODES first

"""Elementwise add, sub, mul, min, max on zero-point-corrected operands.

Input scaling (``scale_mode`` in ``NPU_SET_IFM_PRECISION``), as Vela's scaling.py programs it:
- ``IFM_SCALE_MODE_OPA_OPB_16``: each operand times its 16-bit ``OPA_SCALE``/``OPB_SCALE``.
- ``IFM_SCALE_MODE_OPA_32`` / ``OPB_32`` ("advanced" add/sub): the named operand is scaled
  by the 32-bit ``OPA_SCALE`` with its shift, the other passes unscaled. The scaled operand
  is an 8-bit (16-bit) input shifted left by 20 (15) bits before the rounding multiply, and
  the unscaled one is that shifted input halved, as TensorFlow Lite's ADD computes it.
The sum (or product) is then rescaled by ``OFM_SCALE`` with the OFM rounding mode.
"""
from __future__ import annotations

import numpy as np

from npu.functional.scale import rescale


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


MODES = ("ADD", "SUB", "MUL", "MIN", "MAX")


def combine(mode: str, a, b) -> np.ndarray:
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
    raise ValueError(mode)                  # the engine checks MODES first

"""Thumb encodings built, for code the debugger places in the guest (weaklink.run.irq's stub)."""
from __future__ import annotations

import struct


def movw_movt(rd: int, value: int) -> bytes:
    """MOVW then MOVT (Arm v7-M ARM, A7.7.76 T3 and A7.7.79 T1): rd = value."""
    out = b""
    for op, half in ((0xF240, value & 0xFFFF), (0xF2C0, value >> 16)):
        hw1 = op | (half >> 11 & 1) << 10 | half >> 12
        hw2 = (half >> 8 & 7) << 12 | rd << 8 | (half & 0xFF)
        out += struct.pack("<HH", hw1, hw2)
    return out

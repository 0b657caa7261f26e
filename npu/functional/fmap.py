"""Feature maps in memory: NHWC or NHCWB16, 8/16/32-bit, split in up to four tiles.

Facts (Ethos-U55/U65 register definitions as Vela writes them; Ethos-U85 lays these fields out alike):
- ``<FM>_BASE0..3`` are the tiles: tile 0 is HEIGHT0 x WIDTH0 rows/columns; tile 1 is right
  of it (rows counted by HEIGHT1); tiles 2 and 3 are below tiles 0 and 1.
- NHWC: byte offset ``y*STRIDE_Y + x*STRIDE_X + c*element``; NHCWB16: channels in bricks of
  16, ``y*STRIDE_Y + x*STRIDE_X + (c // 16)*STRIDE_C + (c % 16)*element``.
- ``ZERO_POINT`` is a 16-bit field, read as signed for signed activations.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from npu.emulate.ops import BITS, field
from npu.functional.memory import AddressSpace

DTYPES = {(8, True): "<i1", (8, False): "<u1", (16, True): "<i2", (16, False): "<u2",
          (32, True): "<i4", (32, False): "<u4"}


def signed16(v: int) -> int:
    return v - 0x10000 if v & 0x8000 else v


@dataclass(frozen=True)
class FeatureMap:
    name: str                       # IFM, IFM2, OFM
    region: int
    bases: tuple[int, int, int, int]
    h0: int
    h1: int
    w0: int
    strides: tuple[int, int, int]   # y, x, c in bytes
    bits: int
    signed: bool
    brick: bool                     # NHCWB16
    zero_point: int
    round_mode: str
    scale_mode: str

    @classmethod
    def from_regs(cls, regs: dict, name: str) -> "FeatureMap":
        p = f"NPU_SET_{name}_"
        prec = regs.get(p + "PRECISION", {})
        signed = prec.get("activation_type", "ACTIVATION_TYPE_SIGNED").endswith("SIGNED") and \
            not prec.get("activation_type", "").endswith("UNSIGNED")
        zp = field(regs, p + "ZERO_POINT", "zero_point")
        return cls(name, field(regs, p + "REGION", "region"),
                   tuple(field(regs, f"{p}BASE{i}", "addr") for i in range(4)),
                   field(regs, p + "HEIGHT0_M1", "height_m1") + 1, field(regs, p + "HEIGHT1_M1", "height_m1") + 1,
                   field(regs, p + "WIDTH0_M1", "width_m1") + 1,
                   tuple(field(regs, f"{p}STRIDE_{a}", "addr") for a in "YXC"),
                   BITS.get(prec.get("activation_precision", ""), 8), signed,
                   prec.get("activation_format", "").endswith("NHCWB16"),
                   signed16(zp) if signed else zp, prec.get("round_mode", "ROUND_MODE_DBL"),
                   prec.get("scale_mode", ""))

    @property
    def element(self) -> int:
        return self.bits // 8

    @functools.lru_cache(maxsize=1024)
    def offsets(self, h: int, w: int, c: int) -> tuple[np.ndarray, int, int]:
        """Byte offset in the region of every element byte, shape (h, w, c, element), and
        the lowest and one-past-highest offset. Cached: a stream repeats the same feature-map
        layouts op after op."""
        sy, sx, sc = self.strides
        y, x, ch = np.arange(h), np.arange(w), np.arange(c)
        right = x >= self.w0
        below = y[:, None] >= np.where(right, self.h1, self.h0)[None, :]          # (h, w)
        tile = right[None, :].astype(np.int64) + 2 * below
        ty = y[:, None] - np.where(below, np.where(right, self.h1, self.h0)[None, :], 0)
        tx = x - np.where(right, self.w0, 0)
        base = np.asarray(self.bases, dtype=np.int64)[tile]
        plane = base + ty * sy + tx[None, :] * sx                                  # (h, w)
        if self.brick:
            cpart = (ch // 16) * sc + (ch % 16) * self.element
        else:
            cpart = ch * self.element
        out = plane[:, :, None, None] + cpart[None, None, :, None] + np.arange(self.element)
        out.flags.writeable = False
        return out, int(out.min()), int(out.max()) + 1

    def _strided(self, region: np.ndarray, lo: int, h: int, w: int, c: int) -> np.ndarray | None:
        """A view of an 8-bit map in one tile, without copying: NHWC as (h, w, c), NHCWB16 as
        (h, w, c // 16, 16). None when the map spans tiles or is not a whole brick."""
        if self.bits != 8 or h > self.h0 or w > self.w0 or (self.brick and c % 16):
            return None
        sy, sx, sc = self.strides
        shape, strides = ((h, w, c // 16, 16), (sy, sx, sc, 1)) if self.brick else ((h, w, c), (sy, sx, 1))
        return np.ndarray(shape, np.uint8, buffer=region, offset=self.bases[0], strides=strides)

    def read(self, mem: AddressSpace, h: int, w: int, c: int, what: str, op: str = "", cmd_offset: int = 0
             ) -> np.ndarray:
        """The (h, w, c) values as int64."""
        idx, lo, hi = self.offsets(h, w, c)
        mem.check(self.region, lo, hi, what)
        mem.record(op, cmd_offset, self.region, lo, hi, self.name, write=False)
        region = mem.region(self.region, what)
        view = self._strided(region, lo, h, w, c)
        if view is not None:
            return view.view(DTYPES[(8, self.signed)]).reshape(h, w, c).astype(np.int64)
        raw = region[idx]                                                         # (h, w, c, element)
        return np.ascontiguousarray(raw).view(DTYPES[(self.bits, self.signed)])[..., 0].astype(np.int64)

    def write(self, mem: AddressSpace, values: np.ndarray, what: str, op: str, cmd_offset: int):
        h, w, c = values.shape
        idx, lo, hi = self.offsets(h, w, c)
        mem.check(self.region, lo, hi, what)
        region = mem.region(self.region, what)
        view = self._strided(region, lo, h, w, c)
        if view is not None:
            view[...] = values.astype(DTYPES[(8, self.signed)]).view(np.uint8).reshape(view.shape)
        else:
            data = values.astype(DTYPES[(self.bits, self.signed)]).view(np.uint8).reshape(idx.shape)
            region[idx] = data
        mem.record(op, cmd_offset, self.region, lo, hi, self.name)

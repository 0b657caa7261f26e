"""Memory as bytes: each region is a window on the address space at its base address.

Regions whose [base, base + size) ranges overlap share their bytes, as on the SoC: a fast
scratch placed over the tensor arena sees (and overwrites) the arena's bytes. Every access
is checked against the region's size; the check names the operation and the range.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npu.errors import InputError
from npu.records import Record


@dataclass(frozen=True)
class Access(Record):
    """One NPU read or write: which operation, which region, which absolute address range."""
    op: str
    offset: int           # command-stream offset of the operation
    seq: int              # the operation's place in execution order
    region: int
    start: int            # absolute addresses
    end: int
    what: str = ""        # IFM, OFM, weights, DMA destination, ...

    JSON = ("op", "stream_offset=offset", "what")



@dataclass
class AddressSpace:
    bases: dict[int, int]                       # region -> base address
    sizes: dict[int, int]                       # region -> bytes
    views: dict[int, np.ndarray] = field(default_factory=dict)
    writes: list[Access] = field(default_factory=list)
    reads: list[Access] = field(default_factory=list)
    seq: int = 0                                # the operation being executed

    @classmethod
    def build(cls, bases: dict[int, int], sizes: dict[int, int]) -> "AddressSpace":
        space = cls(dict(bases), dict(sizes))
        spans = sorted((bases[r], bases[r] + sizes[r], r) for r in sizes if sizes[r] > 0)
        segments: list[list] = []               # [start, end, regions]
        for start, end, r in spans:
            if segments and start < segments[-1][1]:
                segments[-1][1] = max(segments[-1][1], end)
                segments[-1][2].append(r)
            else:
                segments.append([start, end, [r]])
        for start, end, regions in segments:
            try:                                # calloc: pages are touched only when used
                backing = np.zeros(end - start, dtype=np.uint8)
            except MemoryError:
                raise InputError(None, f"regions {regions} at 0x{start:x} need {end - start} bytes of "
                                       "memory for a functional run, more than this host can give") from None
            for r in regions:
                space.views[r] = backing[bases[r] - start:bases[r] - start + sizes[r]]
        return space

    def region(self, r: int, what: str) -> np.ndarray:
        view = self.views.get(r)
        if view is None:
            raise InputError(None, f"{what}: region {r} has no base address or size for a functional run")
        return view

    def check(self, r: int, lo: int, hi: int, what: str):
        size = self.sizes.get(r, 0)
        if lo < 0 or hi > size:
            raise InputError(None, f"{what}: bytes {lo}..{hi} of region {r} are outside its {size} bytes")

    def load(self, r: int, offset: int, data: bytes, what: str):
        self.check(r, offset, offset + len(data), what)
        self.region(r, what)[offset:offset + len(data)] = np.frombuffer(data, dtype=np.uint8)

    def read(self, r: int, offset: int, length: int, what: str) -> bytes:
        self.check(r, offset, offset + length, what)
        return self.region(r, what)[offset:offset + length].tobytes()

    def record(self, op: str, cmd_offset: int, r: int, lo: int, hi: int, what: str = "", write: bool = True):
        base = self.bases.get(r, 0)
        (self.writes if write else self.reads).append(
            Access(op, cmd_offset, self.seq, r, base + lo, base + hi, what))

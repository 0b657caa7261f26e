"""What a queried symbol holds at reset, and where that value points.

An initialised object's value is the PROGBITS bytes of its section in the file (the loader
copies them from the LMA); .bss and NOLOAD sections are NOBITS and start as zero
(anchors_ecosystem_style.md A1). Integers are little-endian: the Corstone Cortex-M cores run
little-endian (ELFDATA2LSB is checked when the file is read).
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record
from weaklink.analyze.addresses import holder
from weaklink.analyze.regions import RegionMap
from weaklink.read import elfstructs as S
from weaklink.read.image import Image, Symbol

VALUE_SIZES = (1, 2, 4, 8)
POINTER_SIZE = 4            # ELF32: a data pointer is one 32-bit word


@dataclass(frozen=True, slots=True)
class PointsTo(Record):
    """Where a pointer's value points."""
    symbol: str | None      # the symbol whose [address, address + size) holds the target
    offset: int             # from that symbol, or from the region's origin when no symbol
    region: str | None


def initial_value(image: Image, sym: Symbol) -> int | None:
    """The symbol's reset value as an unsigned little-endian integer, for sizes 1, 2, 4, 8
    of data (objects and untyped labels); None for functions and other sizes."""
    if sym.size not in VALUE_SIZES or sym.type in (S.STT_FUNC, S.STT_SECTION, S.STT_FILE):
        return None
    raw = image.initial_bytes(sym)
    return None if raw is None else int.from_bytes(raw, "little")


def points_to(image: Image, regions: RegionMap, value: int | None, size: int) -> PointsTo | None:
    """Where a pointer-sized value points: the containing symbol (locals included: a
    `static` array is a typical target) and region. A null pointer points nowhere."""
    if value is None or size != POINTER_SIZE or value == 0:
        return None
    hit = holder(image, value)
    region = regions.name_at(value)
    if hit is not None:
        return PointsTo(hit[0], hit[1], region)
    if region is None:
        return None
    return PointsTo(None, value - regions.find(region).origin, region)

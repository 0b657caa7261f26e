"""Where a queried symbol's reset value (weaklink.read.layout: Image.initial_value) points."""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record
from weaklink.analyze.regions import RegionMap
from weaklink.read.image import Image

POINTER_SIZE = 4            # ELF32: a data pointer is one 32-bit word


@dataclass(frozen=True, slots=True)
class PointsTo(Record):
    """Where a pointer's value points."""
    symbol: str | None      # the symbol whose [address, address + size) holds the target
    offset: int             # from that symbol, or from the region's origin when no symbol
    region: str | None


def points_to(image: Image, regions: RegionMap, value: int | None, size: int) -> PointsTo | None:
    """Where a pointer-sized value points: the containing symbol (locals included: a
    `static` array is a typical target) and region. A null pointer points nowhere."""
    if value is None or size != POINTER_SIZE or value == 0:
        return None
    hit = image.symbol_at(value)
    region = regions.name_at(value)
    if hit is not None:
        return PointsTo(hit.name, hit.offset(value), region)
    if region is None:
        return None
    return PointsTo(None, value - regions.find(region).origin, region)

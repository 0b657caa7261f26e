"""Memory regions: named address ranges every address is placed in.

Three sources, best first: the map file's "Memory Configuration" (the linker script's MEMORY
command, as ld printed it), a board preset from npu/data/soc.toml (the Corstone MEMORY blocks of
executorch_ethosu.md §3), or the image's PT_LOAD program headers.
"""
from __future__ import annotations

import bisect
from collections import namedtuple
from functools import cached_property, partial

from weaklink.errors import InputError

# ld prints the catch-all region it uses for sections without `> REGION` (ldlang.c).
LD_DEFAULT_REGION = "*default*"


class Region(namedtuple("Region", "name origin length attributes", defaults=("",))):
    """A named address range [origin, origin + length). (Records on the analyze path are
    named tuples: importing dataclasses costs more than analysing a small image.)"""

    __slots__ = ()

    @property
    def end(self) -> int:
        return self.origin + self.length

    def to_json(self) -> dict:
        return {"name": self.name, "origin": self.origin, "length": self.length}


class RegionMap:
    """Regions plus where they came from ("map", "board", "segments")."""

    def __init__(self, regions: tuple[Region, ...], source: str):
        self.regions = regions
        self.source = source

    def __repr__(self) -> str:
        return f"RegionMap({self.regions!r}, {self.source!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RegionMap) and (self.regions, self.source) == (other.regions,
                                                                                 other.source)

    __hash__ = None

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.regions]

    @cached_property
    def _intervals(self) -> tuple[list[int], list[int]]:
        """(points, owner): every origin and end, sorted, and the region index (-1 for none)
        of each interval [points[i - 1], points[i]) (owner[0]: below the first point). The
        rule: the region with the highest origin at or below the address (the later one on
        equal origins) holds it if the address is below that region's end."""
        points = sorted({r.origin for r in self.regions} | {r.end for r in self.regions})
        order = sorted(range(len(self.regions)), key=lambda i: self.regions[i].origin)
        owner = [-1]
        for p in points:
            below = [i for i in order if self.regions[i].origin <= p]
            cand = below[-1] if below else -1
            owner.append(cand if cand >= 0 and p < self.regions[cand].end else -1)
        return points, owner

    def locate(self, addresses) -> list[int]:
        """Index of the region holding each address, -1 for none (see _intervals)."""
        points, owner = self._intervals
        return list(map(owner.__getitem__, map(partial(bisect.bisect_right, points), addresses)))

    def locate_array(self, addresses):
        """locate() for a numpy array of addresses, with numpy (large tables): an int64 array."""
        import numpy as np
        points, owner = self._intervals
        where = np.searchsorted(np.array(points, np.int64), np.asarray(addresses, np.int64),
                                side="right")
        return np.array(owner, np.int64)[where]

    def name_at(self, address: int) -> str | None:
        i = self.locate([address])[0]
        return self.regions[i].name if i >= 0 else None

    def find(self, name: str) -> Region | None:
        return next((r for r in self.regions if r.name == name), None)


def from_link_map(memory, path: str) -> RegionMap:
    """`memory`: ldmap MemoryRegion records. The *default* catch-all is not a memory."""
    regions = tuple(Region(m.name, m.origin, m.length, m.attributes)
                    for m in memory if m.name != LD_DEFAULT_REGION)
    if not regions:
        raise InputError(path, "map file has no Memory Configuration regions")
    return RegionMap(regions, "map")


def _soc_toml():
    import importlib.util
    from pathlib import Path
    # Locate the npu package without importing it (its __init__ may pull in the emulator).
    spec = importlib.util.find_spec("npu")
    if spec is None or not spec.submodule_search_locations:
        raise InputError(None, "board presets need the npu package (npu/data/soc.toml)")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "soc.toml"


def from_board(board: str) -> RegionMap:
    import tomllib
    path = _soc_toml()
    try:
        presets = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, f"cannot read board presets: {exc}") from None
    if board not in presets:
        raise InputError(path, f"unknown board {board!r}, expected one of "
                               f"{', '.join(sorted(presets))}")
    try:
        regions = tuple(Region(m["name"], int(m["origin"]), int(m["length"]))
                        for m in presets[board]["memories"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(path, f"[{board}] memories: bad entry ({exc})") from None
    return RegionMap(regions, "board")


def from_segments(image) -> RegionMap:
    """One region per PT_LOAD segment, named LOAD<n> in program-header order, spanning its
    virtual addresses [p_vaddr, p_vaddr + p_memsz)."""
    segs = image.load_segments()
    flags = {4: "r", 2: "w", 1: "x"}   # PF_R, PF_W, PF_X
    regions = tuple(
        Region(f"LOAD{i}", s.p_vaddr, s.p_memsz,
               "".join(c for bit, c in flags.items() if s.p_flags & bit))
        for i, s in enumerate(segs) if s.p_memsz > 0)
    return RegionMap(regions, "segments")



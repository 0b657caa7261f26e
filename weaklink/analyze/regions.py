"""Memory regions: named address ranges every address is placed in.

Three sources, best first: the map file's "Memory Configuration" (the linker script's MEMORY
command, as ld printed it), a board preset from npu/data/soc.toml (the Corstone MEMORY blocks of
executorch_ethosu.md §3), or the image's PT_LOAD program headers.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from weaklink.errors import InputError

# ld prints the catch-all region it uses for sections without `> REGION` (ldlang.c).
LD_DEFAULT_REGION = "*default*"


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    origin: int
    length: int
    attributes: str = ""

    @property
    def end(self) -> int:
        return self.origin + self.length

    def to_json(self) -> dict:
        return {"name": self.name, "origin": self.origin, "length": self.length}


@dataclass(frozen=True)
class RegionMap:
    """Regions plus where they came from ("map", "board", "segments")."""

    regions: tuple[Region, ...]
    source: str

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.regions]

    def locate(self, addresses: np.ndarray) -> np.ndarray:
        """Index of the region holding each address, -1 for none. Regions are searched by
        origin; when two overlap, the one with the higher origin wins."""
        if not self.regions:
            return np.full(len(addresses), -1, np.int64)
        origins = np.array([r.origin for r in self.regions], np.int64)
        ends = np.array([r.end for r in self.regions], np.int64)
        order = np.argsort(origins, kind="stable")
        addr = np.asarray(addresses, np.int64)
        pos = np.searchsorted(origins[order], addr, side="right") - 1
        cand = order[np.maximum(pos, 0)]
        return np.where((pos >= 0) & (addr < ends[cand]), cand, -1)

    def name_at(self, address: int) -> str | None:
        i = int(self.locate(np.array([address]))[0])
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


def _soc_toml() -> Path:
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
        Region(f"LOAD{i}", int(s["p_vaddr"]), int(s["p_memsz"]),
               "".join(c for bit, c in flags.items() if int(s["p_flags"]) & bit))
        for i, s in enumerate(segs) if int(s["p_memsz"]) > 0)
    return RegionMap(regions, "segments")



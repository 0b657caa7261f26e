"""Memory regions: named address ranges every address is placed in.

Three sources, best first: the map file's "Memory Configuration" (the linker script's MEMORY
command, as ld printed it), a board preset from npu/data/soc.toml (the Corstone MEMORY blocks),
or the image itself: its PT_LOAD program headers, and its section headers where the segments
do not reach (see `from_image`).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property, partial

from npu.records import Record

from weaklink.errors import InputError
from weaklink.read import elfstructs as S

SHF_TLS = 0x400                 # a thread-local section (its NOBITS template takes no memory)

# ld prints the catch-all region it uses for sections without `> REGION` (ldlang.c).
LD_DEFAULT_REGION = "*default*"


@dataclass(frozen=True, slots=True)
class Region(Record):
    """A named address range [origin, origin + length)."""
    name: str
    origin: int
    length: int
    attributes: str = ""

    JSON = ("name", "origin", "length")

    @property
    def end(self) -> int:
        return self.origin + self.length


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
    def intervals(self) -> tuple[list[int], list[int]]:
        """(points, owner): every origin and end, sorted, and the region index (-1 for none)
        of each interval [points[i - 1], points[i]) (owner[0]: below the first point). The
        rule: the region with the highest origin at or below the address (the first declared
        on equal origins, as `usage` counts sections) holds it if the address is below that
        region's end."""
        points = sorted({r.origin for r in self.regions} | {r.end for r in self.regions})
        order = sorted(range(len(self.regions)), key=lambda i: (self.regions[i].origin, -i))
        owner = [-1]
        for p in points:
            below = [i for i in order if self.regions[i].origin <= p]
            cand = below[-1] if below else -1
            owner.append(cand if cand >= 0 and p < self.regions[cand].end else -1)
        return points, owner

    def locate(self, addresses) -> list[int]:
        """Index of the region holding each address, -1 for none (see intervals)."""
        points, owner = self.intervals
        return list(map(owner.__getitem__, map(partial(bisect.bisect_right, points), addresses)))

    def name_at(self, address: int) -> str | None:
        i = self.locate([address])[0]
        return self.regions[i].name if i >= 0 else None

    def find(self, name: str) -> Region | None:
        return next((r for r in self.regions if r.name == name), None)


    def holding(self, start: int, end: int) -> list[int]:
        """Indices of every region holding all of [start, end), in declaration order."""
        return [i for i, r in enumerate(self.regions) if r.origin <= start and end <= r.end]


def usage(image, regions: RegionMap, notes: list[str]) -> dict[str, tuple[int, list]]:
    """Memory each region holds: {name: (used, [(section, address, size), ...])}.

    Map regions follow ld --print-memory-usage (ldlang.c lang_print_memory_size: a region's
    `current` minus its origin): a region counts the output sections placed in it at their
    run addresses, and the load images of the sections that run elsewhere (`AT> REGION`) at
    their load addresses, from its origin to the highest end. A section belongs to the region
    its script names; the map does not print that name, so where two regions hold the same
    addresses (Zephyr's mps3_an547 declares FLASH and ITCM at one origin, RAM and DTCM at
    another) it is counted in the first declared, and a note says so. Board and image regions
    count the bytes of the sections inside them."""
    placed: dict[int, list] = {}
    shared: dict[tuple[int, ...], None] = {}
    for i, sh in enumerate(image.elf.shdrs):
        if not sh.sh_flags & S.SHF_ALLOC or not sh.sh_size:
            continue
        if sh.sh_flags & SHF_TLS and sh.sh_type == S.SHT_NOBITS:
            continue
        name = image.elf.section_names[i]
        spans = [(name, sh.sh_addr)]
        lma = _load_address(image, sh)
        if regions.source == "map" and lma is not None and lma != sh.sh_addr:
            spans.append((f"{name} (load image)", lma))
        for label, start in spans:
            hit = regions.holding(start, start + sh.sh_size) if regions.source == "map" else []
            if len(hit) > 1:
                shared[tuple(hit)] = None
            r = hit[0] if hit else regions.locate([start])[0]
            if r >= 0:
                placed.setdefault(r, []).append((label, start, sh.sh_size))
    for hit in shared:
        names = [regions.regions[k].name for k in hit]
        notes.append(f"regions {' and '.join(names)} hold the same addresses: their sections are "
                     f"counted in {names[0]}, the first declared (the map does not name the "
                     "region a section was placed in)")
    out = {}
    for r, secs in placed.items():
        region = regions.regions[r]
        if regions.source == "map":
            used = max(a + n for _, a, n in secs) - region.origin
        else:
            used = sum(n for _, _, n in secs)
        out[region.name] = (used, sorted(secs, key=lambda s: -s[2]))
    return out


def _load_address(image, sh) -> int | None:
    """A section's load address: where the PT_LOAD segment holding its file bytes loads
    them (p_paddr); None for a section without file bytes (NOBITS) or outside every segment."""
    if sh.sh_type == S.SHT_NOBITS:
        return None
    for seg in image.load_segments():
        if seg.p_offset <= sh.sh_offset and sh.sh_offset + sh.sh_size <= seg.p_offset + seg.p_filesz \
                and seg.p_vaddr <= sh.sh_addr < seg.p_vaddr + max(seg.p_memsz, 1):
            return seg.p_paddr + sh.sh_offset - seg.p_offset
    return None


def from_link_map(memory, path: str) -> RegionMap:
    """`memory`: ldmap MemoryRegion records. The *default* catch-all is not a memory."""
    regions = tuple(Region(m.name, m.origin, m.length, m.attributes)
                    for m in memory if m.name != LD_DEFAULT_REGION)
    if not regions:
        raise InputError(path, "map file has no Memory Configuration regions")
    return RegionMap(regions, "map")


def from_board(board: str) -> RegionMap:
    """A preset's memories, or a SoC file's (FILE.toml in the schema of npu/data/soc.toml, or a
    Zephyr build's zephyr.dts), as npu's loader reads and checks them."""
    from npu.socfile import load_soc                # --board: the SoC loader and its TOML

    soc = load_soc(board)
    return RegionMap(tuple(Region(m.name, m.origin, m.length) for m in soc.memories), "board")


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




def from_image(image) -> RegionMap:
    """Regions of an image without a map or a board: one per PT_LOAD segment (from_segments),
    plus regions from the section headers for the allocated sections no segment holds.

    Segments alone miss memory: a linker script's PHDRS may put sections in a PT_NULL
    segment or none (ExecuTorch's Corstone scripts place .bss, the heap, the stack and the
    NOLOAD scratch and arena sections `:null`), and a segment spans the virtual addresses of
    its first sections only when the others' load addresses follow (`.data : AT(...)`).
    Those sections are grouped where they touch (the next starts within its alignment of
    the previous end) and each group is named after its sections, `.data+.bss`. TLS
    templates (.tbss) take no memory at their address and are left out."""
    base = from_segments(image)
    loose = []                  # (start, end, alignment, name, flags) of each section outside
    for i, sh in enumerate(image.elf.shdrs):
        if not sh.sh_flags & S.SHF_ALLOC or not sh.sh_size:
            continue
        if sh.sh_flags & SHF_TLS and sh.sh_type == S.SHT_NOBITS:
            continue
        inside = base.locate([sh.sh_addr])[0]
        if inside < 0 or sh.sh_addr + sh.sh_size > base.regions[inside].end:
            loose.append((sh.sh_addr, sh.sh_addr + sh.sh_size, max(sh.sh_addralign, 1),
                          image.elf.section_names[i], sh.sh_flags))
    if not loose:
        return base
    groups: list[list] = []
    for start, end, align, name, flags in sorted(loose):
        last = groups[-1] if groups else None
        if last is not None and start <= _align_up(last[1], align):
            last[1] = max(last[1], end)
            last[2].append(name)
            last[3] |= flags
        else:
            groups.append([start, end, [name], flags])
    extra = tuple(Region("+".join(names), start, end - start, _section_attributes(flags))
                  for start, end, names, flags in groups)
    return RegionMap(tuple(sorted(base.regions + extra, key=lambda r: r.origin)),
                     "segments+sections")


def _align_up(value: int, align: int) -> int:
    return -(-value // align) * align


def _section_attributes(flags: int) -> str:
    """`r`, `w`, `x` from SHF_WRITE and SHF_EXECINSTR (an allocated section is readable)."""
    return "r" + ("w" if flags & S.SHF_WRITE else "") + ("x" if flags & S.SHF_EXECINSTR else "")

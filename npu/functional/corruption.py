"""Silent corruption: NPU writes that land on bytes someone else still needs.

An owner is a range of the address space with a name: another NPU region, the model
(the vela_bin_stream blob the firmware keeps for every inference), or a symbol of the image.
A write through region R over an owner's bytes is a corruption when
- the owner is another region and a later operation reads those bytes through it (the data
  was still live: a feature map, staged weights, the input);
- the owner is the model, which every later inference reads again;
- the owner is a symbol other than the one backing region R itself (the firmware's data).
The judgement of the outputs (``wrong``) comes from comparing with a run whose regions are
placed apart (:func:`separate_placement`).
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.functional.memory import Access
from npu.records import Record

REGION, MODEL, SYMBOL = "region", "model", "symbol"
SEPARATE_BASE, SEPARATE_STRIDE = 0x1000_0000, 0x1000_0000


@dataclass(frozen=True)
class Owner:
    kind: str                 # region | model | symbol
    name: str                 # "region 1 (scratch)", "model (vela_bin_stream)", "temp_allocation_pool"
    start: int
    end: int
    region: int | None = None


@dataclass(frozen=True)
class Corruption(Record):
    write: Access
    owner: Owner
    start: int                # the overwritten range, absolute
    end: int
    read_by: Access | None    # the later read that needed the bytes (region owners)

    JSON = ("op=write.op", "stream_offset=write.offset", "region=write.region", "what=write.what",
            "start", "end", "owner=owner.name", "owner_kind=owner.kind", "read_by")

    @property
    def message(self) -> str:
        w = self.write
        text = (f"{w.op} at stream offset 0x{w.offset:06x} writes {w.what or 'data'} through region "
                f"{w.region} to 0x{self.start:08x}..0x{self.end:08x} ({self.end - self.start} bytes), "
                f"over {self.owner.name}")
        if self.read_by is not None:
            r = self.read_by
            text += (f", which {r.op} at stream offset 0x{r.offset:06x} then reads as its "
                     f"{r.what or 'input'}")
        elif self.owner.kind == MODEL:
            text += ", which every later inference reads again"
        return text


def _overlap(a0, a1, b0, b1):
    lo, hi = max(a0, b0), min(a1, b1)
    return (lo, hi) if lo < hi else None


def find_corruptions(run, owners, bases: dict[int, int]) -> list[Corruption]:
    """Every write of a functional run that lands on an owner's needed bytes.
    `bases`: region -> base address, to tell a region's own backing symbol."""
    out = []
    reads_by_region: dict[int, list[Access]] = {}
    writes_by_region: dict[int, list[Access]] = {}
    for r in run.reads:
        reads_by_region.setdefault(r.region, []).append(r)
    for w in run.writes:
        writes_by_region.setdefault(w.region, []).append(w)
    for w in run.writes:
        for o in owners:
            hit = _overlap(w.start, w.end, o.start, o.end)
            if hit is None:
                continue
            if o.kind == REGION:
                if o.region == w.region:
                    continue
                later = _live_read(w, hit, reads_by_region.get(o.region, ()), writes_by_region.get(o.region, ()))
                if later is None:
                    continue
                out.append(Corruption(w, o, *hit, later))
            elif o.kind == SYMBOL and o.start <= bases.get(w.region, -1) < o.end:
                continue          # the symbol that backs the writing region itself
            else:
                out.append(Corruption(w, o, *hit, None))
    return _merged(out)


def _live_read(w: Access, hit, reads, own_writes) -> Access | None:
    """The first later read through the owner's region of bytes `w` overwrote, unless the owner
    region itself rewrote all of them in between (then the read sees fresh data)."""
    for r in reads:
        if r.seq <= w.seq:
            continue
        part = _overlap(r.start, r.end, *hit)
        if part is None:
            continue
        if any(w.seq < o.seq < r.seq and o.start <= part[0] and part[1] <= o.end for o in own_writes):
            continue
        return r
    return None


def _merged(found: list[Corruption]) -> list[Corruption]:
    """One corruption per (operation, owner): the first write's range grown to cover all."""
    seen: dict[tuple, Corruption] = {}
    for c in found:
        key = (c.write.offset, c.write.seq, c.owner.name)
        prev = seen.get(key)
        if prev is None:
            seen[key] = c
        else:
            seen[key] = Corruption(prev.write, prev.owner, min(prev.start, c.start), max(prev.end, c.end),
                                   prev.read_by or c.read_by)
    return list(seen.values())


def separate_placement(sizes: dict[int, int]) -> dict[int, tuple[int, int]]:
    """Every region at its own 256 MB-aligned address: nothing overlaps."""
    return {r: (SEPARATE_BASE + SEPARATE_STRIDE * i, size) for i, (r, size) in enumerate(sorted(sizes.items()))}

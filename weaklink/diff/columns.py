"""Every defined global of two analysed images, matched by name and compared column by column.

The bulk path of `weaklink diff`: numpy over the analyze layer's GlobalSymbols columns, no Python
object per symbol. What counts as a change (weaklink.diff's docstring gives the reasons):

- binding: WEAK on one side only (nm V/W against T/D/B);
- section and region: by name, so renumbered sections and reordered MEMORY blocks compare equal;
- size: st_size;
- value: the reset value of data of 1, 2, 4 or 8 bytes (PROGBITS bytes, zero for NOBITS);
- points-to: a non-null pointer-sized value compared by what it points into (symbol and offset,
  else region and offset), so a pointer that follows its moved target is no change;
- address: counted, not listed (a build that grows shifts everything after the growth).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from weaklink.analyze.values import POINTER_SIZE
from weaklink.read.layout import VALUE_SIZES
from weaklink.diff import names
from weaklink.read import elfstructs as S


@dataclass(frozen=True)
class Columns:
    """The compared fields of one image, for its defined globals (GlobalSymbols rows)."""

    strtab: bytes
    name_off: np.ndarray    # i8, into strtab
    name_len: np.ndarray    # i8
    weak: np.ndarray        # bool
    section: np.ndarray     # section index per row, len(section_names) for none (SHN_ABS…)
    section_names: list
    region: np.ndarray      # region index, -1 for none
    region_names: list
    address: np.ndarray     # i8
    size: np.ndarray        # i8
    has_value: np.ndarray   # bool
    value: np.ndarray       # u8 (uint64)
    target: "Targets"       # where pointer-sized values point
    names: names.Keys       # the rows' names, hashed for matching

    def __len__(self) -> int:
        return len(self.name_off)

    def name(self, row: int) -> bytes:
        off = int(self.name_off[row])
        return self.strtab[off:off + int(self.name_len[row])]


def columns(report) -> Columns:
    table, image = report.table, report.table.image
    c = table.cols
    shndx = np.asarray(c.shndx, np.int64)
    sec_names = image.elf.section_names
    section = np.where((shndx > 0) & (shndx < len(sec_names)), shndx, len(sec_names))
    address = np.asarray(c.address, np.int64)
    size, stype = np.asarray(c.size, np.int64), np.asarray(c.type)
    has_value, value = _values(image, shndx, address, size, stype)
    region = np.asarray(table.region_index, np.int64)
    target = _targets(image, report.regions, has_value, size, value)
    # names.match negates lengths: signed columns
    name_off, name_len = np.asarray(c.name_off, np.int64), np.asarray(c.name_len, np.int64)
    keys = names.keys(np.frombuffer(image.strtab, np.uint8), name_off, name_len)
    return Columns(image.strtab, name_off, name_len, np.asarray(c.binding) == S.STB_WEAK,
                   section, sec_names, region, report.regions.names, address, size, has_value,
                   value, target, keys)


def _values(image, shndx, address, size, stype) -> tuple[np.ndarray, np.ndarray]:
    """Reset values of every data row of size 1, 2, 4 or 8 (weaklink.analyze.values, vectorised):
    the file bytes of a loaded PROGBITS section, zero for NOBITS."""
    n = len(size)
    ok = np.isin(size, VALUE_SIZES) & (stype != S.STT_FUNC) & (stype != S.STT_SECTION) \
        & (stype != S.STT_FILE) & (shndx > 0) & (shndx < S.SHN_LORESERVE)
    value = np.zeros(n, np.uint64)
    has = np.zeros(n, bool)
    data = np.frombuffer(image.elf.data, np.uint8)
    for sec in np.unique(shndx[ok]).tolist():
        sh = image.elf.shdrs[sec]
        rows = np.flatnonzero(ok & (shndx == sec))
        rel = address[rows] - sh.sh_addr
        inside = (rel >= 0) & (rel + size[rows] <= sh.sh_size)
        rows, rel = rows[inside], rel[inside]
        has[rows] = True
        if not image.file_backed(sec):
            continue                                    # NOBITS / not loaded: zero at reset
        base = sh.sh_offset + rel
        acc = np.zeros(len(rows), np.uint64)
        for k in range(8):                              # little-endian, byte k of each value
            use = size[rows] > k
            byte = data[np.minimum(base + k, len(data) - 1)].astype(np.uint64)
            acc |= np.where(use, byte << np.uint64(8 * k), np.uint64(0))
        value[rows] = acc
    return has, value


@dataclass(frozen=True)
class Targets:
    """Where each row's non-null pointer-sized reset value points, like values.points_to: the
    symbol that holds it (Image.symbol_at), else the region and the offset from its origin.
    `kind`: 0 none, 1 symbol, 2 region only."""

    kind: np.ndarray        # i1 per row
    holder: np.ndarray      # row of image.defined, -1 for none
    offset: np.ndarray      # i8, from the holder or from the region's origin
    region: np.ndarray      # region index, -1 for none
    names: object           # image.defined's (name_off, name_len) and the string table

    def name(self, row: int) -> bytes | None:
        h = int(self.holder[row])
        if h < 0:
            return None
        off, length, strtab = self.names
        return strtab[int(off[h]):int(off[h]) + int(length[h])]


def _locate(regions, addresses: np.ndarray) -> np.ndarray:
    """RegionMap.locate for an array of addresses: the region index of each, -1 for none."""
    points, owner = regions.intervals
    where = np.searchsorted(np.array(points, np.int64), np.asarray(addresses, np.int64),
                            side="right")
    return np.array(owner, np.int64)[where]


def _targets(image, regions, has_value, size, value) -> Targets:
    n = len(size)
    kind, holder = np.zeros(n, np.int8), np.full(n, -1, np.int64)
    offset, region = np.zeros(n, np.int64), np.full(n, -1, np.int64)
    d = image.defined
    out = Targets(kind, holder, offset, region,
                  (np.asarray(d.name_off, np.int64), np.asarray(d.name_len, np.int64), image.strtab))
    rows = np.flatnonzero(has_value & (size == POINTER_SIZE) & (value != 0))
    if not len(rows):
        return out
    raw = value[rows].astype(np.int64)
    found = _holders(image, raw)
    inside = found >= 0
    start = np.asarray(d.address, np.int64)[np.maximum(found, 0)]
    probe = np.where(np.asarray(d.type)[np.maximum(found, 0)] == S.STT_FUNC, raw & ~1, raw)
    reg = _locate(regions, raw)
    origins = np.array([r.origin for r in regions.regions] + [0], np.int64)
    region[rows] = reg
    kind[rows] = np.where(inside, 1, np.where(reg >= 0, 2, 0))
    holder[rows] = found
    offset[rows] = np.where(inside, probe - start, raw - origins[reg])
    return out


def _holders(image, addresses: np.ndarray) -> np.ndarray:
    """Image.row_at of every address (-1 for none). Where one symbol alone starts at the
    greatest start at or below an address and holds it, it is the answer, found for all at
    once; the rest (aliases at one start, nested symbols, no holder) ask row_at."""
    d = image.defined
    out = np.full(len(addresses), -1, np.int64)
    if not len(d):
        return out
    address = np.asarray(d.address, np.int64)
    order = np.argsort(address, kind="stable")
    starts = address[order]
    pos = np.searchsorted(starts, addresses, side="right") - 1
    at = np.maximum(pos, 0)
    alone = (pos >= 0) & (np.searchsorted(starts, starts[at], side="left") == pos)
    row = order[at]
    extent = np.maximum(np.asarray(d.size, np.int64)[row], 1)
    probe = np.where(np.asarray(d.type)[row] == S.STT_FUNC, addresses & ~1, addresses)
    fast = alone & (starts[at] <= probe) & (probe < starts[at] + extent)
    out[fast] = row[fast]
    for k in np.flatnonzero(~fast).tolist():
        hit = image.row_at(int(addresses[k]))
        out[k] = -1 if hit is None else hit
    return out


@dataclass(frozen=True)
class Compared:
    """Row pairs and what differs, as parallel arrays over the matched symbols."""

    added: list[int]             # NEW rows
    removed: list[int]           # OLD rows
    old_rows: np.ndarray
    new_rows: np.ndarray
    kinds: dict[str, np.ndarray]     # kind → bool over the matched pairs
    moved: np.ndarray                # bool: address differs


def compare(old: Columns, new: Columns) -> Compared:
    io, jn, added, removed = names.match(old.names, new.names)
    sec_a, sec_b = _common_ids(old.section_names, new.section_names)
    section = sec_a[old.section[io]] != sec_b[new.section[jn]]
    reg_a, reg_b = _common_ids(old.region_names, new.region_names)
    region = reg_a[old.region[io]] != reg_b[new.region[jn]]      # index -1: the "none" slot
    points, value = _value_changes(old, new, io, jn, reg_a, reg_b)
    kinds = {
        "binding-changed": old.weak[io] != new.weak[jn],
        "region-changed": region,
        "section-changed": section & ~region,
        "size-changed": old.size[io] != new.size[jn],
        "points-to-changed": points,
        "value-changed": value & ~points,
    }
    return Compared(added.tolist(), removed.tolist(), io, jn, kinds,
                    old.address[io] != new.address[jn])


def _same_names(ta: Targets, ra: np.ndarray, tb: Targets, rb: np.ndarray) -> np.ndarray:
    """Holder names equal, row by row."""
    (oa, la, sa), (ob, lb, sb) = ta.names, tb.names
    ha, hb = ta.holder[ra], tb.holder[rb]
    out = la[ha] == lb[hb]
    k = np.flatnonzero(out)
    out[k] = names.equal(np.frombuffer(sa, np.uint8), oa[ha[k]], np.frombuffer(sb, np.uint8),
                         ob[hb[k]], la[ha[k]])
    return out


def _common_ids(a: list, b: list) -> tuple[np.ndarray, np.ndarray]:
    """Name → one id shared by both images; each array has one extra last slot (id -1) for
    "no section" / "no region"."""
    ids: dict = {}
    one = np.array([ids.setdefault(n, len(ids)) for n in a] + [-1], np.int64)
    two = np.array([ids.setdefault(n, len(ids)) for n in b] + [-1], np.int64)
    return one, two


def _value_changes(old: Columns, new: Columns, io, jn, reg_a, reg_b
                   ) -> tuple[np.ndarray, np.ndarray]:
    """points-to: either side a non-null pointer, and the targets differ; value: the raw reset
    values differ (or only one side has one). A pointer whose raw value changed but whose target
    is the same symbol and offset (or region and offset) in the same region only moved."""
    raw = (old.has_value[io] != new.has_value[jn]) | (old.value[io] != new.value[jn])
    ta, tb = old.target, new.target
    ka, kb = ta.kind[io], tb.kind[jn]
    pointer = raw & ((ka > 0) | (kb > 0))
    same = pointer & (ka == kb) & (ta.offset[io] == tb.offset[jn]) \
        & (reg_a[ta.region[io]] == reg_b[tb.region[jn]])
    check = np.flatnonzero(same & (ka == 1))                  # same place: same holder name?
    if len(check):
        same[check] = _same_names(ta, io[check], tb, jn[check])
    points = pointer & ~same
    return points, raw & ~same

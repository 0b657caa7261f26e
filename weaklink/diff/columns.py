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

from weaklink.analyze.targets import as_numpy, targets
from weaklink.analyze.values import POINTER_SIZE, VALUE_SIZES
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
    c = as_numpy(table.cols)
    shndx = c.shndx.astype(np.int64)
    sec_names = image.elf.section_names
    section = np.where((shndx > 0) & (shndx < len(sec_names)), shndx, len(sec_names))
    has_value, value = _values(image, c)
    region = np.asarray(table.region_index, np.int64)
    target = _targets(image, report.regions, c, has_value, value)
    # names.match negates lengths: signed columns
    name_off = c.name_off.astype(np.int64, copy=False)
    name_len = c.name_len.astype(np.int64, copy=False)
    keys = names.keys(np.frombuffer(image.strtab, np.uint8), name_off, name_len)
    return Columns(image.strtab, name_off, name_len,
                   c.binding == S.STB_WEAK, section, sec_names, region, report.regions.names,
                   c.address.astype(np.int64), c.size.astype(np.int64), has_value, value, target,
                   keys)


def _values(image, c) -> tuple[np.ndarray, np.ndarray]:
    """Reset values of every data row of size 1, 2, 4 or 8 (weaklink.analyze.values, vectorised):
    the file bytes of a loaded PROGBITS section, zero for NOBITS."""
    n = len(c)
    size = c.size.astype(np.int64)
    ok = np.isin(size, VALUE_SIZES) & (c.type != S.STT_FUNC) & (c.type != S.STT_SECTION) \
        & (c.type != S.STT_FILE) & (c.shndx > 0) & (c.shndx < S.SHN_LORESERVE)
    value = np.zeros(n, np.uint64)
    has = np.zeros(n, bool)
    sh = image.elf.sections
    data = np.frombuffer(image.elf.data, np.uint8)
    for sec in np.unique(c.shndx[ok]).tolist():
        rows = np.flatnonzero(ok & (c.shndx == sec))
        start, length = int(sh["sh_addr"][sec]), int(sh["sh_size"][sec])
        rel = c.address[rows].astype(np.int64) - start
        inside = (rel >= 0) & (rel + size[rows] <= length)
        rows, rel = rows[inside], rel[inside]
        has[rows] = True
        if not image._file_backed(sec):
            continue                                    # NOBITS / not loaded: zero at reset
        base = int(sh["sh_offset"][sec]) + rel
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
    symbol whose [address, address + size) holds it (Thumb bit cleared for functions), else
    the region and the offset from its origin. `kind`: 0 none, 1 symbol, 2 region only."""

    kind: np.ndarray        # i1 per row
    holder: np.ndarray      # index into targets(image), -1 for none
    offset: np.ndarray      # i8, from the holder or from the region's origin
    region: np.ndarray      # region index, -1 for none
    names: object           # the targets' (name_off, name_len) and the string table

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


def _targets(image, regions, c, has_value, value) -> Targets:
    n = len(c)
    kind, holder = np.zeros(n, np.int8), np.full(n, -1, np.int64)
    offset, region = np.zeros(n, np.int64), np.full(n, -1, np.int64)
    t = targets(image)                                  # sorted by address, globals first
    out = Targets(kind, holder, offset, region, (t.name_off, t.name_len, image.strtab))
    rows = np.flatnonzero(has_value & (c.size == POINTER_SIZE) & (value != 0))
    if not len(rows):
        return out
    raw = value[rows].astype(np.int64)
    first, inside, held = np.zeros(len(rows), np.int64), np.zeros(len(rows), bool), 0
    start = t.address.astype(np.int64)
    if len(start):
        pos = np.searchsorted(start, raw, side="right") - 1
        # the preferred holder: the first of the targets sharing that start (globals, larger first)
        change = np.concatenate(([True], start[1:] != start[:-1]))
        first = np.maximum.accumulate(np.where(change, np.arange(len(start)), 0))[np.maximum(pos, 0)]
        probe = np.where(t.type[first] == S.STT_FUNC, raw & ~1, raw)
        end = start[first] + t.size[first].astype(np.int64)
        inside = (pos >= 0) & (start[first] <= probe) & (
            (probe < end) | ((t.size[first] == 0) & (start[first] == probe)))
        held = probe - start[first]
    reg = _locate(regions, raw)
    origins = np.array([r.origin for r in regions.regions] + [0], np.int64)
    region[rows] = reg
    kind[rows] = np.where(inside, 1, np.where(reg >= 0, 2, 0))
    holder[rows] = np.where(inside, first, -1)
    offset[rows] = np.where(inside, held, raw - origins[reg])
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

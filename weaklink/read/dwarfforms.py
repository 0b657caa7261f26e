"""DWARF forms and abbreviation tables, as the direct .debug_info reader
(weaklink.read.dwarfunits) needs them: which forms have a fixed size, where a value ends,
and each unit's abbreviations (code -> tag, children, attribute specs), read lazily.

DWARF 2 to 5, 32-bit format (DWARF 5, section 7.5.5 and 7.5.6).
"""
from __future__ import annotations

import re
from collections import namedtuple

# DW_FORM_* with a fixed size in the DIE (offsets and references: 32-bit format).
FIXED = {
    0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x0E: 4, 0x11: 1, 0x12: 2, 0x13: 4,
    0x14: 8, 0x17: 4, 0x19: 0, 0x1C: 4, 0x1D: 4, 0x1E: 16, 0x1F: 4, 0x20: 8, 0x21: 0,
    0x25: 1, 0x26: 2, 0x27: 3, 0x28: 4, 0x29: 1, 0x2A: 2, 0x2B: 3, 0x2C: 4,
}
LEB_FORMS = {0x0D, 0x0F, 0x15, 0x1A, 0x1B, 0x22, 0x23}     # sdata, udata, ref_udata, strx...
BLOCKS = {0x03: 2, 0x04: 4, 0x09: None, 0x0A: 1, 0x18: None}  # length size; None: ULEB
DW_FORM_addr, DW_FORM_string, DW_FORM_ref_addr = 0x01, 0x08, 0x10
DW_FORM_strp, DW_FORM_line_strp, DW_FORM_implicit_const = 0x0E, 0x1F, 0x21
DW_FORM_block1, DW_FORM_exprloc = 0x0A, 0x18
UNIT_REFS = {0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8}          # ref1..ref8: unit-relative
DW_FORM_ref4 = 0x13
DW_FORM_ref_udata = 0x15
CONSTANTS = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0C: 1}  # data1..data8, flag
DW_FORM_udata, DW_FORM_flag_present = 0x0F, 0x19

# spec: ((attr, form, implicit), ...); size: the bytes of a DIE's attributes when every form
# has a fixed size, else None; sibling: (offset in the DIE, form) of DW_AT_sibling when the
# attributes before it have fixed sizes, else None (the walk skips on these without parsing);
# attrs: the attribute codes of spec, as a set
Abbrev = namedtuple("Abbrev", "tag children spec size sibling attrs")
DW_AT_sibling = 0x01


def uleb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def sleb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value - (1 << shift) if byte & 0x40 else value), pos


def skip(info: bytes, form: int, pos: int, address_size: int, version: int) -> int | None:
    """Where the value of `form` at `pos` ends; None for DW_FORM_indirect or an unknown
    form."""
    if form in FIXED:
        return pos + FIXED[form]
    if form == DW_FORM_addr:
        return pos + address_size
    if form == DW_FORM_ref_addr:
        return pos + (address_size if version == 2 else 4)
    if form == DW_FORM_string:
        return info.index(b"\0", pos) + 1
    if form in LEB_FORMS:
        while info[pos] & 0x80:
            pos += 1
        return pos + 1
    if form in BLOCKS:
        size = BLOCKS[form]
        if size is None:
            length, pos = uleb(info, pos)
        else:
            length = int.from_bytes(info[pos:pos + size], "little")
            pos += size
        return pos + length
    return None                                   # DW_FORM_indirect or unknown


# One abbreviation entry, to find where the next starts without decoding it: a code (ULEB,
# not 0), a tag (ULEB), DW_CHILDREN_*, then (attribute, form) ULEB pairs up to (0, 0); a
# DW_FORM_implicit_const (0x21) form is followed by its value (SLEB).
_LEB = rb"[\x80-\xff]*[\x00-\x7f]"
# The groups are atomic and the repetition possessive: each pair parses one way only, so a
# damaged table fails in linear time.
_ENTRY = re.compile(rb"(?!\x00)" + _LEB + _LEB + rb"[\x00\x01]"
                    rb"(?:(?!\x00\x00)" + _LEB + rb"(?>\x21" + _LEB + b"|" + _LEB + b"))*+"
                    rb"\x00\x00", re.S)


class AbbrevTable:
    """code -> Abbrev of one abbreviation table, read lazily: the entries are delimited as
    far as the code asked for (one regular-expression match each), and decoded only when
    asked for. GCC numbers a unit's abbreviations by use, so the unit's own DIE (all that
    its name needs) is often the last of hundreds of entries."""

    def __init__(self, data: bytes, offset: int, address_size: int, version: int,
                 decoded: dict[bytes, Abbrev] | None = None):
        self.data, self.pos, self.done = data, offset, False
        self.address_size, self.version = address_size, version
        self.starts: dict[int, tuple[int, int]] = {}  # code -> (start, end) of its entry
        self.entries: dict[int, Abbrev] = {}
        # an entry's bytes after its code -> Abbrev, shared by the tables of one image with
        # the same address size and version: the units of a library repeat their entries
        self.decoded = {} if decoded is None else decoded

    def get(self, code: int) -> Abbrev | None:
        hit = self.entries.get(code)
        if hit is not None:
            return hit
        starts, data = self.starts, self.data
        while code not in starts and not self.done:
            m = _ENTRY.match(data, self.pos)
            if m is None:                             # the table's end (code 0), or damage
                self.done = True
                break
            first = data[self.pos]                    # the code: a one-byte ULEB, mostly
            starts[first if first < 0x80 else uleb(data, self.pos)[0]] = self.pos, m.end()
            self.pos = m.end()
        if code not in starts:
            return None
        start, end = starts[code]
        entry = data[uleb(data, start)[1]:end]        # the entry after its code
        hit = self.decoded.get(entry)
        if hit is None:
            hit = self.decoded[entry] = self._decode(start)
        self.entries[code] = hit
        return hit

    def _decode(self, pos: int) -> Abbrev:
        data = self.data
        _, pos = uleb(data, pos)
        tag, pos = uleb(data, pos)
        children = bool(data[pos])
        pos += 1
        spec, size, sibling = [], 0, None
        while True:
            attr = data[pos]                          # one-byte ULEBs, most of them
            if attr < 0x80:
                pos += 1
            else:
                attr, pos = uleb(data, pos)
            form = data[pos]
            if form < 0x80:
                pos += 1
            else:
                form, pos = uleb(data, pos)
            if attr == 0 and form == 0:
                break
            implicit = 0
            if form == DW_FORM_implicit_const:        # its value sits here, as SLEB
                implicit, pos = sleb(data, pos)
            spec.append((attr, form, implicit))
            if attr == DW_AT_sibling and size is not None:
                sibling = (size, form)
            if size is not None:
                width = _fixed_width(form, self.address_size, self.version)
                size = None if width is None else size + width
        return Abbrev(tag, children, tuple(spec), size, sibling,
                      frozenset(attr for attr, _, _ in spec))


def _fixed_width(form: int, address_size: int, version: int) -> int | None:
    """The size of a form's value in a DIE when it does not depend on the value."""
    if form in FIXED:
        return FIXED[form]
    if form == DW_FORM_addr:
        return address_size
    if form == DW_FORM_ref_addr:
        return address_size if version == 2 else 4
    return None

"""The units of .debug_info and their DIEs, read straight from the bytes, only where asked:

- `unit_starts`, `unit_of(offset)`: the unit headers (the unit_length chain) and the unit
  holding an offset;
- `unit(offset)`: a unit's header, its abbreviation table (read lazily) and its first DIE;
- `die(unit, pos)`: one DIE's abbreviation and where each of its attributes' values sits;
  `text`, `reference`, `constant`, `address`, `block` decode a value where it sits;
- `dies(offset)`: every DIE of a unit, with its parent, in order.

DWARF 2 to 5, 32- and 64-bit formats, every unit type of DWARF 5 (a skeleton or type unit
has a longer header). Strings through .debug_str_offsets (DW_FORM_strx*, written by clang and
split DWARF, not by GCC into an image) are not read: their texts are UNKNOWN.
"""
from __future__ import annotations

import bisect
import struct
from collections import namedtuple
from functools import cached_property

from weaklink.errors import InputError
from weaklink.read.dwarf.forms import AbbrevTable, block_length, sizes, skip, uleb
from weaklink.read.dwarf.structs import (BLOCKS, CONSTANTS, UNIT_REFS, DW_AT_name,
                                         DW_FORM_addr, DW_FORM_flag_present,
                                         DW_FORM_implicit_const, DW_FORM_indirect,
                                         DW_FORM_line_strp, DW_FORM_ref_addr,
                                         DW_FORM_ref_udata, DW_FORM_sec_offset,
                                         DW_FORM_string, DW_FORM_strp,
                                         DW_FORM_udata, DW_OP_addr, DW_UT_compile,
                                         DW_UT_partial, DW_UT_skeleton, DW_UT_split_compile,
                                         DW_UT_split_type, DW_UT_type)

UNKNOWN = object()

# offset size, version, address size, offset of the abbreviations, the first DIE; fixed:
# forms.sizes of the unit
Unit = namedtuple("Unit", "offset end version address_size offset_size fixed abbrevs first_die")
# bytes between a DWARF 5 unit header's abbreviation offset and its first DIE, by unit type:
# a skeleton or split unit's 8-byte id; a type unit's 8-byte signature and its type's offset
# (None: that offset's size)
_UNIT_TAIL = {DW_UT_compile: 0, DW_UT_partial: 0, DW_UT_skeleton: 8, DW_UT_split_compile: 8,
              DW_UT_type: None, DW_UT_split_type: None}


# what a value that runs past its section (or an offset past any), or a walk that does not
# end, raises
DAMAGE = (IndexError, ValueError, OverflowError, struct.error, RecursionError)


class DwarfError(InputError):
    """Debug information this reader cannot read: damaged, or in a form it does not know."""


class Unreadable(Exception):
    """DWARF this reader cannot walk: damaged, or a form or layout it does not know. `at`:
    the .debug_info offset; `expected`: what the reader expected there."""

    def __init__(self, at: int, expected: str):
        super().__init__(at, expected)
        self.at, self.expected = at, expected


def cstring(data: bytes, pos: int) -> str:
    return bytes(data[pos:data.index(b"\0", pos)]).decode(errors="replace")


class DebugInfo:
    """The units of one file's .debug_info (bytes; strs, line_strs may be b"")."""

    def __init__(self, info: bytes, abbrev: bytes, strs: bytes, line_strs: bytes):
        self.info, self.abbrev, self.strs, self.line_strs = info, abbrev, strs, line_strs
        self._abbrevs: dict[tuple, AbbrevTable] = {}
        self._decoded: dict[int, dict] = {}        # id(sizes) -> decoded entries
        self._units: dict[int, Unit | None] = {}

    # -- units ------------------------------------------------------------------------------
    @cached_property
    def unit_starts(self) -> list[int]:
        """Offsets of the unit headers (the unit_length chain, DWARF 2-5)."""
        info, out, pos = self.info, [], 0
        while pos + 4 <= len(info):
            out.append(pos)
            length = int.from_bytes(info[pos:pos + 4], "little")
            if length == 0xFFFFFFFF:                   # 64-bit DWARF: u64 length follows
                length = int.from_bytes(info[pos + 4:pos + 12], "little") + 8
            pos += 4 + length
        return out

    def unit_of(self, offset: int) -> int:
        """The offset of the unit holding .debug_info `offset`."""
        starts = self.unit_starts
        return starts[max(bisect.bisect_right(starts, offset) - 1, 0)]

    def unit(self, offset: int) -> Unit | None:
        """The unit whose header is at `offset`; None when it is not a DWARF 2-5 header."""
        if offset not in self._units:
            try:
                self._units[offset] = self._read_unit(offset)
            except DAMAGE:
                self._units[offset] = None
        return self._units[offset]

    def _read_unit(self, offset: int) -> Unit | None:
        info = self.info
        length, = struct.unpack_from("<I", info, offset)
        pos, offset_size = offset + 4, 4
        if length == 0xFFFFFFFF:
            (length,), pos, offset_size = struct.unpack_from("<Q", info, pos), pos + 8, 8
        elif length >= 0xFFFFFFF0:
            return None                                # reserved (DWARF 5, 7.4)
        end, off = min(pos + length, len(info)), "<I" if offset_size == 4 else "<Q"
        version, = struct.unpack_from("<H", info, pos)
        if not 2 <= version <= 5:
            return None
        if version >= 5:
            unit_type, address_size = info[pos + 2], info[pos + 3]
            abbrev_offset, = struct.unpack_from(off, info, pos + 4)
            tail = _UNIT_TAIL.get(unit_type, -1)
            if tail == -1:
                return None
            first = pos + 4 + offset_size + (8 + offset_size if tail is None else tail)
        else:
            abbrev_offset, = struct.unpack_from(off, info, pos + 2)
            address_size = info[pos + 2 + offset_size]
            first = pos + 3 + offset_size
        fixed = sizes(address_size, version, offset_size)
        return Unit(offset, end, version, address_size, offset_size, fixed,
                    self._table(abbrev_offset, fixed), first)

    def _table(self, offset: int, fixed: dict) -> AbbrevTable:
        """The abbreviation table at `offset` (read as far as the codes asked for)."""
        key = (offset, id(fixed))
        table = self._abbrevs.get(key)
        if table is None:
            decoded = self._decoded.setdefault(id(fixed), {})
            table = self._abbrevs[key] = AbbrevTable(self.abbrev, offset, fixed, decoded)
        return table

    def unit_name(self, offset: int):
        """DW_AT_name of the unit at `offset` as text, None when the unit has none, or
        UNKNOWN when this reader cannot tell."""
        try:
            unit = self.unit(offset)
            if unit is None:
                return UNKNOWN
            _, end, attrs = self.die(unit, unit.first_die)
            if attrs is not None and DW_AT_name in attrs:
                return self.text(unit, attrs[DW_AT_name])
            return UNKNOWN if attrs is None or end is None else None
        except DAMAGE:
            return UNKNOWN

    def top(self, offset: int) -> tuple[Unit, dict]:
        """The unit at `offset` and its first DIE's attributes; Unreadable when either
        cannot be read."""
        unit = self.unit(offset)
        if unit is None:
            raise Unreadable(offset, "a unit header of DWARF 2 to 5")
        ab, end, attrs = self.die(unit, unit.first_die)
        if ab is None or end is None:
            raise Unreadable(unit.first_die, "the unit's first DIE")
        return unit, attrs

    # -- DIEs -------------------------------------------------------------------------------
    def die(self, unit: Unit, pos: int):
        """(abbrev, position after the DIE, {attr: (form, value position, implicit)}): abbrev
        None and {} for a null entry, None and None for an unknown code; the position is
        None when a form is not known here (the attributes then stop before it)."""
        code, pos = uleb(self.info, pos)
        if code == 0:
            return None, pos, {}
        ab = unit.abbrevs.get(code)
        if ab is None:
            return None, pos, None
        attrs = {}
        info, fixed = self.info, unit.fixed
        for attr, form, implicit in ab.spec:
            if form in fixed:
                attrs[attr] = (form, pos, implicit)
                pos += fixed[form]
                continue
            if form == DW_FORM_indirect:               # the form precedes the value
                form, pos = uleb(info, pos)
            attrs[attr] = (form, pos, implicit)
            pos = skip(info, form, pos, fixed)
            if pos is None:
                return ab, None, attrs
        return ab, pos, attrs

    def dies(self, offset: int):
        """(offset, tag, attributes, parent offset) of every DIE of the unit at `offset`, in
        order; Unreadable for a unit this reader cannot walk."""
        unit = self.unit(offset)
        if unit is None:
            raise Unreadable(offset, "a unit header of DWARF 2 to 5")
        pos, parents = unit.first_die, []
        while pos < unit.end:
            start = pos
            ab, pos, attrs = self.die(unit, pos)
            if attrs is None:
                raise Unreadable(start, "an abbreviation code of the unit's table")
            if pos is None:
                raise Unreadable(start, "a DIE whose forms this reader knows")
            if ab is None:                       # the null entry closing a sibling list
                if parents:
                    parents.pop()
                continue
            yield start, ab.tag, attrs, parents[-1] if parents else None
            if ab.children:
                parents.append(start)

    def die_at(self, target: int | None, where: int) -> tuple[dict | None, int]:
        """(attributes, unit offset) of the DIE at .debug_info `target` (a reference read at
        `where`); attributes None when no DIE starts there."""
        if target is None:
            raise Unreadable(where, "a reference form this reader knows")
        cu = self.unit_of(target)
        unit = self.unit(cu)
        if unit is None:
            raise Unreadable(cu, "a unit header of DWARF 2 to 5")
        ab, end, attrs = self.die(unit, target)
        if ab is None:                  # a null entry, or a code the unit's table lacks
            return None, cu
        if end is None:
            raise Unreadable(target, "a DIE whose forms this reader knows")
        return attrs, cu

    # -- values -----------------------------------------------------------------------------
    def text(self, unit: Unit, attr):
        """The string of an attribute (form, position, ...); UNKNOWN for a form read
        through another table (DW_FORM_strx*, supplementary files)."""
        form, pos = attr[0], attr[1]
        if form == DW_FORM_string:
            return cstring(self.info, pos)
        if form in (DW_FORM_strp, DW_FORM_line_strp):
            table = self.strs if form == DW_FORM_strp else self.line_strs
            at = int.from_bytes(self.info[pos:pos + unit.offset_size], "little")
            return cstring(table, at) if table else UNKNOWN
        return UNKNOWN

    def reference(self, unit: Unit, attr) -> int | None:
        """The .debug_info offset a reference attribute points to."""
        form, pos = attr[0], attr[1]
        if form in UNIT_REFS:
            return unit.offset + int.from_bytes(self.info[pos:pos + UNIT_REFS[form]], "little")
        if form == DW_FORM_ref_udata:
            return unit.offset + uleb(self.info, pos)[0]
        if form == DW_FORM_ref_addr:
            size = unit.fixed[DW_FORM_ref_addr]
            return int.from_bytes(self.info[pos:pos + size], "little")
        return None

    def constant(self, attr) -> int | None:
        form, pos, implicit = attr
        if form in CONSTANTS:
            return int.from_bytes(self.info[pos:pos + CONSTANTS[form]], "little")
        if form == DW_FORM_udata:
            return uleb(self.info, pos)[0]
        if form == DW_FORM_implicit_const:
            return implicit
        if form == DW_FORM_flag_present:
            return 1
        return None

    def offset(self, unit: Unit, attr) -> int | None:
        """An offset into another section: DW_FORM_sec_offset, or a constant (DWARF 2, 3)."""
        if attr[0] == DW_FORM_sec_offset:
            return int.from_bytes(self.info[attr[1]:attr[1] + unit.offset_size], "little")
        return self.constant(attr)

    def address(self, unit: Unit, attr) -> int | None:
        """The value of a DW_FORM_addr attribute; None for other forms."""
        form, pos = attr[0], attr[1]
        if form != DW_FORM_addr:
            return None
        return int.from_bytes(self.info[pos:pos + unit.address_size], "little")

    def block(self, attr) -> bytes | None:
        """The bytes of an exprloc or block attribute; None for other forms (a location
        list is no single expression)."""
        if attr is None or attr[0] not in BLOCKS:
            return None
        length, pos = block_length(self.info, attr[0], attr[1])
        if pos + length > len(self.info):
            raise IndexError("block past the end")
        return bytes(self.info[pos:pos + length])

    def address_operand(self, unit: Unit, attr) -> int | None:
        """The address of a location that is exactly `DW_OP_addr <address>`, else None."""
        if attr[0] not in BLOCKS:
            return None                    # a location list: not a static variable
        length, pos = block_length(self.info, attr[0], attr[1])
        size = unit.address_size
        if length != 1 + size or self.info[pos] != DW_OP_addr:
            return None
        return int.from_bytes(self.info[pos + 1:pos + 1 + size], "little")

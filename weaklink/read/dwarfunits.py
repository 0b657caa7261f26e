"""Compilation units of .debug_info read straight from the bytes, without pyelftools (its
import and its parse of the file cost tens of milliseconds, and weaklink needs a few facts of
a few units):

- `unit_name(offset)`: DW_AT_name of a unit's first DIE;
- `scan(offset)`: the variables and functions a unit defines at file or namespace scope,
  walking only those levels (every other DIE's children are skipped through DW_AT_sibling,
  so the types, classes and function bodies of a large unit are not walked);
- `variable_at(offset)`: is the `DW_OP_addr` operand found at `offset` the location of a
  DW_TAG_variable (at any depth: the static data of a function too)? Only the DIEs on the
  path to it are read;
- `function_facts(die)`: DW_AT_inline, DW_AT_object_pointer and whether a definition sits
  where it was declared, along the DW_AT_abstract_origin / DW_AT_specification chain.

DWARF 2 to 5, 32-bit format, as arm-none-eabi-gcc writes it. Anything else (64-bit DWARF,
type or split units, DW_FORM_strx names, DW_FORM_indirect, a form this reader does not
know) gives UNKNOWN or None, and the caller asks pyelftools or does without.
"""
from __future__ import annotations

import bisect
import struct
from collections import namedtuple
from functools import cached_property

from weaklink.read.dwarfforms import (CONSTANTS, FIXED, UNIT_REFS, DW_FORM_addr,
                                      DW_FORM_block1, DW_FORM_exprloc, DW_FORM_flag_present,
                                      DW_FORM_implicit_const, DW_FORM_line_strp,
                                      DW_FORM_ref4, DW_FORM_ref_addr, DW_FORM_ref_udata,
                                      DW_FORM_string, DW_FORM_strp, DW_FORM_udata,
                                      AbbrevTable, skip, uleb)

UNKNOWN = object()

DW_AT_sibling, DW_AT_location, DW_AT_name, DW_AT_low_pc = 0x01, 0x02, 0x03, 0x11
DW_AT_inline, DW_AT_abstract_origin, DW_AT_decl_column = 0x20, 0x31, 0x39
DW_AT_decl_file, DW_AT_decl_line, DW_AT_specification = 0x3A, 0x3B, 0x47
DW_AT_object_pointer = 0x64
DW_TAG_variable, DW_TAG_subprogram, DW_TAG_namespace = 0x34, 0x2E, 0x39
_CLASS_TAGS = {0x02, 0x13, 0x17}        # DW_TAG_class_type, structure_type, union_type
DW_INL_declared_not_inlined, DW_INL_declared_inlined = 2, 3
DW_OP_addr = 0x03
DW_UT_compile, DW_UT_partial = 0x01, 0x03

Unit = namedtuple("Unit", "offset end version address_size abbrevs first_die")
# variables, functions: address -> DIE offset; starts: the offsets of the DIEs walked (at
# file and namespace scope), ascending
UnitScan = namedtuple("UnitScan", "variables functions starts")


def _cstring(data: bytes, pos: int) -> bytes:
    end = data.index(b"\0", pos)
    return data[pos:end]


class UnitNames:
    """The units of one image's DWARF sections (bytes; line_str may be b"")."""

    def __init__(self, info: bytes, abbrev: bytes, strs: bytes, line_strs: bytes):
        self.info, self.abbrev, self.strs, self.line_strs = info, abbrev, strs, line_strs
        self._abbrevs: dict[tuple, AbbrevTable] = {}
        self._decoded: dict[tuple, dict] = {}      # (address size, version) -> decoded entries
        self._units: dict[int, Unit | None] = {}
        self._scans: dict[int, UnitScan | None] = {}

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

    def _unit(self, offset: int) -> Unit | None:
        if offset not in self._units:
            try:
                self._units[offset] = self._read_unit(offset)
            except (IndexError, ValueError, struct.error):
                self._units[offset] = None
        return self._units[offset]

    def _read_unit(self, offset: int) -> Unit | None:
        info = self.info
        length, version = struct.unpack_from("<IH", info, offset)
        if length >= 0xFFFFFFF0 or not 2 <= version <= 5:
            return None
        if version >= 5:
            unit_type, address_size, abbrev_offset = struct.unpack_from("<BBI", info, offset + 6)
            if unit_type not in (DW_UT_compile, DW_UT_partial):
                return None
            first = offset + 12
        else:
            abbrev_offset, address_size = struct.unpack_from("<IB", info, offset + 6)
            first = offset + 11
        return Unit(offset, min(offset + 4 + length, len(info)), version, address_size,
                    self._table(abbrev_offset, address_size, version), first)

    def unit_name(self, offset: int):
        """DW_AT_name of the unit at `offset` as text, None when the unit has none, or
        UNKNOWN when this reader cannot tell."""
        try:
            unit = self._unit(offset)
            if unit is None:
                return UNKNOWN
            _, end, attrs = self._die(unit, unit.first_die)
            if attrs is not None and DW_AT_name in attrs:
                return self._text(*attrs[DW_AT_name][:2])
            return UNKNOWN if attrs is None or end is None else None
        except (IndexError, ValueError, struct.error):
            return UNKNOWN

    # -- DIEs -------------------------------------------------------------------------------
    def _die(self, unit: Unit, pos: int):
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
        info, fixed = self.info, FIXED
        for attr, form, implicit in ab.spec:
            attrs[attr] = (form, pos, implicit)
            if form in fixed:
                pos += fixed[form]
                continue
            pos = skip(info, form, pos, unit.address_size, unit.version)
            if pos is None:
                return ab, None, attrs
        return ab, pos, attrs

    def _text(self, form: int, pos: int):
        if form == DW_FORM_string:
            return _cstring(self.info, pos).decode(errors="replace")
        if form == DW_FORM_strp:
            return _cstring(self.strs, struct.unpack_from("<I", self.info, pos)[0]).decode(
                errors="replace")
        if form == DW_FORM_line_strp and self.line_strs:
            return _cstring(self.line_strs, struct.unpack_from("<I", self.info, pos)[0]).decode(
                errors="replace")
        return UNKNOWN

    def _reference(self, unit: Unit, form: int, pos: int) -> int | None:
        """The .debug_info offset a reference attribute points to."""
        if form in UNIT_REFS:
            return unit.offset + int.from_bytes(self.info[pos:pos + UNIT_REFS[form]], "little")
        if form == DW_FORM_ref_udata:
            return unit.offset + uleb(self.info, pos)[0]
        if form == DW_FORM_ref_addr:
            return int.from_bytes(self.info[pos:pos + (unit.address_size if unit.version == 2
                                                       else 4)], "little")
        return None

    def _constant(self, form: int, pos: int, implicit: int) -> int | None:
        if form in CONSTANTS:
            return int.from_bytes(self.info[pos:pos + CONSTANTS[form]], "little")
        if form == DW_FORM_udata:
            return uleb(self.info, pos)[0]
        if form == DW_FORM_implicit_const:
            return implicit
        if form == DW_FORM_flag_present:
            return 1
        return None

    def _address_operand(self, unit: Unit, form: int, pos: int) -> int | None:
        """The address of a location that is exactly `DW_OP_addr <address>`, else None."""
        if form == DW_FORM_exprloc:
            length, pos = uleb(self.info, pos)
        elif form == DW_FORM_block1:
            length, pos = self.info[pos], pos + 1
        else:
            return None                    # a location list: not a static variable
        size = unit.address_size
        if length != 1 + size or self.info[pos] != DW_OP_addr:
            return None
        return int.from_bytes(self.info[pos + 1:pos + 1 + size], "little")

    # -- scans ------------------------------------------------------------------------------
    def scan(self, offset: int) -> UnitScan | None:
        """The unit's variables (DW_AT_location: DW_OP_addr) and functions (DW_AT_low_pc) at
        file and namespace scope, address -> DIE offset; None when this reader cannot walk
        the unit."""
        if offset not in self._scans:
            try:
                self._scans[offset] = self._scan(offset)
            except (IndexError, ValueError, struct.error, RecursionError):
                self._scans[offset] = None
        return self._scans[offset]

    def _scan(self, offset: int) -> UnitScan | None:
        unit = self._unit(offset)
        if unit is None:
            return None
        ab, pos, attrs = self._die(unit, unit.first_die)
        if ab is None or pos is None:
            return None
        out = UnitScan({}, {}, [])
        if ab.children and self._walk(unit, pos, out) is None:
            return None
        return out

    def variable_at(self, offset: int) -> bool | None:
        """Is .debug_info `offset` the DW_AT_location value (exprloc or block1) of a
        DW_TAG_variable? None when this reader cannot walk the unit. The DIE holding it is
        found from the walked DIE that starts last before it (UnitScan.starts), descending
        only into the subtree that holds the offset."""
        cu = self.unit_of(offset)
        scan, unit = self.scan(cu), self._unit(cu)
        if scan is None or unit is None:
            return None
        k = bisect.bisect_right(scan.starts, offset) - 1
        if k < 0:
            return False
        try:
            return self._holds(unit, scan.starts[k], offset)
        except (IndexError, ValueError, struct.error, RecursionError):
            return None

    def _holds(self, unit: Unit, pos: int, offset: int) -> bool | None:
        ab, after, attrs = self._die(unit, pos)
        if ab is None or after is None:
            return None
        if offset < after:
            loc = attrs.get(DW_AT_location)
            return ab.tag == DW_TAG_variable and loc is not None and loc[1] == offset
        if not ab.children:
            return False
        pos = after
        while pos < unit.end:                       # the children, to the one holding it
            start = pos
            child, after, attrs = self._die(unit, pos)
            if child is None:
                return None if attrs is None else False
            if after is None:
                return None
            if offset < after:
                return self._holds(unit, start, offset)
            end = after
            if child.children:
                sibling = attrs.get(DW_AT_sibling)
                end = self._reference(unit, *sibling[:2]) if sibling else \
                    self._walk(unit, after, None)
                if end is None or end <= start:          # damaged: a sibling behind it
                    return None
                if offset < end:
                    return self._holds(unit, start, offset)
            pos = end
        return False

    def _walk(self, unit: Unit, pos: int, out: UnitScan | None) -> int | None:
        """Walk one list of sibling DIEs from `pos` to its null entry; collect into `out`
        (None: only find the end). Returns the position after the null entry."""
        info, abbrevs, entries = self.info, unit.abbrevs, unit.abbrevs.entries
        while pos < unit.end:
            start = pos
            code = info[pos]
            if code < 0x80:                            # a one-byte ULEB: most codes
                body = pos + 1
            else:
                code, body = uleb(info, pos)
            if code == 0:
                return body
            ab = entries.get(code) or abbrevs.get(code)
            if ab is None:
                return None
            # skip it without parsing, if it can, unless the scan reads it: a namespace (to
            # walk into), a variable with a location, a subprogram with an address (a
            # declaration has neither; C++ headers put thousands at namespace scope)
            tag = ab.tag
            if out is None or not (tag == DW_TAG_namespace or (
                    tag == DW_TAG_variable and DW_AT_location in ab.attrs) or (
                    tag == DW_TAG_subprogram and DW_AT_low_pc in ab.attrs)):
                if not ab.children and ab.size is not None:
                    if out is not None:
                        out.starts.append(start)
                    pos = body + ab.size
                    continue
                if ab.children and ab.sibling is not None:
                    if out is not None:
                        out.starts.append(start)
                    at, form = ab.sibling
                    if form == DW_FORM_ref4:             # GCC's sibling form
                        pos = unit.offset + int.from_bytes(info[body + at:body + at + 4],
                                                           "little")
                    else:
                        pos = self._reference(unit, form, body + at)
                    if pos is None or pos <= start:      # damaged: a sibling behind it
                        return None
                    continue
            ab, pos, attrs = self._die(unit, pos)
            if pos is None:
                return None
            if out is not None:
                out.starts.append(start)
                if ab.tag in (DW_TAG_variable, DW_TAG_subprogram):
                    self._collect(unit, ab.tag, attrs, start, out)
            if ab.children:
                if ab.tag == DW_TAG_namespace and out is not None:
                    pos = self._walk(unit, pos, out)
                elif DW_AT_sibling in attrs:
                    pos = self._reference(unit, *attrs[DW_AT_sibling][:2])
                else:
                    pos = self._walk(unit, pos, None)
                if pos is None or pos <= start:
                    return None
        return pos

    def _collect(self, unit: Unit, tag: int, attrs: dict, start: int, out: UnitScan) -> None:
        if tag == DW_TAG_variable and DW_AT_location in attrs:
            address = self._address_operand(unit, *attrs[DW_AT_location][:2])
            if address is not None:
                out.variables.setdefault(address, start)
        elif tag == DW_TAG_subprogram and DW_AT_low_pc in attrs:
            form, pos, _ = attrs[DW_AT_low_pc]
            if form == DW_FORM_addr:
                address = int.from_bytes(self.info[pos:pos + unit.address_size], "little")
                out.functions.setdefault(address, start)

    def function_facts(self, die: int) -> tuple[bool, bool, bool, int | None] | None:
        """(declared inline, a class member, defined where declared, decl file) of the
        subprogram DIE
        at `die`, read along its DW_AT_abstract_origin and DW_AT_specification chain: inline
        is DW_AT_inline 2 or 3 on any of them; a member has DW_AT_object_pointer, or its
        declaration sits in a class (the walked DIE before it is a class, see `_in_class`);
        the DIE that names a specification carries DW_AT_decl_* only when the definition is
        not where the declaration is (a method defined outside its class body). The decl file
        is the DW_AT_decl_file index of the first DIE of the chain that has one: where the
        function's body is written (a line-table file number of its unit)."""
        declared_inline = member = False
        in_place = decl_file = None
        try:
            for _ in range(8):                       # a chain is two or three links
                unit = self._unit(self.unit_of(die))
                if unit is None:
                    return None
                ab, end, attrs = self._die(unit, die)
                if ab is None or end is None:
                    return None
                if DW_AT_inline in attrs:
                    value = self._constant(*attrs[DW_AT_inline])
                    declared_inline |= value in (DW_INL_declared_not_inlined,
                                                 DW_INL_declared_inlined)
                member |= DW_AT_object_pointer in attrs
                if decl_file is None and DW_AT_decl_file in attrs:
                    decl_file = self._constant(*attrs[DW_AT_decl_file])
                if in_place is None and DW_AT_specification in attrs:
                    in_place = not any(a in attrs for a in (DW_AT_decl_file, DW_AT_decl_line,
                                                            DW_AT_decl_column))
                link = attrs.get(DW_AT_abstract_origin) or attrs.get(DW_AT_specification)
                if link is None:
                    break
                die = self._reference(unit, *link[:2])
                if die is None:
                    break
                if link is attrs.get(DW_AT_specification):
                    member |= self._in_class(die)
        except (IndexError, ValueError, struct.error):
            return None
        return declared_inline, member, bool(in_place), decl_file

    def _in_class(self, decl: int) -> bool:
        """Does the declaration DIE at `decl` sit inside a class? The walk of its unit stops
        at every DIE of file and namespace scope; the one that starts last at or before the
        declaration is the declaration itself (file or namespace scope) or the DIE whose
        subtree holds it."""
        cu = self.unit_of(decl)
        scan, unit = self.scan(cu), self._unit(cu)
        if scan is None or unit is None:
            return False
        k = bisect.bisect_right(scan.starts, decl) - 1
        if k < 0 or scan.starts[k] == decl:
            return False
        ab = self._die(unit, scan.starts[k])[0]
        return ab is not None and ab.tag in _CLASS_TAGS

    # -- forms and abbreviations ------------------------------------------------------------
    def _table(self, offset: int, address_size: int, version: int) -> "AbbrevTable":
        """The abbreviation table at `offset` (read as far as the codes asked for)."""
        key = (offset, address_size, version)
        table = self._abbrevs.get(key)
        if table is None:
            decoded = self._decoded.setdefault((address_size, version), {})
            table = self._abbrevs[key] = AbbrevTable(self.abbrev, offset, address_size,
                                                      version, decoded)
        return table


def read_aranges(data: bytes) -> list[tuple[int, int, int]] | None:
    """DWARF 2-5 .debug_aranges, 32-bit format, 4-byte addresses (ELF32): per set a header
    (unit_length u4, version u2, debug_info_offset u4, address_size u1, segment_size u1),
    padding to 8, then (address, length) u4 pairs ending with (0, 0). (start, end, unit)
    per non-empty range."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        length, version, cu, addr_size, seg_size = struct.unpack_from("<IHIBB", data, pos)
        if length >= 0xFFFFFFF0 or addr_size != 4 or seg_size or not 2 <= version <= 5:
            return None                        # 64-bit DWARF or an unusual layout
        body = pos + 16                        # 12-byte header padded to 2 * address_size
        end = pos + 4 + length
        if end > len(data):
            return None
        pairs = struct.iter_unpack("<II", data[body:end - (end - body) % 8])
        out += [(a, a + n, cu) for a, n in pairs if n]
        pos = end
    return out or None

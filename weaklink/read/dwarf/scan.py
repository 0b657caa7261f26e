"""What a unit defines at file and namespace scope, read without walking the rest of it:

- `scan(offset)`: the variables and functions a unit defines at file or namespace scope,
  walking only those levels (every other DIE's children are skipped through DW_AT_sibling,
  so the types, classes and function bodies of a large unit are not walked);
- `variable_at(offset)`: is the `DW_OP_addr` operand found at `offset` the location of a
  DW_TAG_variable (at any depth: the static data of a function too)? Only the DIEs on the
  path to it are read;
- `function_facts(die)`: DW_AT_inline, DW_AT_object_pointer and whether a definition sits
  where it was declared, along the DW_AT_abstract_origin / DW_AT_specification chain.

A unit this reader cannot walk gives None, and the caller does without.
"""
from __future__ import annotations

import bisect
from collections import namedtuple

from weaklink.read.dwarf.structs import (CLASS_TAGS, DW_AT_abstract_origin, DW_AT_decl_column,
                                         DW_AT_decl_file, DW_AT_decl_line, DW_AT_inline,
                                         DW_AT_location, DW_AT_low_pc, DW_AT_object_pointer,
                                         DW_AT_sibling, DW_AT_specification,
                                         DW_FORM_ref4, DW_INL_declared_inlined,
                                         DW_INL_declared_not_inlined, DW_TAG_namespace,
                                         DW_TAG_subprogram, DW_TAG_variable)
from weaklink.read.dwarf.forms import uleb
from weaklink.read.dwarf.units import DAMAGE, DebugInfo, Unit

# variables, functions: address -> DIE offset; starts: the offsets of the DIEs walked (at
# file and namespace scope), ascending
UnitScan = namedtuple("UnitScan", "variables functions starts")


class Scans:
    """The file-scope scans of the units of one DebugInfo, each made once."""

    def __init__(self, info: DebugInfo):
        self.info = info
        self._scans: dict[int, UnitScan | None] = {}

    def scan(self, offset: int) -> UnitScan | None:
        """The unit's variables (DW_AT_location: DW_OP_addr) and functions (DW_AT_low_pc) at
        file and namespace scope, address -> DIE offset; None when this reader cannot walk
        the unit."""
        if offset not in self._scans:
            try:
                self._scans[offset] = self._scan(offset)
            except DAMAGE:
                self._scans[offset] = None
        return self._scans[offset]

    def _scan(self, offset: int) -> UnitScan | None:
        unit = self.info.unit(offset)
        if unit is None:
            return None
        ab, pos, attrs = self.info.die(unit, unit.first_die)
        if ab is None or pos is None:
            return None
        out = UnitScan({}, {}, [])
        if ab.children and self._walk(unit, pos, out) is None:
            return None
        return out

    def variable_at(self, offset: int) -> bool | None:
        """Is .debug_info `offset` the DW_AT_location value (exprloc or block) of a
        DW_TAG_variable? None when this reader cannot walk the unit. The DIE holding it is
        found from the walked DIE that starts last before it (UnitScan.starts), descending
        only into the subtree that holds the offset."""
        cu = self.info.unit_of(offset)
        scan, unit = self.scan(cu), self.info.unit(cu)
        if scan is None or unit is None:
            return None
        k = bisect.bisect_right(scan.starts, offset) - 1
        if k < 0:
            return False
        try:
            return self._holds(unit, scan.starts[k], offset)
        except DAMAGE:
            return None

    def _holds(self, unit: Unit, pos: int, offset: int) -> bool | None:
        die = self.info.die
        ab, after, attrs = die(unit, pos)
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
            child, after, attrs = die(unit, pos)
            if child is None:
                return None if attrs is None else False
            if after is None:
                return None
            if offset < after:
                return self._holds(unit, start, offset)
            end = after
            if child.children:
                sibling = attrs.get(DW_AT_sibling)
                end = self.info.reference(unit, sibling) if sibling else \
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
        info, abbrevs, entries = self.info.info, unit.abbrevs, unit.abbrevs.entries
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
                        pos = self.info.reference(unit, (form, body + at))
                    if pos is None or pos <= start:      # damaged: a sibling behind it
                        return None
                    continue
            ab, pos, attrs = self.info.die(unit, pos)
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
                    pos = self.info.reference(unit, attrs[DW_AT_sibling])
                else:
                    pos = self._walk(unit, pos, None)
                if pos is None or pos <= start:
                    return None
        return pos

    def _collect(self, unit: Unit, tag: int, attrs: dict, start: int, out: UnitScan) -> None:
        if tag == DW_TAG_variable and DW_AT_location in attrs:
            address = self.info.address_operand(unit, attrs[DW_AT_location])
            if address is not None:
                out.variables.setdefault(address, start)
        elif tag == DW_TAG_subprogram and DW_AT_low_pc in attrs:
            address = self.info.address(unit, attrs[DW_AT_low_pc])
            if address is not None:
                out.functions.setdefault(address, start)

    def function_facts(self, die: int) -> tuple[bool, bool, bool, int | None] | None:
        """(declared inline, a class member, defined where declared, decl file) of the
        subprogram DIE at `die`, read along its DW_AT_abstract_origin and
        DW_AT_specification chain: inline is DW_AT_inline 2 or 3 on any of them; a member
        has DW_AT_object_pointer, or its declaration sits in a class (the walked DIE before
        it is a class, see `_in_class`); the DIE that names a specification carries
        DW_AT_decl_* only when the definition is not where the declaration is (a method
        defined outside its class body). The decl file is the DW_AT_decl_file index of the
        first DIE of the chain that has one: where the function's body is written (a
        line-table file number of its unit)."""
        declared_inline = member = False
        in_place = decl_file = None
        info = self.info
        try:
            for _ in range(8):                       # a chain is two or three links
                unit = info.unit(info.unit_of(die))
                if unit is None:
                    return None
                ab, end, attrs = info.die(unit, die)
                if ab is None or end is None:
                    return None
                if DW_AT_inline in attrs:
                    value = info.constant(attrs[DW_AT_inline])
                    declared_inline |= value in (DW_INL_declared_not_inlined,
                                                 DW_INL_declared_inlined)
                member |= DW_AT_object_pointer in attrs
                if decl_file is None and DW_AT_decl_file in attrs:
                    decl_file = info.constant(attrs[DW_AT_decl_file])
                if in_place is None and DW_AT_specification in attrs:
                    in_place = not any(a in attrs for a in (DW_AT_decl_file, DW_AT_decl_line,
                                                            DW_AT_decl_column))
                link = attrs.get(DW_AT_abstract_origin) or attrs.get(DW_AT_specification)
                if link is None:
                    break
                die = info.reference(unit, link)
                if die is None:
                    break
                if link is attrs.get(DW_AT_specification):
                    member |= self._in_class(die)
        except DAMAGE:
            return None
        return declared_inline, member, bool(in_place), decl_file

    def _in_class(self, decl: int) -> bool:
        """Does the declaration DIE at `decl` sit inside a class? The walk of its unit stops
        at every DIE of file and namespace scope; the one that starts last at or before the
        declaration is the declaration itself (file or namespace scope) or the DIE whose
        subtree holds it."""
        cu = self.info.unit_of(decl)
        scan, unit = self.scan(cu), self.info.unit(cu)
        if scan is None or unit is None:
            return False
        k = bisect.bisect_right(scan.starts, decl) - 1
        if k < 0 or scan.starts[k] == decl:
            return False
        ab = self.info.die(unit, scan.starts[k])[0]
        return ab is not None and ab.tag in CLASS_TAGS

"""DWARF encodings: LEB128 numbers, where a form's value ends, abbreviation tables (code ->
tag, children, attribute specs, read lazily), and the value of a constant expression.

DWARF 2 to 5, 32- and 64-bit formats (DWARF 5, sections 7.5.5, 7.5.6 and 7.7.1).
"""
from __future__ import annotations

import functools
import re
from collections import namedtuple

from weaklink.read.dwarf.structs import (BLOCKS, FIXED32, FIXED64, LEB_FORMS, DW_AT_sibling,
                                         DW_FORM_addr, DW_FORM_implicit_const,
                                         DW_FORM_indirect, DW_FORM_ref_addr, DW_FORM_string,
                                         DW_OP_addr, DW_OP_const1u, DW_OP_const2u,
                                         DW_OP_const4u, DW_OP_constu, DW_OP_lit0,
                                         DW_OP_lit31, DW_OP_mul, DW_OP_or, DW_OP_plus,
                                         DW_OP_shl)

# spec: ((attr, form, implicit), ...); size: the bytes of a DIE's attributes when every form
# has a fixed size, else None; sibling: (offset in the DIE, form) of DW_AT_sibling when the
# attributes before it have fixed sizes, else None (the walk skips on these without parsing);
# attrs: the attribute codes of spec, as a set
Abbrev = namedtuple("Abbrev", "tag children spec size sibling attrs")


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


@functools.cache
def sizes(address_size: int, version: int, offset_size: int) -> dict[int, int]:
    """form -> the size of its value in a unit, for the forms whose size does not depend on
    the value: DW_FORM_ref_addr is an address in DWARF 2, an offset from DWARF 3 on."""
    return {**(FIXED64 if offset_size == 8 else FIXED32), DW_FORM_addr: address_size,
            DW_FORM_ref_addr: address_size if version == 2 else offset_size}


def skip(info: bytes, form: int, pos: int, fixed: dict[int, int]) -> int | None:
    """Where the value of `form` at `pos` ends (`fixed`: the unit's `sizes`); None for
    DW_FORM_indirect (the caller reads the form first) or an unknown form."""
    if form in fixed:
        return pos + fixed[form]
    if form == DW_FORM_string:
        return info.index(b"\0", pos) + 1
    if form in LEB_FORMS:
        while info[pos] & 0x80:
            pos += 1
        return pos + 1
    if form in BLOCKS:
        length, pos = block_length(info, form, pos)
        return pos + length
    return None


def block_length(info: bytes, form: int, pos: int) -> tuple[int, int]:
    """(length, where the bytes start) of a block or exprloc value at `pos`."""
    size = BLOCKS[form]
    if size is None:
        return uleb(info, pos)
    return int.from_bytes(info[pos:pos + size], "little"), pos + size


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
    its name needs) is often the last of hundreds of entries. `fixed`: the units' `sizes`."""

    def __init__(self, data: bytes, offset: int, fixed: dict[int, int],
                 decoded: dict[bytes, Abbrev] | None = None):
        self.data, self.pos, self.done = data, offset, False
        self.fixed = fixed
        self.starts: dict[int, tuple[int, int]] = {}  # code -> (start, end) of its entry
        self.entries: dict[int, Abbrev] = {}
        # an entry's bytes after its code -> Abbrev, shared by the tables of one image with
        # the same sizes: the units of a library repeat their entries
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
        data, fixed = self.data, self.fixed
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
                width = fixed.get(form) if form != DW_FORM_indirect else None
                size = None if width is None else size + width
        return Abbrev(tag, children, tuple(spec), size, sibling,
                      frozenset(attr for attr, _, _ in spec))


_OPERANDS = {DW_OP_addr: 4, DW_OP_const1u: 1, DW_OP_const2u: 2, DW_OP_const4u: 4}
# a shift by 32 or more leaves no bit of a 32-bit value
_BINARY = {DW_OP_plus: int.__add__, DW_OP_shl: lambda a, b: a << b if b < 32 else 0,
           DW_OP_or: int.__or__, DW_OP_mul: int.__mul__}


def constant(expr: bytes) -> int | None:
    """The value of a constant DWARF expression (a 4-byte address, literals, simple
    arithmetic, 32-bit results); None for anything that depends on the machine state."""
    stack, pos = [], 0
    try:
        while pos < len(expr):
            op = expr[pos]
            pos += 1
            if op in _OPERANDS:
                size = _OPERANDS[op]
                if pos + size > len(expr):
                    return None                   # a truncated operand
                stack.append(int.from_bytes(expr[pos:pos + size], "little"))
                pos += size
            elif op == DW_OP_constu:
                value, pos = uleb(expr, pos)
                stack.append(value)
            elif DW_OP_lit0 <= op <= DW_OP_lit31:
                stack.append(op - DW_OP_lit0)
            elif op in _BINARY and len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(_BINARY[op](a, b) & 0xFFFFFFFF)
            else:
                return None
    except IndexError:                            # a truncated ULEB
        return None
    return stack[-1] if len(stack) == 1 else None

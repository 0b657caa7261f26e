"""The name of a DWARF compilation unit (DW_AT_name of its first DIE), read straight from
.debug_info, .debug_abbrev and the string sections, without pyelftools: its import and its
parse of the file cost tens of milliseconds, and weaklink needs only this one attribute of a
few units.

DWARF 2 to 5, 32-bit format, as arm-none-eabi-gcc writes it. Anything else (64-bit DWARF,
type or split units, DW_FORM_strx names, DW_FORM_indirect, a form this reader does not
know) gives UNKNOWN, and the caller asks pyelftools.
"""
from __future__ import annotations

import struct

DW_AT_name = 0x03
UNKNOWN = object()

# DW_FORM_* with a fixed size in the DIE (offsets and references: 32-bit format).
_FIXED = {
    0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x0E: 4, 0x11: 1, 0x12: 2, 0x13: 4,
    0x14: 8, 0x17: 4, 0x19: 0, 0x1C: 4, 0x1D: 4, 0x1E: 16, 0x1F: 4, 0x20: 8, 0x21: 0,
    0x25: 1, 0x26: 2, 0x27: 3, 0x28: 4, 0x29: 1, 0x2A: 2, 0x2B: 3, 0x2C: 4,
}
_LEB = {0x0D, 0x0F, 0x15, 0x1A, 0x1B, 0x22, 0x23}          # sdata, udata, ref_udata, strx, ...
_BLOCK = {0x03: 2, 0x04: 4, 0x09: None, 0x0A: 1, 0x18: None}  # length size; None: ULEB
DW_FORM_addr, DW_FORM_string, DW_FORM_ref_addr = 0x01, 0x08, 0x10
DW_FORM_strp, DW_FORM_line_strp = 0x0E, 0x1F
DW_UT_compile, DW_UT_partial = 0x01, 0x03


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _cstring(data: bytes, pos: int) -> bytes:
    end = data.index(b"\0", pos)
    return data[pos:end]


class UnitNames:
    """unit_name(offset) for one image's DWARF sections (bytes; line_str may be b"")."""

    def __init__(self, info: bytes, abbrev: bytes, strs: bytes, line_strs: bytes):
        self.info, self.abbrev, self.strs, self.line_strs = info, abbrev, strs, line_strs
        self._abbrevs: dict[int, dict[int, list]] = {}

    def unit_name(self, offset: int):
        """DW_AT_name of the unit at `offset` as text, None when the unit has none, or
        UNKNOWN when this reader cannot tell."""
        try:
            return self._unit_name(offset)
        except (IndexError, ValueError, struct.error):
            return UNKNOWN

    def _unit_name(self, offset: int):
        info = self.info
        length, version = struct.unpack_from("<IH", info, offset)
        if length >= 0xFFFFFFF0 or not 2 <= version <= 5:
            return UNKNOWN
        if version >= 5:
            unit_type, address_size, abbrev_offset = struct.unpack_from("<BBI", info, offset + 6)
            if unit_type not in (DW_UT_compile, DW_UT_partial):
                return UNKNOWN
            pos = offset + 12
        else:
            abbrev_offset, address_size = struct.unpack_from("<IB", info, offset + 6)
            pos = offset + 11
        code, pos = _uleb(info, pos)
        spec = self._table(abbrev_offset).get(code)
        if spec is None:
            return UNKNOWN
        for attr, form in spec:
            if attr == DW_AT_name:
                return self._text(form, pos)
            pos = self._skip(form, pos, address_size, version)
            if pos is None:
                return UNKNOWN
        return None

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

    def _skip(self, form: int, pos: int, address_size: int, version: int) -> int | None:
        if form in _FIXED:
            return pos + _FIXED[form]
        if form == DW_FORM_addr:
            return pos + address_size
        if form == DW_FORM_ref_addr:
            return pos + (address_size if version == 2 else 4)
        if form == DW_FORM_string:
            return self.info.index(b"\0", pos) + 1
        if form in _LEB:
            while self.info[pos] & 0x80:
                pos += 1
            return pos + 1
        if form in _BLOCK:
            size = _BLOCK[form]
            if size is None:
                length, pos = _uleb(self.info, pos)
            else:
                length = int.from_bytes(self.info[pos:pos + size], "little")
                pos += size
            return pos + length
        return None                                   # DW_FORM_indirect or unknown

    def _table(self, offset: int) -> dict[int, list]:
        """The abbreviation table at `offset`: code -> [(attribute, form), ...]."""
        if offset not in self._abbrevs:
            data, table, pos = self.abbrev, {}, offset
            while True:
                code, pos = _uleb(data, pos)
                if code == 0:
                    break
                _tag, pos = _uleb(data, pos)
                pos += 1                                  # DW_CHILDREN_*
                spec = []
                while True:
                    attr, pos = _uleb(data, pos)
                    form, pos = _uleb(data, pos)
                    if attr == 0 and form == 0:
                        break
                    if form == 0x21:                      # DW_FORM_implicit_const: SLEB here
                        while data[pos] & 0x80:
                            pos += 1
                        pos += 1
                    spec.append((attr, form))
                table[code] = spec
            self._abbrevs[offset] = table
        return self._abbrevs[offset]

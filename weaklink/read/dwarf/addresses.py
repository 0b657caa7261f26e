"""Which compilation unit describes an address: a function's unit from .debug_aranges (else
from each unit's own DW_AT_low_pc / DW_AT_high_pc or DW_AT_ranges), a variable's from the
bytes of its location.

A static variable's DW_AT_location is `DW_OP_addr <address>`: an exprloc or block1 of
length 5, the bytes `05 03 <address>`. Those bytes are searched for in .debug_info, and each
unit holding a hit is walked at file and namespace scope only (weaklink.read.dwarf.scan) to
check the hit is that definition: a call site passing the variable's address
(DW_AT_call_value) holds the same bytes in another unit. No other unit is read, so the newlib
and libstdc++ units of an image cost nothing unless they define what is asked.
"""
from __future__ import annotations

import bisect
import re
import struct
from functools import cached_property

from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.dwarf.forms import uleb
from weaklink.read.dwarf.scan import Scans
from weaklink.read.dwarf.structs import (DW_AT_high_pc, DW_AT_low_pc, DW_AT_ranges,
                                         DW_FORM_addr, DW_OP_addr, DW_RLE_base_address,
                                         DW_RLE_offset_pair, DW_RLE_start_end,
                                         DW_RLE_start_length)
from weaklink.read.dwarf.units import DAMAGE, DebugInfo, Unreadable

OVERLAP_LOOKBACK = 4          # aranges looked at below the last one starting at an address
SEARCHES_BEFORE_INDEX = 8     # a few variables: bytes.find; many: index .debug_info once
# A static variable's location: an exprloc or block1 of 5 bytes, DW_OP_addr and a 4-byte
# address; the regular expression's lookahead finds overlapping hits.
_LOCATION = bytes([5, DW_OP_addr])
_ADDR_LOCATION = re.compile(re.escape(_LOCATION) + rb"(?=(.{4}))", re.S)


class Addresses:
    """Address -> unit questions over one file's DWARF. `sections`: name -> bytes or None
    (weaklink.read.dwarf.Dwarf.section); `shdrs`: the file's section headers."""

    def __init__(self, info: DebugInfo, scans: Scans, sections, shdrs):
        self.info, self.scans, self._section, self._shdrs = info, scans, sections, shdrs
        self._searches = 0

    # -- functions ----------------------------------------------------------------------------
    @cached_property
    def aranges(self):
        """(starts, ends, unit offsets) of .debug_aranges, sorted by start; None when absent
        or unusual. Ranges that start at 0 are the copies ld discarded (COMDAT duplicates,
        --gc-sections: their relocations resolve to 0) unless code really starts at 0."""
        try:
            data = self._section(".debug_aranges")
        except InputError:              # a damaged compressed section: as if absent
            return None
        table = None if data is None else read_aranges(data)
        if table is None:
            return None
        code_at_zero = any(sh.sh_addr == 0 and sh.sh_size and sh.sh_flags & S.SHF_ALLOC
                           and sh.sh_flags & S.SHF_EXECINSTR for sh in self._shdrs)
        rows = sorted(r for r in table if r[0] or code_at_zero)
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]

    @cached_property
    def _arange_at(self) -> dict[int, int]:
        """Start address -> position in `aranges` of the (non-empty) ranges."""
        starts = self.aranges[0]
        return dict(zip(starts, range(len(starts))))

    def function_cu(self, address: int) -> int | None:
        """The unit whose .debug_aranges range holds `address` (the latest-starting one),
        or without .debug_aranges the unit whose own pc ranges do."""
        table = self.aranges
        if table is None:
            return self.unit_by_pc(address)
        starts, ends, cus = table
        # ld lays input sections end to end, so ranges do not overlap: the one that starts
        # last at or below the address holds it (a few before it are looked at too)
        k = bisect.bisect_right(starts, address) - 1
        for j in range(k, max(k - OVERLAP_LOOKBACK, -1), -1):
            if address < ends[j]:
                return cus[j]
        return None

    def function_cus(self, addresses: list[int]) -> list[int | None]:
        """`function_cu` of many addresses. With -ffunction-sections every function starts a
        range of its own: the ranges are first looked up by their start (a dict)."""
        table = self.aranges
        if table is None:
            return list(map(self.function_cu, addresses))
        units = table[2]
        return [units[k] if k is not None else self.function_cu(a)
                for a, k in zip(addresses, map(self._arange_at.get, addresses))]

    def unit_code(self, cu: int) -> list[int]:
        """The starts of the unit's .debug_aranges ranges."""
        table = self.aranges
        return [] if table is None else [s for s, u in zip(table[0], table[2]) if u == cu]

    def unit_by_pc(self, address: int) -> int | None:
        """The first unit whose own code ranges hold `address`: DW_AT_ranges (a range list:
        -ffunction-sections), else DW_AT_low_pc and DW_AT_high_pc."""
        return next((cu for cu, spans in self._unit_ranges
                     if any(lo <= address < hi for lo, hi in spans)), None)

    @cached_property
    def _unit_ranges(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """(unit, its code ranges) of every unit, in .debug_info order; a unit whose ranges
        cannot be read has none."""
        out = []
        for cu in self.info.unit_starts:
            try:
                out.append((cu, list(self._pc_ranges(cu))))
            except (Unreadable, InputError, *DAMAGE):
                out.append((cu, []))
        return out

    def _pc_ranges(self, cu: int):
        unit, attrs = self.info.top(cu)
        low = (self.info.address(unit, attrs[DW_AT_low_pc]) if DW_AT_low_pc in attrs
               else None) or 0
        if DW_AT_ranges in attrs:
            at = self.info.offset(unit, attrs[DW_AT_ranges])
            data = self._section(".debug_rnglists" if unit.version >= 5 else ".debug_ranges")
            if data is not None and at is not None:
                read = rnglist if unit.version >= 5 else ranges
                yield from read(data, at, low, unit.address_size)
                return
        if DW_AT_high_pc in attrs:
            high = attrs[DW_AT_high_pc]
            # DWARF 4+: a constant-class DW_AT_high_pc is a length from DW_AT_low_pc
            yield low, (self.info.address(unit, high) if high[0] == DW_FORM_addr
                        else low + (self.info.constant(high) or 0))

    # -- variables ----------------------------------------------------------------------------
    def variable_cus(self, address: int) -> list[int]:
        """Units holding `05 03 <address>` as the location of a DW_TAG_variable, found at
        file or namespace scope by the unit's walk, else (the static data of a function) by
        descending to the hit; a unit the walker cannot read is taken on the bytes alone.
        In .debug_info order."""
        if not address:                  # 0: the address of discarded COMDAT copies
            return []
        units: list[int] = []
        for hit in self.location_hits(address):
            cu = self.info.unit_of(hit)
            if cu in units:
                continue
            scan = self.scans.scan(cu)
            if scan is None or address in scan.variables or \
                    self.scans.variable_at(hit) is not False:
                units.append(cu)
        return units

    def location_hits(self, address: int) -> list[int]:
        """Offsets of every `05 03 <address>` in .debug_info. The first few addresses are
        searched for; after that one pass indexes every DW_OP_addr operand."""
        self._searches += 1
        if self._searches <= SEARCHES_BEFORE_INDEX and "location_index" not in self.__dict__:
            info, needle, out = self.info.info, _LOCATION + address.to_bytes(4, "little"), []
            at = info.find(needle)
            while at >= 0:
                out.append(at)
                at = info.find(needle, at + 1)
            return out
        return self.location_index.get(address, [])

    @cached_property
    def location_index(self) -> dict[int, list[int]]:
        """Address -> offsets of every `05 03 <address>` in .debug_info."""
        out: dict[int, list[int]] = {}
        for m in _ADDR_LOCATION.finditer(self.info.info):
            out.setdefault(int.from_bytes(m.group(1), "little"), []).append(m.start())
        return out

    def function_facts(self, address: int) -> tuple[int | None, tuple | None]:
        """(unit offset, weaklink.read.dwarf.scan function_facts) of the function defined at
        `address`."""
        cu = self.function_cu(address)
        scan = self.scans.scan(cu) if cu is not None else None
        die = scan.functions.get(address) if scan is not None else None
        return cu, (self.scans.function_facts(die) if die is not None else None)


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


def ranges(data: bytes, at: int, base: int, size: int):
    """The (start, end) pairs of the DWARF 2-4 range list at `at` in .debug_ranges: pairs
    of addresses relative to the base address (the unit's DW_AT_low_pc), a pair whose first
    is all ones selecting a new base, (0, 0) ending the list."""
    ones = (1 << 8 * size) - 1
    while True:
        lo = int.from_bytes(data[at:at + size], "little")
        hi = int.from_bytes(data[at + size:at + 2 * size], "little")
        if at + 2 * size > len(data) or (lo == 0 and hi == 0):
            return
        at += 2 * size
        if lo == ones:
            base = hi
        elif lo != hi:
            yield base + lo, base + hi


def rnglist(data: bytes, at: int, base: int, size: int):
    """The (start, end) pairs of the DWARF 5 range list at `at` in .debug_rnglists (section
    7.25): DW_RLE_offset_pair relative to the base address, DW_RLE_base_address setting it,
    DW_RLE_start_end and DW_RLE_start_length absolute. The DW_RLE_*x entries index
    .debug_addr (split DWARF), which this reader does not read: the list stops there."""
    word = lambda p: int.from_bytes(data[p:p + size], "little")     # noqa: E731
    while True:
        kind = data[at]
        at += 1
        if kind == DW_RLE_offset_pair:
            lo, at = uleb(data, at)
            hi, at = uleb(data, at)
            yield base + lo, base + hi
        elif kind == DW_RLE_base_address:
            base, at = word(at), at + size
        elif kind == DW_RLE_start_end:
            yield word(at), word(at + size)
            at += 2 * size
        elif kind == DW_RLE_start_length:
            lo = word(at)
            n, at = uleb(data, at + size)
            yield lo, lo + n
        else:                                   # DW_RLE_end_of_list, or an indexed entry
            return

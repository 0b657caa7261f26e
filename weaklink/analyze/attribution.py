"""Which compilation unit defined a symbol: from DWARF when the image has it, else from the
GNU ld map. Lazy: asked only for the symbols a report shows, never for the whole table.

- DWARF: a function's address falls in its CU's .debug_aranges ranges; a variable is the
  DW_TAG_variable whose DW_AT_location is `DW_OP_addr <address>`, found as bytes in
  .debug_info (pyelftools then reads only that CU's name).
- Map: with --cref the defining file is listed first (ld.info, --cref); otherwise the input
  section line (` .bss.x  0xADDR  0xSIZE  file.o`) that precedes the symbol's line.
"""
from __future__ import annotations

import bisect
import io
import re
import struct
from functools import cached_property

from weaklink.read import elfstructs as S
from weaklink.read.dwarfunits import UNKNOWN, UnitNames
from weaklink.read.image import Image, Symbol

DW_OP_addr = 0x03
SHF_COMPRESSED = 0x800
SEARCHES_BEFORE_INDEX = 8     # a few variables: bytes.find; many: index .debug_info once
_SCOPES = ("DW_TAG_namespace", "DW_TAG_structure_type", "DW_TAG_class_type")
_INPUT_SECTION = re.compile(rb"^ \S*\s+0x[0-9a-fA-F]+\s+0x[0-9a-fA-F]+ (\S.*)$", re.M)


class Attribution:
    def __init__(self, image: Image, link_map=None, map_path: str | None = None):
        self.image = image
        self.link_map = link_map
        self.map_path = map_path

    def defined_in(self, sym: Symbol) -> str | None:
        return self._from_dwarf(sym) or self._from_map(sym)

    def many(self, symbols: list[Symbol]) -> dict[int, str]:
        out = {}
        for sym in symbols:
            unit = self.defined_in(sym)
            if unit is not None:
                out[sym.index] = unit
        return out

    @property
    def dwarf(self):
        """pyelftools' DWARFInfo of the image, or None (no or unreadable DWARF)."""
        return self._dwarf

    def unit_offset(self, sym: Symbol) -> int | None:
        """The .debug_info offset of the compilation unit that defines `sym`, from DWARF only:
        .debug_aranges for a function, the DW_OP_addr bytes for a variable."""
        if self._dwarf is None:
            return None
        try:
            if sym.type == S.STT_FUNC:
                table = self._aranges
                if table is None:
                    return None
                import numpy as np
                hit = np.flatnonzero((table[0] <= sym.address) & (sym.address < table[1]))
                return int(table[2][hit[0]]) if hit.size else None
            if self._debug_info is None:
                return None
            at = self._location_at(sym.address)
            return None if at < 0 else \
                self._unit_starts[bisect.bisect_right(self._unit_starts, at) - 1]
        except Exception:       # corrupt DWARF: best effort, never fatal
            return None

    # -- DWARF --------------------------------------------------------------------------------
    @cached_property
    def _has_debug_info(self) -> bool:
        return self.image.elf.find_section(".debug_info") is not None

    @cached_property
    def _dwarf(self):
        if not self._has_debug_info:
            return None
        try:
            from elftools.elf.elffile import ELFFile
            elf = ELFFile(io.BytesIO(self.image.elf.data))
            return elf.get_dwarf_info() if elf.has_dwarf_info() else None
        except Exception:       # corrupt DWARF: attribution is best effort, never fatal
            return None

    @cached_property
    def _variables(self) -> dict[int, str]:
        """DW_OP_addr address → CU name, for every variable defined at CU/namespace scope."""
        out: dict[int, str] = {}
        try:
            for cu in self._dwarf.iter_CUs():
                top = cu.get_top_DIE()
                unit = _attr_text(top, "DW_AT_name")
                for die in _scope_dies(top):
                    addr = _location_address(die)
                    if addr is not None and unit:
                        out.setdefault(addr, unit)
        except Exception:
            pass
        return out

    def _from_dwarf(self, sym: Symbol) -> str | None:
        if not self._has_debug_info:
            return None
        if sym.type == S.STT_FUNC:
            return self._function_unit(sym.address)
        if self._debug_info is None:                 # compressed: walk the DIEs
            return self._variables.get(sym.address)
        return self._variable_unit(sym.address)

    @cached_property
    def _debug_info(self) -> bytes | None:
        i = self.image.elf.find_section(".debug_info")
        if i is None or self.image.elf.shdrs[i].sh_flags & SHF_COMPRESSED:
            return None
        return self.image.elf.section_bytes(i)

    @cached_property
    def _unit_starts(self) -> list[int]:
        """Offsets of the unit headers in .debug_info (unit_length chain, DWARF 2-5)."""
        info, out, pos = self._debug_info, [], 0
        while pos + 4 <= len(info):
            out.append(pos)
            length = int.from_bytes(info[pos:pos + 4], "little")
            if length == 0xFFFFFFFF:                     # 64-bit DWARF: u64 length follows
                length = int.from_bytes(info[pos + 4:pos + 12], "little") + 8
            pos += 4 + length
        return out

    def _variable_unit(self, address: int) -> str | None:
        """The CU holding `DW_AT_location: DW_OP_addr <address>`: the exprloc (DWARF 4+) or
        block1 (DWARF 2-3) bytes 05 03 <address, 4 bytes LE> searched in .debug_info, so
        no DIE is parsed but the CU's first."""
        hit = self._location_at(address)
        if hit < 0:
            return None
        cu = self._unit_starts[bisect.bisect_right(self._unit_starts, hit) - 1]
        return self._unit_name(cu)

    def _unit_name(self, offset: int) -> str | None:
        """DW_AT_name of the unit at .debug_info `offset`: read directly, or by pyelftools
        when the direct reader cannot tell (unusual forms, 64-bit DWARF)."""
        names = self._unit_names
        if names is not None:
            name = names.unit_name(offset)
            if name is not UNKNOWN:
                return name
        if self._dwarf is None:
            return None
        try:
            return _attr_text(self._dwarf.get_CU_at(offset).get_top_DIE(), "DW_AT_name")
        except Exception:
            return None

    @cached_property
    def _unit_names(self) -> UnitNames | None:
        elf = self.image.elf
        parts = []
        for name in (".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str"):
            i = elf.find_section(name)
            if i is not None and elf.shdrs[i].sh_flags & SHF_COMPRESSED:
                return None
            parts.append(b"" if i is None else elf.section_bytes(i))
        return UnitNames(*parts) if parts[0] and parts[1] else None

    def _location_at(self, address: int) -> int:
        """Offset of the first `05 03 <address>` in .debug_info, -1 for none. The first few
        are searched for; after that one numpy pass indexes every DW_OP_addr operand."""
        self._searches = getattr(self, "_searches", 0) + 1
        if self._searches <= SEARCHES_BEFORE_INDEX:
            return self._debug_info.find(b"\x05\x03" + address.to_bytes(4, "little"))
        return self._location_index.get(address, -1)

    @cached_property
    def _location_index(self) -> dict[int, int]:
        import numpy as np

        from weaklink.arraysets import first_occurrences
        u8 = np.frombuffer(self._debug_info, np.uint8)
        at = np.flatnonzero((u8[:-5] == 0x05) & (u8[1:-4] == 0x03)) if len(u8) > 5 else \
            np.zeros(0, np.int64)
        words = u8[at[:, None] + 2 + np.arange(4)].astype(np.uint32) \
            << np.array([0, 8, 16, 24], np.uint32)
        address = np.bitwise_or.reduce(words, axis=1) if len(at) else np.zeros(0, np.uint32)
        address, first = first_occurrences(address)              # the first occurrence
        return dict(zip(address.tolist(), at[first].tolist()))

    @cached_property
    def _aranges(self):
        """(start, end, cu_offset) arrays of .debug_aranges, read with numpy (one tuple per
        -ffunction-sections section, 100k+ in big images); None when absent or unusual."""
        i = self.image.elf.find_section(".debug_aranges")
        return None if i is None else _read_aranges(self.image.elf.section_bytes(i))

    def _function_unit(self, address: int) -> str | None:
        try:
            table = self._aranges
            if table is None:                   # no .debug_aranges: the CUs' own pc ranges
                return self._unit_by_pc(address)
            import numpy as np
            start, end, cu_offset = table
            hit = np.flatnonzero((start <= address) & (address < end))
            if not hit.size:
                return None
            return self._unit_name(int(cu_offset[hit[0]]))
        except Exception:
            return None

    def _unit_by_pc(self, address: int) -> str | None:
        ranges = self._dwarf.range_lists()
        for cu in self._dwarf.iter_CUs():
            top = cu.get_top_DIE()
            if any(lo <= address < hi for lo, hi in _pc_ranges(top, cu, ranges)):
                return _attr_text(top, "DW_AT_name")
        return None

    # -- map ------------------------------------------------------------------------------------
    @cached_property
    def _map_bytes(self) -> bytes:
        try:
            with open(self.map_path, "rb") as f:
                return f.read()
        except (OSError, TypeError):
            return b""

    def _from_map(self, sym: Symbol) -> str | None:
        if self.link_map is None and not self.map_path:
            return None
        # ld demangles C++ names in the map and its --cref table (ld --demangle default).
        from weaklink.demangle import demangle
        names = list(dict.fromkeys([demangle(sym.name), sym.name]))
        cref = getattr(self.link_map, "cref", None) or {}
        for name in names:
            if cref.get(name):
                return cref[name][0]
        text = self._map_bytes
        if not text:
            return None
        line = next((hit for n in names if (hit := _find_line(text, sym.address, n)) is not None),
                    None)
        if line is None:            # unusual spacing: one regular-expression scan
            m = re.search(rb"^\s+0x0*%x\s+%s$" % (sym.address, re.escape(names[0].encode())),
                          text, re.M)
            line = m.start() if m else None
        return None if line is None else _input_section_before(text, line)


def _find_line(text: bytes, address: int, name: str) -> int | None:
    """Offset of the map line `<16 spaces>0xADDRESS<16 spaces>NAME` (ldlang.c
    print_one_symbol: 8 hex digits for a 32-bit target, 16 on 64-bit builds)."""
    for width in (8, 16):
        hit = text.find(b"0x%0*x                %s\n" % (width, address, name.encode()))
        if hit > 0:
            return text.rfind(b"\n", 0, hit) + 1
    return None


def _input_section_before(text: bytes, end: int, limit: int = 2000) -> str | None:
    """The file of the nearest input section line above offset `end` (a line start)."""
    for _ in range(limit):
        if end <= 0:
            return None
        start = text.rfind(b"\n", 0, end - 1) + 1
        m = _INPUT_SECTION.match(text, start, end - 1)
        if m:
            return m.group(1).decode(errors="replace").strip()
        end = start
    return None


def _read_aranges(data: bytes):
    """DWARF 2-5 .debug_aranges, 32-bit format, 4-byte addresses (ELF32): per set a header
    (unit_length u4, version u2, debug_info_offset u4, address_size u1, segment_size u1),
    padding to 8, then (address, length) u4 pairs ending with (0, 0)."""
    import numpy as np
    starts, ends, cus, pos = [], [], [], 0
    while pos + 12 <= len(data):
        length, version, cu, addr_size, seg_size = struct.unpack_from("<IHIBB", data, pos)
        if length >= 0xFFFFFFF0 or addr_size != 4 or seg_size or not 2 <= version <= 5:
            return None                        # 64-bit DWARF or an unusual layout
        body = pos + 16                        # 12-byte header padded to 2 * address_size
        end = pos + 4 + length
        if end > len(data):
            return None
        pairs = np.frombuffer(data[body:end - (end - body) % 8], "<u4").reshape(-1, 2)
        pairs = pairs[pairs[:, 1] != 0]
        starts.append(pairs[:, 0].astype(np.int64))
        ends.append(pairs[:, 0].astype(np.int64) + pairs[:, 1])
        cus.append(np.full(len(pairs), cu, np.int64))
        pos = end
    if not starts:
        return None
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(cus)


def _pc_ranges(top, cu, ranges):
    """A CU's code ranges: DW_AT_ranges (-ffunction-sections), else low_pc/high_pc.
    Entries with is_absolute=False are offsets from the CU's DW_AT_low_pc (DWARF 4 base)."""
    attrs = top.attributes
    low = attrs["DW_AT_low_pc"].value if "DW_AT_low_pc" in attrs else 0
    if "DW_AT_ranges" in attrs and ranges is not None:
        for e in ranges.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu):
            if hasattr(e, "begin_offset"):
                base = 0 if getattr(e, "is_absolute", False) else low
                yield base + e.begin_offset, base + e.end_offset
    elif "DW_AT_high_pc" in attrs:
        high = attrs["DW_AT_high_pc"]
        # DWARF 4+: a constant-class DW_AT_high_pc is a length from DW_AT_low_pc.
        yield low, high.value if high.form == "DW_FORM_addr" else low + high.value


def _attr_text(die, name: str) -> str | None:
    attr = die.attributes.get(name)
    if attr is None:
        return None
    value = attr.value
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _scope_dies(die):
    for child in die.iter_children():
        if child.tag == "DW_TAG_variable":
            yield child
        elif child.tag in _SCOPES:
            yield from _scope_dies(child)


def _location_address(die) -> int | None:
    loc = die.attributes.get("DW_AT_location")
    if loc is None or not isinstance(loc.value, list) or len(loc.value) != 5:
        return None
    if loc.value[0] != DW_OP_addr:
        return None
    return int.from_bytes(bytes(loc.value[1:5]), "little")

"""Which compilation unit defined a symbol: from DWARF when the image has it, else from the
GNU ld map.

- DWARF, for every symbol that has it (`table_units`) and for single symbols (`defined_in`):
  a function's address falls in its unit's .debug_aranges ranges; a variable is the
  DW_TAG_variable whose DW_AT_location is `DW_OP_addr <address>`. Its bytes (`05 03
  <address>`: an exprloc or block1 of length 5) are searched for in .debug_info, and each unit
  holding a hit is walked at file and namespace scope only (weaklink.read.dwarfunits.scan) to
  check the hit is that definition: a call site passing the variable's address
  (DW_AT_call_value) holds the same bytes in another unit. No other unit is read, so the
  newlib and libstdc++ units of an image cost nothing unless they define what is asked.
- Map (weaklink.analyze.mapunits): the defining file, for the symbols DWARF does not cover.
"""
from __future__ import annotations

import bisect
import re
from functools import cached_property
from itertools import compress

from weaklink.analyze.cxxlinkage import FunctionFacts
from weaklink.analyze.mapunits import MapUnits
from weaklink.read import elfstructs as S
from weaklink.read import dwarfpyelf
from weaklink.read.dwarf import DwarfError, dwarf_of
from weaklink.read.dwarfunits import UnitNames
from weaklink.read.image import Image, Symbol

DW_OP_addr = 0x03
OVERLAP_LOOKBACK = 4          # aranges looked at below the last one starting at an address
SEARCHES_BEFORE_INDEX = 8     # a few variables: bytes.find; many: index .debug_info once
# DW_AT_location of a static variable: a 5-byte exprloc/block1 holding DW_OP_addr <4 bytes>.
# The lookahead finds overlapping hits.
_IS_FUNC = [t == S.STT_FUNC for t in range(16)]         # by STT_* type
_ADDR_LOCATION = re.compile(rb"\x05\x03(?=(.{4}))", re.S)


class Attribution:
    def __init__(self, image: Image, link_map=None):
        self.image = image
        self.link_map = link_map
        self.map = MapUnits(link_map)
        self._searches = 0
        self.ambiguous: set[int] = set()     # addresses of variables several units define
        self._names: dict[int, str | None] = {}
        self._header_files: dict[tuple[int, int], bool | None] = {}

    def defined_in(self, sym: Symbol) -> str | None:
        return self._from_dwarf(sym) or self.map.defined_in(sym)

    def many(self, symbols: list[Symbol]) -> dict[int, str]:
        out = {}
        for sym in symbols:
            unit = self.defined_in(sym)
            if unit is not None:
                out[sym.index] = unit
        return out

    def table_units(self, cols) -> dict[int, str]:
        """.symtab index -> unit, from DWARF, for every row of `cols` (SymbolColumns) it
        covers: functions by .debug_aranges, the others by their DW_OP_addr location (only
        the addresses .debug_info holds such a location for are looked at). The rows are
        selected with loops that run in C (compress, map): a large image has 100k+."""
        if not self._has_debug_info:
            return {}
        index, address = cols.index.tolist(), cols.address.tolist()
        is_func = list(map(_IS_FUNC.__getitem__, cols.type.tolist()))
        out = {}
        try:
            rows = list(compress(range(len(index)), is_func))
            out.update(self._function_units([index[k] for k in rows],
                                            [address[k] for k in rows]))
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            pass
        if self._debug_info is None:
            found = self._variables if self._dwarf is not None else {}
        else:
            found = self._location_index
        types, binding = cols.type.tolist(), cols.binding.tolist()
        for k in compress(range(len(index)), map(found.__contains__, address)):
            if is_func[k]:
                continue
            unit = self._from_dwarf(Symbol(index[k], None, binding[k], types[k], address[k],
                                           0, 0))
            if unit is not None:
                out[index[k]] = unit
        return out

    def _function_units(self, index: list, addrs: list) -> dict[int, str]:
        """.symtab index -> unit of functions at `addrs`. With -ffunction-sections every
        function starts a range of its own: the ranges are first looked up by their start
        (a dict), the other addresses by `_function_cu`."""
        table = self._aranges
        if table is None:
            cus = list(map(self._function_cu, addrs))
        else:
            units = table[2]
            cus = [units[k] if k is not None else self._function_cu(a)
                   for a, k in zip(addrs, map(self._arange_at.get, addrs))]
        names = {cu: self._unit_name(cu) for cu in set(cus) if cu is not None}
        names[None] = None
        return {i: u for i, u in zip(index, map(names.__getitem__, cus)) if u is not None}

    def function_facts(self, address: int) -> FunctionFacts | None:
        """What DWARF says of the function defined at `address` (cxxlinkage.FunctionFacts),
        None when no unit with DWARF defines it (or its DWARF is not readable here)."""
        facts = self._function_facts(address)[1]
        return None if facts is None else FunctionFacts(*facts[:3])

    def _function_facts(self, address: int) -> tuple[int | None, tuple | None]:
        """(unit offset, weaklink.read.dwarfunits function_facts) of the function at
        `address`."""
        names = self._unit_names
        if names is None or not self._has_debug_info:
            return None, None
        cu = self._function_cu(address)
        scan = names.scan(cu) if cu is not None else None
        die = scan.functions.get(address) if scan is not None else None
        return cu, (names.function_facts(die) if die is not None else None)

    def function_in_header(self, address: int) -> bool | None:
        """Is the body of the function defined at `address` written in another file than its
        unit's source (a header the unit includes: DW_AT_decl_file against the unit's
        DW_AT_name)? None when the DWARF does not say. Reads the unit's line-program header
        with pyelftools: asked only where nothing cheaper decided."""
        cu, facts = self._function_facts(address)
        if facts is None or facts[3] is None:
            return None
        key = (cu, facts[3])
        if key not in self._header_files:
            try:
                files = self._reader.unit_file(cu, facts[3])
            except DwarfError:
                files = None
            self._header_files[key] = None if files is None else files[0] != files[1]
        return self._header_files[key]

    @property
    def dwarf(self):
        """The image's DWARF reader (weaklink.read.dwarf.Dwarf), or None (no or unreadable
        DWARF)."""
        return self._reader if self._dwarf is not None else None

    def unit_offset(self, sym: Symbol) -> int | None:
        """The .debug_info offset of the compilation unit that defines `sym`, from DWARF only:
        .debug_aranges for a function, the DW_OP_addr bytes for a variable."""
        if self._dwarf is None:
            return None
        try:
            if sym.type == S.STT_FUNC:
                return self._function_cu(sym.address)
            return None if self._debug_info is None else self._variable_cu(sym)
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            return None

    # -- DWARF --------------------------------------------------------------------------------
    @cached_property
    def _has_debug_info(self) -> bool:
        return self.image.elf.find_section(".debug_info") is not None

    @cached_property
    def _reader(self):
        return dwarf_of(self.image.elf)

    @cached_property
    def _dwarf(self):
        """pyelftools' DWARFInfo, for what the direct reader leaves alone; None when the
        image has no DWARF or pyelftools cannot open it."""
        if not self._has_debug_info:
            return None
        try:
            return self._reader.pyelftools()
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            return None

    @cached_property
    def _variables(self) -> dict[int, str]:
        """DW_OP_addr address → CU name, for every variable defined at CU/namespace scope,
        by pyelftools (a compressed .debug_info, which the direct reader does not read)."""
        try:
            with self._reader.guard():
                return dwarfpyelf.variables(self._dwarf)
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            return {}

    def _from_dwarf(self, sym: Symbol) -> str | None:
        """`sym`'s unit from DWARF (a Symbol whose name may be None: looked up when needed)."""
        if not self._has_debug_info:
            return None
        if sym.type == S.STT_FUNC:
            return self._function_unit(sym.address)
        if self._debug_info is None:                 # compressed: walk the DIEs
            return self._variables.get(sym.address) if self._dwarf is not None else None
        cu = self._variable_cu(sym)
        return None if cu is None else self._unit_name(cu)

    @cached_property
    def _debug_info(self) -> bytes | None:
        names = self._unit_names
        if names is not None:
            return names.info
        return self._reader._section(".debug_info")

    @property
    def _unit_starts(self) -> list[int]:
        return self._unit_names.unit_starts if self._unit_names is not None else []

    def _variable_unit(self, address: int, binding: int = S.STB_GLOBAL) -> str | None:
        cu = self._variable_cu(Symbol(-1, None, binding, S.STT_OBJECT, address, 0, 0))
        return None if cu is None else self._unit_name(cu)

    def _variable_cu(self, sym: Symbol) -> int | None:
        """The unit that defines the variable `sym`: see `_variable_units`.

        A weak default and the strong definition that replaced it are both described, at the
        winner's address (their DWARF relocations name the symbol), and DWARF does not say
        which is weak. A weak symbol's unit is the first: ld keeps the first weak definition,
        and .debug_info follows the link order. A strong one's is the unit whose code the
        map places in the object that defines it (`_winner_by_map`); without a map it has
        none (`ambiguous` holds its address)."""
        units = self._variable_units(sym.address)
        if len(units) > 1 and sym.binding != S.STB_WEAK:
            cu = self._winner_by_map(sym, units)
            if cu is None:
                self.ambiguous.add(sym.address)
            return cu
        return units[0] if units else None

    def _variable_units(self, address: int) -> list[int]:
        """Units holding `05 03 <address>` as the location of a DW_TAG_variable, found at
        file or namespace scope by the unit's walk, else (the static data of a function) by
        descending to the hit; a unit the walker cannot read is taken on the bytes alone.
        In .debug_info order."""
        names = self._unit_names
        if names is None or not address:       # 0: the address of discarded COMDAT copies
            return []
        units: list[int] = []
        for hit in self._location_hits(address):
            cu = names.unit_of(hit)
            if cu in units:
                continue
            scan = names.scan(cu)
            if scan is None or address in scan.variables or names.variable_at(hit) is not False:
                units.append(cu)
        return units

    def _winner_by_map(self, sym: Symbol, units: list[int]) -> int | None:
        """Of the units describing `sym`, the one with code (.debug_aranges) or another
        variable (one no other unit describes) in the input sections the map lists for the
        object that defines `sym`; None without a map, or when not exactly one unit has."""
        if not self.map.given:
            return None
        if sym.name is None:
            sym = self.image.symbol(sym.index)
        obj = self.map.defined_in(sym)
        spans = self.map.object_sections(obj) if obj else []
        if not spans:
            return None
        starts = [lo for lo, _ in spans]

        def inside(address: int) -> bool:
            k = bisect.bisect_right(starts, address) - 1
            return k >= 0 and address < spans[k][1]

        hits = [cu for cu in units if any(inside(a) for a in self._unit_addresses(cu, sym))]
        return hits[0] if len(hits) == 1 else None

    def _unit_addresses(self, cu: int, sym: Symbol):
        """Addresses that only unit `cu` describes: its code, and its variables but `sym`
        and those other units describe as well."""
        table = self._aranges
        if table is not None:
            yield from (start for start, unit in zip(table[0], table[2]) if unit == cu)
        scan = self._unit_names.scan(cu)
        for address in (scan.variables if scan is not None else ()):
            if address != sym.address and len(self._variable_units(address)) == 1:
                yield address

    def _unit_name(self, offset: int) -> str | None:
        """DW_AT_name of the unit at .debug_info `offset`: read directly, or by pyelftools
        when the direct reader cannot tell (unusual forms, 64-bit DWARF)."""
        if offset not in self._names:
            self._names[offset] = self._read_unit_name(offset)
        return self._names[offset]

    def _read_unit_name(self, offset: int) -> str | None:
        if not self._has_debug_info:
            return None
        try:
            return self._reader.unit_name(offset)
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            return None

    @cached_property
    def _unit_names(self) -> UnitNames | None:
        return self._reader.units if self._has_debug_info else None

    def _location_hits(self, address: int) -> list[int]:
        """Offsets of every `05 03 <address>` in .debug_info. The first few addresses are
        searched for; after that one pass indexes every DW_OP_addr operand."""
        self._searches += 1
        if self._searches <= SEARCHES_BEFORE_INDEX and "_location_index" not in self.__dict__:
            info, needle, out = self._debug_info, b"\x05\x03" + address.to_bytes(4, "little"), []
            at = info.find(needle)
            while at >= 0:
                out.append(at)
                at = info.find(needle, at + 1)
            return out
        return self._location_index.get(address, [])

    @cached_property
    def _location_index(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for m in _ADDR_LOCATION.finditer(self._debug_info):
            out.setdefault(int.from_bytes(m.group(1), "little"), []).append(m.start())
        return out

    @cached_property
    def _aranges(self):
        """(starts, ends, unit offsets) of .debug_aranges, sorted by start; None when absent
        or unusual. Ranges that start at 0 are the copies ld discarded (COMDAT duplicates,
        --gc-sections: their relocations resolve to 0) unless code really starts at 0."""
        table = self._reader.aranges()
        if table is None:
            return None
        code_at_zero = any(sh.sh_addr == 0 and sh.sh_size and sh.sh_flags & S.SHF_ALLOC
                           and sh.sh_flags & S.SHF_EXECINSTR for sh in self.image.elf.shdrs)
        rows = sorted(r for r in table if r[0] or code_at_zero)
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]

    @cached_property
    def _arange_at(self) -> dict[int, int]:
        """Start address -> position in `_aranges` of the (non-empty) ranges."""
        starts = self._aranges[0]
        return dict(zip(starts, range(len(starts))))

    def _function_cu(self, address: int) -> int | None:
        """The unit whose .debug_aranges range holds `address` (the latest-starting one),
        or without .debug_aranges the unit whose own pc ranges do."""
        table = self._aranges
        if table is None:
            return self._cu_by_pc(address)
        starts, ends, cus = table
        # ld lays input sections end to end, so ranges do not overlap: the one that starts
        # last at or below the address holds it (a few before it are looked at too)
        k = bisect.bisect_right(starts, address) - 1
        for j in range(k, max(k - OVERLAP_LOOKBACK, -1), -1):
            if address < ends[j]:
                return cus[j]
        return None

    def _function_unit(self, address: int) -> str | None:
        try:
            cu = self._function_cu(address)
        except DwarfError:
            return None
        return None if cu is None else self._unit_name(cu)

    def _cu_by_pc(self, address: int) -> int | None:
        if self._dwarf is None:
            return None
        with self._reader.guard():
            ranges = self._dwarf.range_lists()
            for cu in self._dwarf.iter_CUs():
                top = cu.get_top_DIE()
                if any(lo <= address < hi for lo, hi in dwarfpyelf.pc_ranges(top, cu, ranges)):
                    return cu.cu_offset
        return None

    def _unit_by_pc(self, address: int) -> str | None:
        cu = self._cu_by_pc(address)
        return None if cu is None else self._unit_name(cu)

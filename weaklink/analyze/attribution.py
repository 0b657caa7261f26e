"""Which compilation unit defined a symbol: from DWARF when the image has it, else from the
GNU ld map.

- DWARF (weaklink.read.dwarf.addresses), for every symbol that has it (`table_units`) and
  for single symbols (`defined_in`): a function's address falls in its unit's
  .debug_aranges ranges; a variable is the DW_TAG_variable whose DW_AT_location is
  `DW_OP_addr <address>`. A variable several units describe (a weak default and the
  definition that replaced it) is told apart here, with the map.
- Map (weaklink.analyze.mapunits): the defining file, for the symbols DWARF does not cover.
"""
from __future__ import annotations

import bisect
from functools import cached_property
from itertools import compress

from weaklink.analyze.cxxlinkage import FunctionFacts
from weaklink.analyze.mapunits import MapUnits
from weaklink.read import elfstructs as S
from weaklink.read.dwarf import DwarfError, dwarf_of
from weaklink.read.image import Image, Symbol

_IS_FUNC = [t == S.STT_FUNC for t in range(16)]         # by STT_* type


class Attribution:
    def __init__(self, image: Image, link_map=None):
        self.image = image
        self.link_map = link_map
        self.map = MapUnits(link_map)
        self.ambiguous: set[int] = set()     # addresses of variables several units define
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
        where = self._addresses
        if where is None:
            return {}
        index, address = cols.index.tolist(), cols.address.tolist()
        is_func = list(map(_IS_FUNC.__getitem__, cols.type.tolist()))
        rows = list(compress(range(len(index)), is_func))
        cus = where.function_cus([address[k] for k in rows])
        names = {cu: self._reader.unit_name(cu) for cu in set(cus) if cu is not None}
        names[None] = None
        out = {i: u for i, u in zip([index[k] for k in rows], map(names.__getitem__, cus))
               if u is not None}
        found = where.location_index
        types, binding = cols.type.tolist(), cols.binding.tolist()
        for k in compress(range(len(index)), map(found.__contains__, address)):
            if is_func[k]:
                continue
            unit = self._from_dwarf(Symbol(index[k], None, binding[k], types[k], address[k],
                                           0, 0))
            if unit is not None:
                out[index[k]] = unit
        return out

    def function_facts(self, address: int) -> FunctionFacts | None:
        """What DWARF says of the function defined at `address` (cxxlinkage.FunctionFacts),
        None when no unit with DWARF defines it (or its DWARF is not readable here)."""
        facts = self._function_facts(address)[1]
        return None if facts is None else FunctionFacts(*facts[:3])

    def _function_facts(self, address: int) -> tuple[int | None, tuple | None]:
        where = self._addresses
        return (None, None) if where is None else where.function_facts(address)

    def function_in_header(self, address: int) -> bool | None:
        """Is the body of the function defined at `address` written in another file than its
        unit's source (a header the unit includes: DW_AT_decl_file against the unit's
        DW_AT_name)? None when the DWARF does not say. Reads the unit's line-program header:
        asked only where nothing cheaper decided."""
        cu, facts = self._function_facts(address)
        if facts is None or facts[3] is None:
            return None
        key = (cu, facts[3])
        if key not in self._header_files:
            try:
                files = self._reader.sources.unit_file(cu, facts[3])
            except DwarfError:
                files = None
            self._header_files[key] = None if files is None else files[0] != files[1]
        return self._header_files[key]

    @property
    def dwarf(self):
        """The image's DWARF reader (weaklink.read.dwarf.Dwarf), or None (no or unreadable
        DWARF)."""
        return self._reader if self._addresses is not None else None

    def unit_offset(self, sym: Symbol) -> int | None:
        """The .debug_info offset of the compilation unit that defines `sym`, from DWARF only:
        .debug_aranges for a function, the DW_OP_addr bytes for a variable."""
        where = self._addresses
        if where is None:
            return None
        return where.function_cu(sym.address) if sym.type == S.STT_FUNC else \
            self._variable_cu(sym)

    # -- DWARF --------------------------------------------------------------------------------
    @cached_property
    def _reader(self):
        return dwarf_of(self.image.elf)

    @cached_property
    def _addresses(self):
        """The DWARF reader's address questions; None when the image has no DWARF or its
        sections cannot be read."""
        if not self._reader.present:
            return None
        try:
            return self._reader.addresses
        except DwarfError:      # corrupt DWARF: attribution is best effort, never fatal
            return None

    def _from_dwarf(self, sym: Symbol) -> str | None:
        """`sym`'s unit from DWARF (a Symbol whose name may be None: looked up when needed)."""
        cu = self.unit_offset(sym)
        return None if cu is None else self._reader.unit_name(cu)

    def _variable_cu(self, sym: Symbol) -> int | None:
        """The unit that defines the variable `sym` (weaklink.read.dwarf.addresses
        variable_cus).

        A weak default and the strong definition that replaced it are both described, at the
        winner's address (their DWARF relocations name the symbol), and DWARF does not say
        which is weak. A weak symbol's unit is the first: ld keeps the first weak definition,
        and .debug_info follows the link order. A strong one's is the unit whose code the
        map places in the object that defines it (`_winner_by_map`); without a map it has
        none (`ambiguous` holds its address)."""
        units = self._addresses.variable_cus(sym.address)
        if len(units) > 1 and sym.binding != S.STB_WEAK:
            cu = self._winner_by_map(sym, units)
            if cu is None:
                self.ambiguous.add(sym.address)
            return cu
        return units[0] if units else None

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
        where = self._addresses
        yield from where.unit_code(cu)
        scan = where.scans.scan(cu)
        for address in (scan.variables if scan is not None else ()):
            if address != sym.address and len(where.variable_cus(address)) == 1:
                yield address

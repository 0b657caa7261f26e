"""Where a unit's code and definitions sit in the source: its line-number program (the files
and the rows), the file and line a definition is declared at, its global variables'
declarations.

- `unit_file(offset, index)`: a file of the unit's line table beside the unit's own file;
- `declared_at(offset, address, is_function)`: DW_AT_decl_file and DW_AT_decl_line of the DIE
  that defines the function or variable at an address;
- `line_sequences()`, `external_variables()`: the line rows and the global variables of
  every unit (lld's source locations, weaklink.resolve.lld.srcloc).
"""
from __future__ import annotations

import contextlib
import os

from weaklink.read.dwarf.lines import LineHeader, file_path, read_header, sequences
from weaklink.read.dwarf.structs import (DW_AT_abstract_origin, DW_AT_comp_dir,
                                         DW_AT_decl_file, DW_AT_decl_line, DW_AT_external,
                                         DW_AT_linkage_name, DW_AT_location, DW_AT_low_pc,
                                         DW_AT_name, DW_AT_specification, DW_AT_stmt_list,
                                         DW_TAG_subprogram, DW_TAG_variable)
from weaklink.read.dwarf.units import DAMAGE, DebugInfo


class Sources:
    """The source questions of one file's DWARF (`dwarf`: its weaklink.read.dwarf.Dwarf)."""

    def __init__(self, dwarf):
        self.dwarf = dwarf
        self._lines: dict[int, LineHeader | None] = {}

    # -- line-number programs -----------------------------------------------------------------
    def line_table(self, cu: int) -> LineHeader | None:
        """The header of the unit's line-number program (DW_AT_stmt_list); None when the
        unit has none. DwarfError when it cannot be read."""
        if cu not in self._lines:
            info = self.dwarf.info
            with self.dwarf.damage(cu):
                unit, attrs = info.top(cu)
                stmt = attrs.get(DW_AT_stmt_list)
                at = None if stmt is None else info.offset(unit, stmt)
            data = None if at is None else self.dwarf.section(".debug_line")
            with self._damage(at, "a line-number program header of DWARF 2 to 5"):
                self._lines[cu] = None if data is None else read_header(
                    data, at, info.strs, info.line_strs)
        return self._lines[cu]

    def line_sequences(self):
        """(unit offset, LineHeader, its sequences: weaklink.read.dwarf.lines.Sequence) of
        every unit with a line-number program, a unit at a time."""
        for cu in self.dwarf.unit_offsets():
            table = self.line_table(cu)
            if table is not None:
                with self._damage(table.program, "a line-number program that ends "
                                  "inside its section"):
                    found = list(sequences(table))
                yield cu, table, found

    @contextlib.contextmanager
    def _damage(self, at: int | None, expected: str):
        try:
            yield
        except DAMAGE:
            raise self.dwarf.error(".debug_line", at or 0, expected) from None

    def _path(self, cu: int, index: int) -> str | None:
        table = self.line_table(cu)
        if table is None:
            return None
        with self.dwarf.damage(cu):
            comp_dir = self.dwarf.text(cu, self.dwarf.info.top(cu)[1].get(DW_AT_comp_dir))
        return file_path(table, index, comp_dir or "")

    def unit_file(self, offset: int, index: int) -> tuple[str, str] | None:
        """(file `index` of the line-number program of the unit at `offset`, the unit's own
        source file: DW_AT_name), both as paths joined to their directories and the unit's
        DW_AT_comp_dir; None when the unit does not say."""
        dwarf = self.dwarf
        if dwarf.info is None:
            return None
        with dwarf.damage(offset):
            top = dwarf.info.top(offset)[1]
            name, comp_dir = (dwarf.text(offset, top.get(a)) for a in (DW_AT_name,
                                                                      DW_AT_comp_dir))
        path = self._path(offset, index)
        if not name or not path:
            return None
        return os.path.normpath(path), os.path.normpath(os.path.join(comp_dir or "", name))

    # -- declarations -------------------------------------------------------------------------
    def declared_at(self, offset: int, address: int, is_function: bool) -> tuple[str, int] | None:
        """(file, line) where the unit at `offset` defines the function or variable at
        `address`: the DW_TAG_subprogram whose DW_AT_low_pc is the address, or the
        DW_TAG_variable whose DW_AT_location is `DW_OP_addr <address>`; its DW_AT_decl_file
        and DW_AT_decl_line, else those of the declaration it completes
        (DW_AT_specification / DW_AT_abstract_origin)."""
        info = self.dwarf.info
        if info is None:
            return None
        with self.dwarf.damage(offset):
            unit = info.unit(offset)
            die = self._definition(offset, address, is_function)
            if die is None:
                return None
            link = die.get(DW_AT_specification) or die.get(DW_AT_abstract_origin)
            spec = info.die_at(info.reference(unit, link), link[1]) if link else (None, None)
            for attrs, cu in ((die, offset), spec):
                if attrs is not None and DW_AT_decl_line in attrs and DW_AT_decl_file in attrs:
                    line, file = (info.constant(attrs[a]) for a in (DW_AT_decl_line,
                                                                   DW_AT_decl_file))
                    path = self._path(cu, file) if file is not None else None
                    if path:
                        return path, line
        return None

    def _definition(self, cu: int, address: int, is_function: bool) -> dict | None:
        """The attributes of the DIE of unit `cu` that defines the function or variable at
        `address`: found by the unit's file-scope scan, else (a function's static data) by
        walking every DIE."""
        info, scan = self.dwarf.info, self.dwarf.scans.scan(cu)
        unit = info.unit(cu)
        at = None if scan is None else (scan.functions if is_function else
                                        scan.variables).get(address)
        if at is not None:
            return info.die(unit, at)[2]
        return next((attrs for _, tag, attrs, _ in info.dies(cu)
                     if _defines(info, unit, tag, attrs, address, is_function)), None)

    def external_variables(self):
        """(name, unit offset, DW_AT_decl_file, DW_AT_decl_line) of every DW_TAG_variable
        with DW_AT_external, by DW_AT_linkage_name else DW_AT_name; DwarfError after the
        last unit read when one is damaged."""
        dwarf, info = self.dwarf, self.dwarf.info
        for cu in dwarf.unit_offsets():
            with dwarf.damage(cu):
                found = []
                for _, tag, attrs, _ in info.dies(cu):
                    if tag == DW_TAG_variable and attrs.get(DW_AT_external) \
                            and info.constant(attrs[DW_AT_external]):
                        name = dwarf.text(cu, attrs.get(DW_AT_linkage_name)
                                          or attrs.get(DW_AT_name))
                        decl = [info.constant(attrs[a]) if a in attrs else None
                                for a in (DW_AT_decl_file, DW_AT_decl_line)]
                        found.append((name, cu, *decl))
            yield from found


def _defines(info: DebugInfo, unit, tag: int, attrs: dict, address: int,
             is_function: bool) -> bool:
    if is_function:
        low = attrs.get(DW_AT_low_pc) if tag == DW_TAG_subprogram else None
        pc = None if low is None else info.address(unit, low)
        return pc is not None and pc & ~1 == address
    loc = attrs.get(DW_AT_location) if tag == DW_TAG_variable else None
    return loc is not None and info.address_operand(unit, loc) == address

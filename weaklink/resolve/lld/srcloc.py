"""The source line lld adds above a location in its diagnostics (ObjFile::getSrcMsg):

  1. the DWARF line table row for the section and offset: "m.c:4", or, when the line table
     names the file through a directory, "m.c:4 (/abs/dir/m.c:4)" (createFileLineMsg);
  2. else a global variable's declaration (DW_TAG_variable with DW_AT_external): its
     DW_AT_decl_file and DW_AT_decl_line;
  3. else the object's STT_FILE symbol ("m.c"), as gcc writes it even without -g;
  4. else nothing (GNU as objects without a .file directive).

In a relocatable object every section's addresses start at 0, so each line-table sequence is
tied to its section by the relocation on its DW_LNE_set_address (the k-th relocation of
.rel.debug_line against an allocated section belongs to the k-th sequence).
"""
from __future__ import annotations

import bisect
import os
from functools import cached_property

from weaklink.read import elfstructs as S
from weaklink.read.dwarf import DwarfError, dwarf_of
from weaklink.read.dwarf.lines import LineHeader


def file_line_message(path: str, line: int) -> str:
    name = os.path.basename(path)
    if name == path:
        return f"{name}:{line}"
    return f"{name}:{line} ({path}:{line})"


class SourceLocator:
    def __init__(self, obj):
        self.obj = obj

    def message(self, shndx: int, offset: int, name: str | None) -> str:
        """lld's source line for `offset` in section `shndx`, about symbol `name`; "" if none."""
        hit = self._line(shndx, offset)
        if hit is None and name is not None:
            hit = self._variables.get(name)
        if hit is not None:
            return file_line_message(*hit)
        return self._source_file

    # -- STT_FILE --------------------------------------------------------------------------------
    @cached_property
    def _source_file(self) -> str:
        elf = self.obj.elf
        first = next((k for k, s in enumerate(elf.symbol_entries) if s[3] & 0xF == S.STT_FILE), None)
        return elf.symbol_name(first) if first is not None else ""

    # -- DWARF -----------------------------------------------------------------------------------
    @cached_property
    def _dwarf(self):
        if self.obj.elf.find_section(".debug_line") is None:
            return None
        return dwarf_of(self.obj.elf)

    def _sequence_sections(self) -> list[int]:
        """Section index of each DW_LNE_set_address, in order."""
        elf = self.obj.elf
        sh, syms = elf.shdrs, elf.symbol_entries
        rel = elf.find_section(".rel.debug_line")
        if rel is None:
            return []
        rows = sorted(elf.relocation_entries(rel), key=lambda r: r[0])     # stable
        shndx = [syms[r[1] >> 8][5] for r in rows]
        return [i for i in shndx if 0 < i < len(sh) and sh[i].sh_flags & S.SHF_ALLOC]

    @cached_property
    def _rows(self) -> dict[int, list]:
        """Section -> sequences [(addresses, rows [(line, path)], end address)]."""
        out: dict[int, list] = {}
        if self._dwarf is None:
            return out
        sections = iter(self._sequence_sections())
        try:
            for _, table, found in self._dwarf.sources.line_sequences():
                names = _file_names(table)
                for seq in found:
                    section = None
                    for _ in range(seq.set_addresses):
                        section = next(sections, None)
                    if section is not None:
                        out.setdefault(section, []).append(
                            ([a for a, _, _ in seq.rows],
                             [(line, names.get(f)) for _, f, line in seq.rows], seq.end))
        except DwarfError:          # unreadable DWARF: the rows read so far
            pass
        return out

    def _line(self, shndx: int, offset: int):
        for addrs, rows, end in self._rows.get(shndx, ()):
            if addrs and addrs[0] <= offset < end:
                line, path = rows[bisect.bisect_right(addrs, offset) - 1]
                return (path, line) if path else None
        return None

    @cached_property
    def _variables(self) -> dict[str, tuple[str, int]]:
        """A global variable's name -> (file, line) of its DW_AT_decl_file, DW_AT_decl_line."""
        out: dict[str, tuple[str, int]] = {}
        if self._dwarf is None:
            return out
        names: dict[int, dict[int, str]] = {}
        try:
            for name, cu, file, line in self._dwarf.sources.external_variables():
                if cu not in names:
                    table = self._dwarf.sources.line_table(cu)
                    names[cu] = _file_names(table) if table is not None else {}
                path = names[cu].get(file or 0)
                if path and name:
                    out.setdefault(name, (path, int(line or 0)))
        except DwarfError:          # unreadable DWARF: the variables read so far
            pass
        return out


def _file_names(table: LineHeader) -> dict[int, str]:
    """File index -> the name lld prints: absolute names as they are, names under an include
    directory joined with it, names under the compilation directory (index 0) bare."""
    version, dirs = table.version, table.dirs
    out = {}
    for i, (name, d) in enumerate(table.files, 0 if version >= 5 else 1):
        base = dirs[d - 1] if version < 5 and 0 < d <= len(dirs) else (
            dirs[d] if version >= 5 and 0 < d < len(dirs) else "")
        out[i] = name if os.path.isabs(name) or not base else f"{base}/{name}"
    return out

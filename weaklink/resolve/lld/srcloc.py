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

import numpy as np

from weaklink.read import elfarrays, elfstructs as S
from weaklink.read.dwarf import DwarfError, dwarf_of

DW_LNE_set_address = 2


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
        syms = elf.symbols
        if not len(syms):
            return ""
        files = np.flatnonzero((syms["st_info"] & 0xF) == S.STT_FILE)
        return elf.symbol_names(files[:1])[0] if len(files) else ""

    # -- DWARF -----------------------------------------------------------------------------------
    @cached_property
    def _dwarf(self):
        if self.obj.elf.find_section(".debug_line") is None:
            return None
        try:
            return dwarf_of(self.obj.elf).pyelftools(relocate=False)
        except DwarfError:          # unreadable DWARF: lld would fall back too
            return None

    def _sequence_sections(self) -> list[int]:
        """Section index of each DW_LNE_set_address, in order."""
        elf = self.obj.elf
        sh = elf.sections
        rel = elf.find_section(".rel.debug_line")
        if rel is None:
            return []
        n = int(sh["sh_size"][rel]) // elfarrays.REL.itemsize
        rows = np.frombuffer(elf.data, elfarrays.REL, count=n, offset=int(sh["sh_offset"][rel]))
        rows = rows[np.argsort(rows["r_offset"], kind="stable")]
        shndx = elf.symbols["st_shndx"][(rows["r_info"] >> 8).astype(np.int64)]
        flags = sh["sh_flags"][np.minimum(shndx, len(sh) - 1)]
        keep = (shndx > 0) & (shndx < len(sh)) & ((flags & S.SHF_ALLOC) != 0)
        return shndx[keep].astype(int).tolist()

    @cached_property
    def _rows(self) -> dict[int, list]:
        """Section -> sequences [(addresses, rows [(line, path)], end address)]."""
        out: dict[int, list] = {}
        dwarf = self._dwarf
        if dwarf is None:
            return out
        sections = iter(self._sequence_sections())
        try:
            with dwarf_of(self.obj.elf).guard():
                self._read_rows(dwarf, sections, out)
        except DwarfError:          # unreadable DWARF: the rows read so far
            pass
        return out

    @staticmethod
    def _read_rows(dwarf, sections, out: dict) -> None:
        for cu in dwarf.iter_CUs():
            lp = dwarf.line_program_for_CU(cu)
            if lp is None:
                continue
            names = _file_names(lp)
            section, addrs, rows = None, [], []
            for entry in lp.get_entries():
                if entry.is_extended and entry.command == DW_LNE_set_address:
                    section = next(sections, None)
                st = entry.state
                if st is None:
                    continue
                if st.end_sequence:
                    if section is not None:
                        out.setdefault(section, []).append((addrs, rows, st.address))
                    section, addrs, rows = None, [], []
                    continue
                addrs.append(st.address)
                rows.append((st.line, names.get(st.file)))

    def _line(self, shndx: int, offset: int):
        for addrs, rows, end in self._rows.get(shndx, ()):
            if addrs and addrs[0] <= offset < end:
                line, path = rows[bisect.bisect_right(addrs, offset) - 1]
                return (path, line) if path else None
        return None

    @cached_property
    def _variables(self) -> dict[str, tuple[str, int]]:
        dwarf, out = self._dwarf, {}
        if dwarf is None:
            return out
        try:
            with dwarf_of(self.obj.elf).guard():
                for cu in dwarf.iter_CUs():
                    self._read_variables(dwarf, cu, out)
        except DwarfError:          # unreadable DWARF: the variables read so far
            pass
        return out

    @staticmethod
    def _read_variables(dwarf, cu, out: dict) -> None:
        lp = dwarf.line_program_for_CU(cu)
        names = _file_names(lp) if lp is not None else {}
        for die in cu.iter_DIEs():
            if die.tag != "DW_TAG_variable" or not _attr(die, "DW_AT_external"):
                continue
            path = names.get(_attr(die, "DW_AT_decl_file") or 0)
            name = _attr(die, "DW_AT_linkage_name") or _attr(die, "DW_AT_name")
            if path and name:
                name = name.decode() if isinstance(name, bytes) else str(name)
                out.setdefault(name, (path, int(_attr(die, "DW_AT_decl_line") or 0)))


def _attr(die, key):
    a = die.attributes.get(key)
    return None if a is None else a.value


def _file_names(lp) -> dict[int, str]:
    """File index -> the name lld prints: absolute names as they are, names under an include
    directory joined with it, names under the compilation directory (index 0) bare."""
    version = lp.header["version"]
    dirs = [d.decode() if isinstance(d, bytes) else d for d in lp.header["include_directory"]]
    out = {}
    for i, fe in enumerate(lp.header["file_entry"], 0 if version >= 5 else 1):
        name = fe.name.decode() if isinstance(fe.name, bytes) else fe.name
        d = fe.dir_index
        base = dirs[d - 1] if version < 5 and 0 < d <= len(dirs) else (
            dirs[d] if version >= 5 and 0 < d < len(dirs) else "")
        out[i] = name if os.path.isabs(name) or not base else f"{base}/{name}"
    return out

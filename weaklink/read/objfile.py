"""The view of an ELF relocatable object that symbol resolution needs, built on ElfFile.

Only global (non-local) symbols take part in cross-file resolution (ELF gABI: STB_LOCAL never
satisfies another file's reference), so `ObjectFile` keeps just those: `rows` of plain values
for the resolver (read from one numpy view of the global part of .symtab), and numpy columns
on demand. COMDAT groups and the symbols that relocations refer to are read on demand too.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from weaklink.errors import InputError, read_input
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile

# Symbol kinds as the linker sees an incoming symbol (linker_semantics.md §1.1).
K_UNDEF, K_COMMON, K_DEFINED, K_ABS = 0, 1, 2, 3
KIND_NAMES = ("undefined", "common", "defined", "absolute")

REL = np.dtype([("r_offset", "<u4"), ("r_info", "<u4")])
RELA = np.dtype([("r_offset", "<u4"), ("r_info", "<u4"), ("r_addend", "<i4")])


@dataclass(frozen=True, slots=True)
class ComdatGroup:
    """A COMDAT section group: ld keeps the first group with a signature (ELF gABI §4.9)."""
    signature: str
    sections: tuple[int, ...]


class ObjectFile:
    """Global symbols of one relocatable object: `rows` for resolution, numpy columns on demand.

    The symbol table is read with one numpy view and one `tolist()`; the per-symbol pass is
    plain Python because objects hold few globals and per-call numpy overhead would dominate
    (see benchmarks/bench_link.py)."""

    def __init__(self, elf: ElfFile, archive_offset: int | None = None):
        self.elf = elf
        self.name = elf.name
        self.archive_offset = archive_offset
        if elf.e_type != S.ET_REL:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected 1 (relocatable object)", 16)
        types = elf.sections["sh_type"].tolist() if len(elf.sections) else []
        # ElfFile.symtab_index, found without a numpy pass (hot path: one call per object)
        elf.__dict__.setdefault("symtab_index",
                                types.index(S.SHT_SYMTAB) if S.SHT_SYMTAB in types else None)
        syms = elf.symbols
        first = 0
        if len(syms):   # gABI: locals come first, sh_info = index of the first non-local
            first = min(int(elf.sections[elf.symtab_index]["sh_info"]), len(syms))
        self.rows, self._index = self._read_globals(syms[first:].tolist(), first)

    @cached_property
    def index(self) -> np.ndarray:
        """Symbol-table index of each global (row i)."""
        return np.array(self._index, np.int64)

    @cached_property
    def names(self) -> list[str]:
        return [r[0] for r in self.rows]

    def _read_globals(self, raw: list[tuple], first: int) -> tuple[list[tuple], list[int]]:
        """(name, kind, weak, size, shndx, value) per global symbol, and its symtab index."""
        strtab, nsec = self.elf.symbol_strtab, len(self.elf.sections)
        size_tab = len(strtab)
        # ASCII string tables (the norm) are decoded once; str offsets then equal byte offsets
        text = strtab.decode("ascii") if strtab.isascii() else None
        ext = None
        rows, index = [], []
        for i, (nm, value, size, info, _, sh) in enumerate(raw, first):
            bind = info >> 4
            if bind == S.STB_LOCAL or nm == 0:
                continue
            if nm >= size_tab:
                raise InputError(self.name, f"symbol {i} name offset {nm} out of range (string "
                                 f"table has {size_tab} bytes)", self._sym_offset_at(i))
            if text is not None:
                end = text.find("\0", nm)
                name = text[nm:end if end >= 0 else size_tab]
            else:
                end = strtab.find(b"\0", nm)
                name = strtab[nm:end if end >= 0 else size_tab].decode("utf-8", "replace")
            if sh == S.SHN_XINDEX:
                ext = self.elf.symbol_section_indices() if ext is None else ext
                sh = int(ext[i])
            if sh == S.SHN_UNDEF:
                kind = K_UNDEF
            elif sh == S.SHN_COMMON or info & 0xF == S.STT_COMMON:
                kind = K_COMMON
            elif sh == S.SHN_ABS:
                kind = K_ABS
            elif sh >= nsec and sh < S.SHN_LORESERVE:
                raise InputError(self.name, f"symbol {name!r} section index {sh} out of range "
                                 f"({nsec} sections)", self._sym_offset_at(i))
            else:
                kind = K_DEFINED
            rows.append((name, kind, bind == S.STB_WEAK, size, sh, value))
            index.append(i)
        return rows, index

    def _sym_offset_at(self, i: int) -> int:
        sh = self.elf.sections[self.elf.symtab_index]
        return int(sh["sh_offset"]) + i * S.SYM.itemsize

    # -- numpy columns, for analysis (resolution itself uses `rows`) ----------------------------
    @cached_property
    def _globals(self) -> np.ndarray:
        return self.elf.symbols[self.index]

    @cached_property
    def binding(self) -> np.ndarray:
        return (self._globals["st_info"] >> 4).astype(np.uint8)

    @cached_property
    def stype(self) -> np.ndarray:
        return (self._globals["st_info"] & 0xF).astype(np.uint8)

    @cached_property
    def size(self) -> np.ndarray:
        return np.array([r[3] for r in self.rows], np.int64)

    @cached_property
    def value(self) -> np.ndarray:
        return np.array([r[5] for r in self.rows], np.int64)

    @cached_property
    def shndx(self) -> np.ndarray:
        return np.array([r[4] for r in self.rows], np.uint32)

    @cached_property
    def kind(self) -> np.ndarray:
        return np.array([r[1] for r in self.rows], np.uint8)

    @classmethod
    def from_bytes(cls, data: bytes, name: str, archive_offset: int | None = None) -> "ObjectFile":
        try:
            return cls(ElfFile(data, name), archive_offset)
        except (IndexError, ValueError, OverflowError) as exc:
            # a table index or size that the field checks above do not cover
            raise InputError(name, f"corrupt ELF object: {exc}") from None

    @classmethod
    def from_path(cls, path: str | Path, name: str | None = None) -> "ObjectFile":
        return cls.from_bytes(read_input(path, name=name), name or str(path))

    @cached_property
    def by_name(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}

    def is_global_data_definition(self, name: str) -> bool:
        """bfd/elflink.c is_global_data_symbol_definition: STB_GLOBAL (or OS-specific),
        not a function, not undefined, not common, not in a processor-specific section."""
        i = self.by_name.get(name)
        if i is None:
            return False
        b, t, sh = int(self.binding[i]), int(self.stype[i]), self.rows[i][4]
        if b != S.STB_GLOBAL and b < 10:
            return False
        if t == S.STT_FUNC or t == 10 or sh == S.SHN_UNDEF or self.rows[i][1] == K_COMMON:
            return False
        return not (S.SHN_LORESERVE <= sh < S.SHN_ABS)

    def section_name(self, shndx: int) -> str | None:
        if shndx == S.SHN_ABS:
            return "*ABS*"
        if shndx == S.SHN_COMMON:
            return "COMMON"
        if shndx == S.SHN_UNDEF or shndx >= len(self.elf.sections):
            return None
        hit = self._section_names.get(shndx)
        if hit is None:
            hit = self._section_names[shndx] = self.elf.section_name(shndx)
        return hit

    @cached_property
    def _section_names(self) -> dict[int, str]:
        return {}

    # -- COMDAT groups and relocations ---------------------------------------------------------
    @cached_property
    def comdat_groups(self) -> tuple[ComdatGroup, ...]:
        sh = self.elf.sections
        types = sh["sh_type"].tolist() if len(sh) else []
        if S.SHT_GROUP not in types:
            return ()
        out = []
        for i in [k for k, t in enumerate(types) if t == S.SHT_GROUP]:
            words = np.frombuffer(self.elf.section_bytes(i)[: int(sh["sh_size"][i]) // 4 * 4], "<u4")
            if not len(words) or not int(words[0]) & S.GRP_COMDAT:
                continue
            out.append(ComdatGroup(self._group_signature(i), (i, *words[1:].tolist())))
        return tuple(out)

    @cached_property
    def section_table(self) -> "SectionTable":
        """Input sections, their groups and relocation targets (for --gc-sections)."""
        return SectionTable(self)

    def _group_signature(self, i: int) -> str:
        sh = self.elf.sections[i]
        where = int(self.elf.header["e_shoff"]) + i * S.SHDR.itemsize
        if int(sh["sh_link"]) != self.elf.symtab_index:
            raise InputError(self.name, f"group section {i} links to section "
                             f"{int(sh['sh_link'])}, not the symbol table", where + 24)
        k = int(sh["sh_info"])
        if k >= len(self.elf.symbols):
            raise InputError(self.name, f"group section {i} signature symbol {k} out of range",
                             where + 28)
        return self.elf.symbol_names(np.array([k]))[0]

    def relocated_names(self, dead_sections: frozenset[int] = frozenset()) -> set[str]:
        """Global symbols referenced by a relocation in a live SHF_ALLOC section: where ld
        reports undefined references (ldmain.c undefined_symbol runs per relocation)."""
        sh = self.elf.sections
        if not len(sh):
            return set()
        is_rel = (sh["sh_type"] == S.SHT_REL) | (sh["sh_type"] == S.SHT_RELA)
        idx_by_sym = {}
        for i in np.flatnonzero(is_rel).tolist():
            target = int(sh["sh_info"][i])
            if target in dead_sections or target >= len(sh) \
                    or not int(sh["sh_flags"][target]) & S.SHF_ALLOC:
                continue
            dt = REL if int(sh["sh_type"][i]) == S.SHT_REL else RELA
            n = int(sh["sh_size"][i]) // dt.itemsize
            rel = np.frombuffer(self.elf.data, dt, count=n, offset=int(sh["sh_offset"][i]))
            idx_by_sym[i] = np.unique(rel["r_info"] >> 8)
        if not idx_by_sym:
            return set()
        used = np.unique(np.concatenate(list(idx_by_sym.values())))
        hit = np.isin(self.index, used)
        return {self.names[k] for k in np.flatnonzero(hit).tolist()}


# -- sections and relocations, for garbage collection (read only when --gc-sections asks) --------
R_ARM_GNU_VTENTRY, R_ARM_GNU_VTINHERIT = 100, 101
# Sections that are not input sections of a link: tables the linker folds into others.
_NOT_INPUT = frozenset((S.SHT_NULL, S.SHT_SYMTAB, S.SHT_STRTAB, S.SHT_REL, S.SHT_RELA,
                        S.SHT_SYMTAB_SHNDX, S.SHT_GROUP))


@dataclass(frozen=True, slots=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    size: int
    link: int
    group: int          # index of the SHT_GROUP section holding it, or 0


class SectionTable:
    """The input sections of one object and the symbols their relocations use, read lazily
    from an ObjectFile (linker-neutral: GNU ld's and lld's GC both use it)."""

    def __init__(self, obj: "ObjectFile"):
        self.obj = obj
        elf = obj.elf
        sh = elf.sections
        cols = [sh[k].tolist() for k in ("sh_type", "sh_flags", "sh_size", "sh_link", "sh_info")]
        self._raw = list(zip(*cols)) if len(sh) else []
        group_of, order = {}, {}
        for i, (t, *_rest) in enumerate(self._raw):
            if t == S.SHT_GROUP:
                n = int(sh["sh_size"][i]) // 4
                words = np.frombuffer(elf.data, "<u4", count=n, offset=int(sh["sh_offset"][i]))
                for m in words[1:].tolist():
                    group_of.setdefault(m, i)
                order[i] = words[1:].tolist()
        # SHT_GROUP sections are input sections too (ld sweeps them with their first member)
        self.sections: list[Section] = [
            Section(i, elf.section_name(i), t, f, size, link, group_of.get(i, 0))
            for i, (t, f, size, link, _) in enumerate(self._raw)
            if t not in _NOT_INPUT or t == S.SHT_GROUP]
        self.by_index = {s.index: s for s in self.sections}
        self.group_members = {g: [m for m in ms if m in self.by_index and
                                  self.by_index[m].type != S.SHT_GROUP]
                              for g, ms in order.items()}
        self._rel: dict[int, list[int]] = {}
        for i, (t, _, _, _, target) in enumerate(self._raw):
            if t in (S.SHT_REL, S.SHT_RELA):
                self._rel.setdefault(target, []).append(i)

    def group_signature(self, group: int) -> str:
        return self.obj._group_signature(group)

    @cached_property
    def _symbol_shndx(self) -> list[int]:
        """Section index of every symbol (SHN_XINDEX resolved)."""
        elf = self.obj.elf
        if not len(elf.symbols):
            return []
        out = elf.symbols["st_shndx"].astype(np.int64)
        if (out == S.SHN_XINDEX).any():
            out = elf.symbol_section_indices().astype(np.int64)
        return out.tolist()

    @cached_property
    def _global_row(self) -> dict[int, int]:
        return {k: r for r, k in enumerate(self.obj._index)}

    def relocations(self, index: int) -> tuple[list[int], list[int]]:
        """(r_offset, symbol-table index) of every relocation applying to section `index`,
        in file order (where a linker reports an undefined symbol)."""
        offsets, symbols = [], []
        elf = self.obj.elf
        for r in self._rel.get(index, ()):
            t, _, size, _, _ = self._raw[r]
            dt = REL if t == S.SHT_REL else RELA
            rel = np.frombuffer(elf.data, dt, count=size // dt.itemsize,
                                offset=int(elf.sections["sh_offset"][r]))
            offsets += rel["r_offset"].tolist()
            symbols += (rel["r_info"] >> 8).tolist()
        return offsets, symbols

    def references(self, index: int) -> tuple[list[int], list[int]]:
        """What the relocations of section `index` point at: sections of this file (local
        symbols) and rows of global symbols (ObjectFile.rows). GNU C++ vtable-GC relocations
        are skipped."""
        local, names = [], []
        elf, glob = self.obj.elf, self._global_row
        shndx = self._symbol_shndx
        nsym = len(shndx)
        for r in self._rel.get(index, ()):
            t, _, size, _, _ = self._raw[r]
            dt = REL if t == S.SHT_REL else RELA
            off = int(elf.sections["sh_offset"][r])
            info = np.frombuffer(elf.data, dt, count=size // dt.itemsize, offset=off)["r_info"]
            types = (info & 0xFF).tolist()
            for k, ty in zip((info >> 8).tolist(), types):
                if ty in (R_ARM_GNU_VTENTRY, R_ARM_GNU_VTINHERIT) or k == 0 or k >= nsym:
                    continue
                row = glob.get(k)
                if row is not None:
                    names.append(row)
                else:
                    sec = shndx[k]
                    if 0 < sec < S.SHN_LORESERVE:
                        local.append(sec)
        return local, names

"""The view of an ELF relocatable object that symbol resolution needs, built on ElfFile.

Only global (non-local) symbols take part in cross-file resolution (ELF gABI: STB_LOCAL never
satisfies another file's reference), so `ObjectFile` keeps just those: `rows` of plain values
for the resolver, unpacked with struct from the global part of .symtab (numpy is not imported
on the link path). COMDAT groups and the symbols that relocations refer to are read on demand too.
"""
from __future__ import annotations

import struct
from collections import namedtuple
from functools import cached_property
from pathlib import Path

from weaklink.errors import InputError, read_input
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile
from weaklink.read.elfstructs import (SHN_ABS, SHN_COMMON, SHN_LORESERVE, SHN_UNDEF, SHN_XINDEX,
                                      STB_LOCAL, STB_WEAK, STT_COMMON)

# Symbol kinds as the linker sees an incoming symbol (docs/linker-semantics.md §1.1).
K_UNDEF, K_COMMON, K_DEFINED, K_ABS = 0, 1, 2, 3

_SYM = struct.Struct(S.struct_format(S.SYM_FIELDS))


class ComdatGroup(namedtuple("ComdatGroup", "signature sections")):
    """A COMDAT section group: ld keeps the first group with a signature
    (docs/linker-semantics.md §1.3)."""
    __slots__ = ()


def _words(data, offset: int, size: int) -> list[int]:
    """The little-endian 32-bit words of `size` bytes at `offset` (a group's flag and members)."""
    n = size // 4
    return list(struct.unpack_from(f"<{n}I", data, offset)) if n else []


class ObjectFile:
    """Global symbols of one relocatable object: `rows` for resolution.

    The global part of the symbol table is unpacked with struct in one call; the per-symbol
    pass is plain Python: objects hold few globals (see benchmarks/bench_link.py)."""

    def __init__(self, elf: ElfFile):
        self.elf = elf
        self.name = elf.name
        if elf.e_type != S.ET_REL:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected 1 (relocatable object)", 16)
        offset, count = elf.symtab_span
        first = 0
        if count:   # gABI: locals come first, sh_info = index of the first non-local
            first = min(elf.shdrs[elf.symtab_index].sh_info, count)
        self.first_global = first
        raw = list(_SYM.iter_unpack(elf.data[offset + first * S.SYM_SIZE:
                                             offset + count * S.SYM_SIZE])) if count else []
        self.rows, self.index = self._read_globals(raw, first)

    @cached_property
    def names(self) -> list[str]:
        return [r[0] for r in self.rows]

    @property
    def symbol_table(self) -> list[tuple]:
        """Every Elf32_Sym of .symtab as a tuple (ElfFile.symbol_entries): diagnostics and GC
        read locals too."""
        return self.elf.symbol_entries

    def symbol_name(self, k: int) -> str:
        return self.elf.symbol_name(k)

    @cached_property
    def section_indices(self) -> list[int]:
        """Section index of every symbol, SHN_XINDEX entries replaced by their extended index
        (SHT_SYMTAB_SHNDX, objects with more than 65279 sections)."""
        shndx = [s[5] for s in self.symbol_table]
        if S.SHN_XINDEX in shndx:
            span = self.elf.symtab_shndx_span
            if span is None or span[1] < len(shndx):
                raise InputError(self.name, f"extended section index table has "
                                 f"{span[1] if span else 0} entries, expected {len(shndx)} "
                                 f"(one per symbol)")
            ext = _words(self.elf.data, span[0], len(shndx) * 4)
            shndx = [e if s == S.SHN_XINDEX else s for s, e in zip(shndx, ext)]
        return shndx

    def _read_globals(self, raw: list[tuple], first: int) -> tuple[list[tuple], list[int]]:
        """(name, kind, weak, size, shndx, value) per global symbol, and its symtab index."""
        strtab, nsec = self.elf.symbol_strtab, len(self.elf.shdrs)
        size_tab = len(strtab)
        # ASCII string tables (the norm) are decoded once; str offsets then equal byte offsets
        text = strtab.decode("ascii") if strtab.isascii() else None
        rows, index = [], []
        for i, (nm, value, size, info, _, sh) in enumerate(raw, first):
            bind = info >> 4
            if bind == STB_LOCAL or nm == 0:
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
            if sh == SHN_XINDEX:
                sh = self.section_indices[i]
            if sh == SHN_UNDEF:
                kind = K_UNDEF
            elif sh == SHN_COMMON or info & 0xF == STT_COMMON:
                kind = K_COMMON
            elif sh == SHN_ABS:
                kind = K_ABS
            elif sh >= nsec and sh < SHN_LORESERVE:
                raise InputError(self.name, f"symbol {name!r} section index {sh} out of range "
                                 f"({nsec} sections)", self._sym_offset_at(i))
            else:
                kind = K_DEFINED
            rows.append((name, kind, bind == STB_WEAK, size, sh, value))
            index.append(i)
        return rows, index

    def _sym_offset_at(self, i: int) -> int:
        return self.elf.symtab_span[0] + i * S.SYM_SIZE

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> "ObjectFile":
        try:
            return cls(ElfFile(data, name))
        except (IndexError, ValueError, OverflowError, struct.error) as exc:
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
        info = self.symbol_table[self.index[i]][3]
        b, t, sh = info >> 4, info & 0xF, self.rows[i][4]
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
        if shndx == S.SHN_UNDEF or shndx >= len(self.elf.shdrs):
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
        out = []
        for i, sh in enumerate(self.elf.shdrs):
            if sh.sh_type != S.SHT_GROUP:
                continue
            words = _words(self.elf.data, sh.sh_offset, sh.sh_size)
            if not words or not words[0] & S.GRP_COMDAT:
                continue
            out.append(ComdatGroup(self.group_signature(i), (i, *words[1:])))
        return tuple(out)

    @cached_property
    def section_table(self) -> "SectionTable":
        """Input sections, their groups and relocation targets (for --gc-sections)."""
        return SectionTable(self)

    def group_signature(self, i: int) -> str:
        """The signature (symbol name) of SHT_GROUP section `i`."""
        sh = self.elf.shdrs[i]
        where = self.elf.shdr_offset(i)
        if sh.sh_link != self.elf.symtab_index:
            raise InputError(self.name, f"group section {i} links to section "
                             f"{sh.sh_link}, not the symbol table", where + 24)
        k = sh.sh_info
        if k >= self.elf.symtab_span[1]:
            raise InputError(self.name, f"group section {i} signature symbol {k} out of range",
                             where + 28)
        nm = self.symbol_table[k][0]
        if nm >= len(self.elf.symbol_strtab) and nm:
            raise InputError(self.name, f"symbol {k} name offset {nm} out of range (string "
                             f"table has {len(self.elf.symbol_strtab)} bytes)", self._sym_offset_at(k))
        return self.symbol_name(k)

    def relocation_entries(self, rel: int) -> list[tuple]:
        return self.elf.relocation_entries(rel)

    def relocated_names(self, dead_sections: frozenset[int] = frozenset()) -> set[str]:
        """Global symbols referenced by a relocation in a live SHF_ALLOC section: where ld
        reports undefined references (ldmain.c undefined_symbol runs per relocation)."""
        shdrs = self.elf.shdrs
        used = set()
        for i, sh in enumerate(shdrs):
            if sh.sh_type not in (S.SHT_REL, S.SHT_RELA):
                continue
            target = sh.sh_info
            if target in dead_sections or target >= len(shdrs) \
                    or not shdrs[target].sh_flags & S.SHF_ALLOC:
                continue
            used.update(e[1] >> 8 for e in self.relocation_entries(i))
        return {self.names[k] for k, i in enumerate(self.index) if i in used}


# -- sections and relocations, for garbage collection (read only when --gc-sections asks) --------
R_ARM_GNU_VTENTRY, R_ARM_GNU_VTINHERIT = 100, 101
# Sections that are not input sections of a link: tables the linker folds into others.
_NOT_INPUT = frozenset((S.SHT_NULL, S.SHT_SYMTAB, S.SHT_STRTAB, S.SHT_REL, S.SHT_RELA,
                        S.SHT_SYMTAB_SHNDX, S.SHT_GROUP))


class Section(namedtuple("Section", "index name type flags size link group")):
    """group: index of the SHT_GROUP section holding it, or 0."""
    __slots__ = ()


class SectionTable:
    """The input sections of one object and the symbols their relocations use, read lazily
    from an ObjectFile (linker-neutral: GNU ld's and lld's GC both use it)."""

    def __init__(self, obj: "ObjectFile"):
        self.obj = obj
        elf = obj.elf
        self._raw = [(h.sh_type, h.sh_flags, h.sh_size, h.sh_link, h.sh_info) for h in elf.shdrs]
        group_of, order = {}, {}
        for i, h in enumerate(elf.shdrs):
            if h.sh_type == S.SHT_GROUP:
                words = _words(elf.data, h.sh_offset, h.sh_size)
                for m in words[1:]:
                    group_of.setdefault(m, i)
                order[i] = words[1:]
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

    @cached_property
    def _global_row(self) -> dict[int, int]:
        return {k: r for r, k in enumerate(self.obj.index)}

    def relocations(self, index: int) -> tuple[list[int], list[int]]:
        """(r_offset, symbol-table index) of every relocation applying to section `index`,
        in file order (where a linker reports an undefined symbol)."""
        offsets, symbols = [], []
        for r in self._rel.get(index, ()):
            for e in self.obj.relocation_entries(r):
                offsets.append(e[0])
                symbols.append(e[1] >> 8)
        return offsets, symbols

    def references(self, index: int) -> tuple[list[int], list[int]]:
        """What the relocations of section `index` point at: sections of this file (local
        symbols) and rows of global symbols (ObjectFile.rows). GNU C++ vtable-GC relocations
        are skipped."""
        local, names = [], []
        glob = self._global_row
        shndx = self.obj.section_indices
        nsym = len(shndx)
        for r in self._rel.get(index, ()):
            for e in self.obj.relocation_entries(r):
                k, ty = e[1] >> 8, e[1] & 0xFF
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

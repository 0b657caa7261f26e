"""The view of an ELF relocatable object that symbol resolution needs, built on ElfFile.

Only global (non-local) symbols take part in cross-file resolution (ELF gABI: STB_LOCAL never
satisfies another file's reference), so `ObjectFile` keeps just those, as parallel numpy
columns plus a `kind` column computed in one vectorised pass. COMDAT groups and the symbols
that relocations refer to are read on demand.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from weaklink.errors import InputError
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
    """Global symbols of one relocatable object, as columns (index i = i-th global symbol)."""

    def __init__(self, elf: ElfFile, archive_offset: int | None = None):
        self.elf = elf
        self.name = elf.name
        self.archive_offset = archive_offset
        if elf.e_type != S.ET_REL:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected 1 (relocatable object)", 16)
        syms = elf.symbols
        bind = syms["st_info"] >> 4 if len(syms) else np.zeros(0, np.uint8)
        self.index = np.flatnonzero((bind != S.STB_LOCAL) & (syms["st_name"] != 0)) if len(syms) \
            else np.zeros(0, np.int64)
        g = syms[self.index]
        self.names: list[str] = elf.symbol_names(self.index)
        self.binding = (g["st_info"] >> 4).astype(np.uint8)
        self.stype = (g["st_info"] & 0xF).astype(np.uint8)
        self.size = g["st_size"].astype(np.int64)
        self.value = g["st_value"].astype(np.int64)
        self.shndx = elf.symbol_section_indices()[self.index] if len(syms) else np.zeros(0, np.uint32)
        self.kind = self._classify()
        self._check_shndx()

    @classmethod
    def from_bytes(cls, data: bytes, name: str, archive_offset: int | None = None) -> "ObjectFile":
        return cls(ElfFile(data, name), archive_offset)

    @classmethod
    def from_path(cls, path: str | Path, name: str | None = None) -> "ObjectFile":
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise InputError(name or path, "no such file") from None
        except OSError as exc:
            raise InputError(name or path, f"cannot read: {exc.strerror}") from None
        return cls.from_bytes(data, name or str(path))

    def _classify(self) -> np.ndarray:
        kind = np.full(len(self.index), K_DEFINED, np.uint8)
        kind[self.shndx == S.SHN_UNDEF] = K_UNDEF
        kind[(self.shndx == S.SHN_COMMON) | (self.stype == S.STT_COMMON)] = K_COMMON
        kind[self.shndx == S.SHN_ABS] = K_ABS
        return kind

    def _check_shndx(self):
        nsec = len(self.elf.sections)
        bad = np.flatnonzero((self.kind == K_DEFINED) & (self.shndx >= nsec)
                             & ~((self.shndx >= S.SHN_LORESERVE) & (self.shndx <= 0xFFFF)))
        if bad.size:
            k = int(bad[0])
            raise InputError(self.name, f"symbol {self.names[k]!r} section index "
                             f"{int(self.shndx[k])} out of range ({nsec} sections)",
                             self._sym_offset(k))

    def _sym_offset(self, k: int) -> int:
        sh = self.elf.sections[self.elf.symtab_index]
        return int(sh["sh_offset"]) + int(self.index[k]) * S.SYM.itemsize

    # -- what resolution iterates over ---------------------------------------------------------
    @cached_property
    def rows(self) -> list[tuple]:
        """(name, kind, weak, size, shndx) per global symbol, as plain Python values."""
        weak = (self.binding == S.STB_WEAK).tolist()
        return list(zip(self.names, self.kind.tolist(), weak, self.size.tolist(),
                        self.shndx.tolist()))

    @cached_property
    def by_name(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}

    def is_global_data_definition(self, name: str) -> bool:
        """bfd/elflink.c is_global_data_symbol_definition: STB_GLOBAL (or OS-specific),
        not a function, not undefined, not common, not in a processor-specific section."""
        i = self.by_name.get(name)
        if i is None:
            return False
        b, t, sh = int(self.binding[i]), int(self.stype[i]), int(self.shndx[i])
        if b != S.STB_GLOBAL and b < 10:
            return False
        if t == S.STT_FUNC or t == 10 or sh == S.SHN_UNDEF or self.kind[i] == K_COMMON:
            return False
        return not (S.SHN_LORESERVE <= sh < S.SHN_ABS)

    def section_name(self, shndx: int) -> str | None:
        if shndx == S.SHN_ABS:
            return "*ABS*"
        if shndx == S.SHN_COMMON:
            return "COMMON"
        if shndx == S.SHN_UNDEF or shndx >= len(self.elf.sections):
            return None
        return self.elf.section_name(shndx)

    # -- COMDAT groups and relocations ---------------------------------------------------------
    @cached_property
    def comdat_groups(self) -> tuple[ComdatGroup, ...]:
        sh = self.elf.sections
        if not len(sh):
            return ()
        out = []
        for i in np.flatnonzero(sh["sh_type"] == S.SHT_GROUP).tolist():
            words = np.frombuffer(self.elf.section_bytes(i)[: int(sh["sh_size"][i]) // 4 * 4], "<u4")
            if not len(words) or not int(words[0]) & S.GRP_COMDAT:
                continue
            out.append(ComdatGroup(self._group_signature(i), (i, *words[1:].tolist())))
        return tuple(out)

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

    def section_of(self, k: int) -> int:
        return int(self.shndx[k])

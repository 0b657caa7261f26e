"""A linked firmware image (ET_EXEC): its defined symbols (weaklink.read.symbols) and its
layout, where an address lives and what a symbol holds at reset (weaklink.read.layout).
Which symbol holds an address is analysis: weaklink.analyze.addresses and weaklink.analyze.targets."""
from __future__ import annotations

import os

from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile
from weaklink.read.layout import ImageLayout
from weaklink.read.symbols import Symbol, SymbolColumns, SymbolLookup

__all__ = ["Image", "Symbol", "SymbolColumns"]


class Image(SymbolLookup, ImageLayout):
    """The ET_EXEC view of an ElfFile. Raises InputError for anything but a linked ARM image."""

    def __init__(self, elf: ElfFile):
        self.elf = elf
        self._lookups: dict[str, tuple[Symbol, ...]] = {}
        if elf.e_type != S.ET_EXEC:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected {S.ET_EXEC} (ET_EXEC, "
                             "a linked executable)", 16)
        if elf.symtab_index is None:
            raise InputError(elf.name, "no symbol table (.symtab): was the image stripped?")
        self._check_symtab_bounds()

    @classmethod
    def from_path(cls, path: str | os.PathLike) -> "Image":
        return cls(ElfFile.from_path(path, machine=S.EM_ARM))

    @property
    def name(self) -> str:
        return self.elf.name

    @property
    def entry(self) -> int:
        return self.elf.entry

    def _fail(self, what: str, offset: int | None = None):
        raise InputError(self.elf.name, what, offset)

    def _check_symtab_bounds(self) -> None:
        i = self.elf.symtab_index
        sh = self.elf.shdrs[i]
        if sh.sh_type == S.SHT_NOBITS:
            self._fail("symbol table is SHT_NOBITS (no bytes in the file)", self.elf.shdr_offset(i))
        link = sh.sh_link
        shdrs = self.elf.shdrs
        if link >= len(shdrs) or shdrs[link].sh_type != S.SHT_STRTAB:
            self._fail(f"symbol table links to section {link}, expected a string table",
                       self.elf.shdr_offset(i) + 24)
        self.elf.symtab_span          # checks the entry size

"""A linked firmware image (ET_EXEC), read once per command and handed to every stage: its symbol
table (weaklink.read.symbols: the defined symbols as columns, a symbol by name), the symbol that
holds an address (weaklink.read.holders) and its layout (weaklink.read.layout: sections,
segments, the bytes at an address, what a symbol holds at reset)."""
from __future__ import annotations

import os

from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile
from weaklink.read.holders import Holders, MappingSymbol
from weaklink.read.layout import ImageLayout
from weaklink.read.symbols import Symbol, SymbolColumns, SymbolLookup

__all__ = ["Image", "MappingSymbol", "Symbol", "SymbolColumns"]


class Image(SymbolLookup, Holders, ImageLayout):
    """The ET_EXEC view of an ElfFile. Raises InputError for anything but a linked ARM image,
    and for one without a symbol table unless `stripped` (weaklink run boots one: its symbol
    table is then empty)."""

    def __init__(self, elf: ElfFile, *, stripped: bool = False):
        self.elf = elf
        self._lookups: dict[str, tuple[Symbol, ...]] = {}
        if elf.e_type != S.ET_EXEC:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected {S.ET_EXEC} (ET_EXEC, "
                             "a linked executable)", 16)
        if elf.symtab_index is not None:
            self._check_symtab_bounds()
        elif not stripped:
            raise InputError(elf.name, "no symbol table (.symtab): was the image stripped?")

    @classmethod
    def from_path(cls, path: str | os.PathLike, *, stripped: bool = False) -> "Image":
        return cls(ElfFile.from_path(path, machine=S.EM_ARM), stripped=stripped)

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

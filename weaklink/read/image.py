"""A linked firmware image (ET_EXEC): its defined symbols as numpy columns, where an address
lives (section, segment) and what a symbol holds at reset.

Built on ElfFile. The bulk path never makes one Python object per symbol: the symbol table is
filtered, masked and located with numpy over the raw Elf32_Sym array, and names stay as
(offset, length) pairs into .strtab until someone formats them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile


@dataclass(frozen=True)
class SymbolColumns:
    """A set of symbols as parallel numpy arrays; `index` is the position in .symtab."""

    index: np.ndarray       # u4
    name_off: np.ndarray    # i8, offset of the name in .strtab
    name_len: np.ndarray    # i8
    binding: np.ndarray     # u1, STB_*
    type: np.ndarray        # u1, STT_*
    address: np.ndarray     # u4, Thumb bit cleared for STT_FUNC
    size: np.ndarray        # u4
    shndx: np.ndarray       # u4, SHN_XINDEX already expanded

    def __len__(self) -> int:
        return len(self.index)

    def take(self, rows) -> "SymbolColumns":
        return SymbolColumns(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))


@dataclass(frozen=True)
class Symbol:
    """One symbol, for the few that are queried or named in a finding."""

    index: int
    name: str
    binding: int
    type: int
    address: int
    size: int
    shndx: int

    @property
    def binding_name(self) -> str:
        return S.BINDING_NAMES.get(self.binding, str(self.binding))

    @property
    def type_name(self) -> str:
        return S.TYPE_NAMES.get(self.type, str(self.type))


# ARM ELF ABI §5.5.3 mapping symbols ($a, $t, $d, optionally "$t.<n>") mark code/data
# boundaries; they are not program objects.
_MAPPING_PREFIX = b"$"


class Image:
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
    def from_path(cls, path: str | Path) -> "Image":
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
        sh = self.elf.sections[self.elf.symtab_index]
        if int(sh["sh_type"]) == S.SHT_NOBITS:
            self._fail("symbol table is SHT_NOBITS (no bytes in the file)",
                       self._shdr_offset(self.elf.symtab_index))
        link = int(sh["sh_link"])
        sections = self.elf.sections
        if link >= len(sections) or int(sections[link]["sh_type"]) != S.SHT_STRTAB:
            self._fail(f"symbol table links to section {link}, expected a string table",
                       self._shdr_offset(self.elf.symtab_index) + 24)

    def _shdr_offset(self, i: int) -> int:
        return int(self.elf.header["e_shoff"]) + i * S.SHDR.itemsize

    # -- names -------------------------------------------------------------------------------
    @cached_property
    def strtab(self) -> bytes:
        return self.elf.symbol_strtab

    @cached_property
    def _strtab_u8(self) -> np.ndarray:
        return np.frombuffer(self.strtab, np.uint8)

    def name_spans(self, offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Lengths of the NUL-terminated names at `offsets` (rows: .symtab indices, for errors)."""
        table = self._strtab_u8
        bad = np.flatnonzero(offsets >= max(len(table), 1))
        if bad.size:
            k = int(bad[0])
            self._fail(f"symbol {int(rows[k])} name offset {int(offsets[k])} out of range "
                       f"(string table has {len(table)} bytes)",
                       int(self.elf.sections[self.elf.symtab_index]["sh_offset"])
                       + int(rows[k]) * S.SYM.itemsize)
        nul = np.flatnonzero(table == 0)
        if nul.size == 0:
            return np.full(len(offsets), len(table), np.int64) - offsets
        pos = np.searchsorted(nul, offsets)
        ends = np.where(pos < nul.size, nul[np.minimum(pos, nul.size - 1)], len(table))
        return ends - offsets

    def text(self, off: int, length: int) -> str:
        return self.strtab[off:off + length].decode("utf-8", "replace")

    # -- symbol columns ------------------------------------------------------------------------
    @cached_property
    def _all(self) -> SymbolColumns:
        syms = self.elf.symbols
        rows = np.arange(len(syms), dtype=np.uint32)
        info = syms["st_info"]
        binding, stype = info >> 4, info & 0xF
        shndx = self.elf.symbol_section_indices()
        real = (shndx != S.SHN_UNDEF) & (shndx < S.SHN_LORESERVE)
        bad = np.flatnonzero(real & (shndx >= len(self.elf.sections)))
        if bad.size:
            k = int(bad[0])
            self._fail(f"symbol {k} section index {int(shndx[k])} out of range "
                       f"({len(self.elf.sections)} sections)",
                       int(self.elf.sections[self.elf.symtab_index]["sh_offset"])
                       + k * S.SYM.itemsize + 14)
        # ARM ELF ABI: bit 0 of a Thumb function's st_value is the Thumb bit, not an address
        # bit; data may sit at odd addresses, so only STT_FUNC is masked.
        address = np.where(stype == S.STT_FUNC, syms["st_value"] & ~np.uint32(1), syms["st_value"])
        name_off = syms["st_name"].astype(np.int64)
        return SymbolColumns(rows, name_off, self.name_spans(name_off, rows), binding, stype,
                             address.astype(np.uint32), syms["st_size"], shndx)

    @cached_property
    def defined_globals(self) -> SymbolColumns:
        """Every non-local defined symbol (GLOBAL, WEAK, GNU_UNIQUE), in .symtab order."""
        c = self._all
        keep = (c.binding != S.STB_LOCAL) & (c.shndx != S.SHN_UNDEF)
        keep &= (c.type != S.STT_SECTION) & (c.type != S.STT_FILE)
        return c.take(np.flatnonzero(keep))

    @cached_property
    def targets(self) -> SymbolColumns:
        """Symbols a pointer can point into (locals too, e.g. a `static` array), by address:
        defined objects, functions and notype labels, without mapping symbols."""
        c = self._all
        keep = (c.shndx != S.SHN_UNDEF) & (c.index != 0)
        keep &= (c.type != S.STT_SECTION) & (c.type != S.STT_FILE)
        first = self._strtab_u8[np.minimum(c.name_off, max(len(self.strtab) - 1, 0))] \
            if len(self.strtab) else np.zeros(len(c.index), np.uint8)
        keep &= (first != _MAPPING_PREFIX[0]) & (c.name_len > 0)
        rows = np.flatnonzero(keep)
        # Prefer globals over locals at the same address, then larger sizes (stable order).
        order = np.lexsort((-c.size[rows].astype(np.int64), c.binding[rows] == S.STB_LOCAL,
                            c.address[rows]))
        return c.take(rows[order])

    def symbol(self, index: int) -> Symbol:
        c = self._all
        return Symbol(index, self.text(int(c.name_off[index]), int(c.name_len[index])),
                      int(c.binding[index]), int(c.type[index]), int(c.address[index]),
                      int(c.size[index]), int(c.shndx[index]))

    def lookup(self, name: str) -> tuple[Symbol, ...]:
        """Defined symbols called `name`, globals first. Compares bytes in .strtab for the
        rows of the right length; ld merges string tails ("f" may sit inside "half\\0"), so
        a name is found by its symbols' offsets, never by searching for the string."""
        hit = self._lookups.get(name)
        if hit is not None:
            return hit
        needle = np.frombuffer(name.encode(), np.uint8)
        c = self._all
        rows = np.flatnonzero((c.name_len == len(needle)) & (c.shndx != S.SHN_UNDEF)
                              & (c.type != S.STT_SECTION) & (c.type != S.STT_FILE))
        if len(needle) and len(rows):
            text = self._strtab_u8[c.name_off[rows][:, None] + np.arange(len(needle))]
            rows = rows[(text == needle).all(axis=1)]
        found = [self.symbol(int(i)) for i in rows]
        hit = self._lookups[name] = tuple(sorted(found, key=lambda s: (s.binding == S.STB_LOCAL,
                                                                       s.index)))
        return hit

    # -- sections and segments -----------------------------------------------------------------
    def section_name(self, shndx: int) -> str | None:
        """Name of a real section index; None for SHN_ABS, SHN_COMMON and SHN_UNDEF."""
        if shndx == S.SHN_UNDEF or shndx >= S.SHN_LORESERVE:
            return None
        return self.elf.section_names[shndx]

    @cached_property
    def _alloc_sections(self) -> np.ndarray:
        sh = self.elf.sections
        rows = np.flatnonzero((sh["sh_flags"] & S.SHF_ALLOC) != 0) if len(sh) else np.zeros(0, int)
        return rows[np.argsort(sh["sh_addr"][rows], kind="stable")]

    def section_at(self, address: int) -> int | None:
        """The allocated section whose [sh_addr, sh_addr + sh_size) holds `address`."""
        sh = self.elf.sections
        for i in self._alloc_sections[::-1]:
            start = int(sh["sh_addr"][i])
            if start <= address < start + int(sh["sh_size"][i]):
                return int(i)
        return None

    def segment_at(self, address: int) -> int | None:
        """Program-header index of the PT_LOAD segment whose [p_vaddr, p_vaddr + p_memsz)
        holds `address` (the run-time address; .data's load copy sits at p_paddr)."""
        seg = self.elf.segments
        for i in range(len(seg)):
            start = int(seg["p_vaddr"][i])
            end = start + int(seg["p_memsz"][i])
            if int(seg["p_type"][i]) == S.PT_LOAD and start <= address < end:
                return i
        return None

    def load_segments(self) -> np.ndarray:
        seg = self.elf.segments
        return seg[seg["p_type"] == S.PT_LOAD] if len(seg) else seg

    def _file_backed(self, shndx: int) -> bool:
        """Does the section have bytes that the loader copies? NOBITS never does (.bss,
        NOLOAD); a PROGBITS section outside every PT_LOAD's file image is not loaded either."""
        sh = self.elf.sections[shndx]
        if int(sh["sh_type"]) == S.SHT_NOBITS or not int(sh["sh_flags"]) & S.SHF_ALLOC:
            return False
        segs = self.load_segments()
        if len(segs) == 0:
            return True
        off, size = int(sh["sh_offset"]), int(sh["sh_size"])
        starts, ends = segs["p_offset"].astype(np.int64), (segs["p_offset"] + segs["p_filesz"])
        return bool(np.any((starts <= off) & (off + size <= ends.astype(np.int64))))

    def initial_bytes(self, sym: Symbol) -> bytes | None:
        """What the symbol holds at reset: its section's file bytes (PROGBITS) or zeros
        (NOBITS/NOLOAD). None when it has no section or runs past its section."""
        shndx = sym.shndx if sym.shndx < S.SHN_LORESERVE else self.section_at(sym.address)
        if shndx is None or shndx == S.SHN_UNDEF:
            return None
        sh = self.elf.sections[shndx]
        rel = sym.address - int(sh["sh_addr"])
        if rel < 0 or rel + sym.size > int(sh["sh_size"]):
            return None
        if not self._file_backed(shndx):
            return bytes(sym.size)
        start = int(sh["sh_offset"]) + rel
        return self.elf.data[start:start + sym.size]

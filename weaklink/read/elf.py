"""Parse ELF32 little-endian files (relocatable objects and linked images) with numpy.

The layouts are in weaklink.read.elfstructs. Every check raises InputError naming the file,
the byte offset and what was expected. Tables (sections, symbols, program headers) are numpy
structured arrays read straight from the file bytes, never one Python object per entry.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np

from weaklink.errors import InputError, read_input
from weaklink.read import elfstructs as S


class ElfFile:
    """One ELF file held in memory. `name` is how diagnostics refer to it."""

    def __init__(self, data: bytes, name: str, *, machine: int | None = S.EM_ARM):
        self.data = data
        self.name = name
        self.header = self._read_header(machine)
        self.sections = self._read_table(
            self.header["e_shoff"], self.header["e_shnum"], self.header["e_shentsize"], S.SHDR,
            "section header table")
        self.segments = self._read_table(
            self.header["e_phoff"], self.header["e_phnum"], self.header["e_phentsize"], S.PHDR,
            "program header table")
        self._check_section_bounds()

    @classmethod
    def from_path(cls, path: str | Path, *, machine: int | None = S.EM_ARM) -> "ElfFile":
        return cls(read_input(path, what="ELF file"), str(path), machine=machine)

    # -- header and tables -------------------------------------------------------------------
    def _fail(self, what: str, offset: int | None = None):
        raise InputError(self.name, what, offset)

    def _read_header(self, machine):
        if len(self.data) < 4 or self.data[:4] != S.ELF_MAGIC:
            self._fail("not an ELF file: expected magic 7f 45 4c 46", 0)
        if len(self.data) < S.EHDR.itemsize:
            self._fail(f"truncated ELF header: {len(self.data)} bytes, expected {S.EHDR.itemsize}", 0)
        if self.data[4] != S.ELFCLASS32:
            self._fail(f"ELF class {self.data[4]}, expected 1 (ELF32)", 4)
        if self.data[5] != S.ELFDATA2LSB:
            self._fail(f"ELF data encoding {self.data[5]}, expected 1 (little-endian)", 5)
        hdr = np.frombuffer(self.data, S.EHDR, count=1)[0]
        if machine is not None and int(hdr["e_machine"]) != machine:
            self._fail(f"machine {int(hdr['e_machine'])}, expected {machine} (ARM)", 18)
        return hdr

    def _read_table(self, offset, count, entsize, dtype, what):
        offset, count, entsize = int(offset), int(count), int(entsize)
        if count == 0:
            return np.zeros(0, dtype)
        if entsize != dtype.itemsize:
            self._fail(f"{what} entry size {entsize}, expected {dtype.itemsize}", offset)
        end = offset + count * entsize
        if end > len(self.data):
            self._fail(f"{what} ends at {end}, past the end of the file ({len(self.data)} bytes)",
                       offset)
        return np.frombuffer(self.data, dtype, count=count, offset=offset)

    def _check_section_bounds(self):
        sh = self.sections
        if len(sh) == 0:
            return
        if self._shstrndx >= len(sh):
            self._fail(f"section name table index {self._shstrndx} out of range "
                       f"({len(sh)} sections)", 50)
        in_file = sh["sh_type"] != S.SHT_NOBITS
        ends = sh["sh_offset"].astype(np.int64) + sh["sh_size"].astype(np.int64)
        bad = np.flatnonzero(in_file & (ends > len(self.data)))
        if bad.size:
            i = int(bad[0])
            self._fail(f"section {i} ({self.section_name(i) if i != self._shstrndx else '?'}) "
                       f"offset {int(sh['sh_offset'][i])} + size {int(sh['sh_size'][i])} "
                       f"runs past the end of the file ({len(self.data)} bytes)",
                       int(self.header["e_shoff"]) + i * S.SHDR.itemsize)

    @property
    def _shstrndx(self) -> int:
        return int(self.header["e_shstrndx"])

    @property
    def e_type(self) -> int:
        return int(self.header["e_type"])

    @property
    def entry(self) -> int:
        return int(self.header["e_entry"])

    # -- section contents ----------------------------------------------------------------------
    def section_bytes(self, index: int, start: int = 0, length: int | None = None) -> bytes:
        """The file bytes of a section (from `start`, at most `length` of them); NOBITS
        sections read as zeros. A NOBITS size is not backed by the file, so zeros are only
        made for a bounded `length`, or for a whole section no larger than the file."""
        sh = self.sections[index]
        size = int(sh["sh_size"])
        end = size if length is None else min(size, start + length)
        if int(sh["sh_type"]) == S.SHT_NOBITS:
            if length is None and size > len(self.data):
                self._fail(f"section {index} is NOBITS of {size} bytes: its contents are not in "
                           f"the file ({len(self.data)} bytes)",
                           int(self.header["e_shoff"]) + index * S.SHDR.itemsize + 20)
            return bytes(max(end - start, 0))
        off = int(sh["sh_offset"])
        return self.data[off + start:off + max(end, start)]

    @cached_property
    def _shstrtab(self) -> bytes:
        return self.section_bytes(self._shstrndx) if len(self.sections) else b""

    @cached_property
    def _sh_name_offsets(self) -> list[int]:
        return self.sections["sh_name"].tolist()

    def section_name(self, index: int) -> str:
        table, offset = self._shstrtab, self._sh_name_offsets[index]
        if offset >= len(table) and offset != 0:
            self._fail(f"section {index} name offset {offset} out of range (string table has "
                       f"{len(table)} bytes)", int(self.header["e_shoff"]) + index * S.SHDR.itemsize)
        end = table.find(b"\0", offset)
        return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")

    @cached_property
    def section_names(self) -> list[str]:
        return [self.section_name(i) for i in range(len(self.sections))]

    def find_section(self, name: str) -> int | None:
        try:
            return self.section_names.index(name)
        except ValueError:
            return None

    # -- symbol table ---------------------------------------------------------------------------
    @cached_property
    def symtab_index(self) -> int | None:
        hits = np.flatnonzero(self.sections["sh_type"] == S.SHT_SYMTAB) if len(self.sections) else []
        return int(hits[0]) if len(hits) else None

    @cached_property
    def symbols(self) -> np.ndarray:
        """The raw Elf32_Sym array of .symtab (entry 0 included), or an empty array."""
        i = self.symtab_index
        if i is None:
            return np.zeros(0, S.SYM)
        sh = self.sections[i]
        if int(sh["sh_entsize"]) not in (0, S.SYM.itemsize):
            self._fail(f"symbol table entry size {int(sh['sh_entsize'])}, expected 16",
                       int(self.header["e_shoff"]) + i * S.SHDR.itemsize)
        count = int(sh["sh_size"]) // S.SYM.itemsize
        return np.frombuffer(self.data, S.SYM, count=count, offset=int(sh["sh_offset"]))

    @cached_property
    def symbol_strtab(self) -> bytes:
        i = self.symtab_index
        if i is None:
            return b""
        link = int(self.sections[i]["sh_link"])
        if link >= len(self.sections):
            self._fail(f"symbol table links to string table {link}, out of range",
                       int(self.header["e_shoff"]) + i * S.SHDR.itemsize + 24)
        return self.section_bytes(link)

    def symbol_names(self, indices: np.ndarray | None = None) -> list[str]:
        """Names of the symbols at `indices` (all when None), resolved in one vectorised pass."""
        syms = self.symbols if indices is None else self.symbols[indices]
        table = self.symbol_strtab
        offsets = syms["st_name"].astype(np.int64)
        if offsets.size == 0:
            return []
        bad = np.flatnonzero((offsets >= len(table)) & (offsets != 0))
        if bad.size:
            k = int(bad[0])
            pos = int(indices[k]) if indices is not None else k
            self._fail(f"symbol {pos} name offset {int(offsets[k])} out of range (string table "
                       f"has {len(table)} bytes)",
                       int(self.sections[self.symtab_index]["sh_offset"]) + pos * S.SYM.itemsize)
        raw = np.frombuffer(table, np.uint8)
        nul = np.flatnonzero(raw == 0)
        # a name running to the end of a table without its NUL ends at the table's end
        ends = np.append(nul, len(table))[np.searchsorted(nul, offsets)]
        return [table[a:b].decode("utf-8", "replace") for a, b in zip(offsets.tolist(), ends.tolist())]

    @cached_property
    def symtab_shndx(self) -> np.ndarray | None:
        """Extended section indices (SHT_SYMTAB_SHNDX), for objects with > 65279 sections."""
        hits = np.flatnonzero(self.sections["sh_type"] == S.SHT_SYMTAB_SHNDX) if len(self.sections) else []
        if not len(hits):
            return None
        sh = self.sections[int(hits[0])]
        return np.frombuffer(self.data, "<u4", count=int(sh["sh_size"]) // 4, offset=int(sh["sh_offset"]))

    def symbol_section_indices(self) -> np.ndarray:
        """st_shndx widened to u4, with SHN_XINDEX entries replaced by their extended index."""
        shndx = self.symbols["st_shndx"].astype(np.uint32)
        ext = self.symtab_shndx
        if ext is not None:
            if len(ext) < len(shndx):
                self._fail(f"extended section index table has {len(ext)} entries, expected "
                           f"{len(shndx)} (one per symbol)")
            x = shndx == S.SHN_XINDEX
            shndx[x] = ext[: len(shndx)][x]
        return shndx

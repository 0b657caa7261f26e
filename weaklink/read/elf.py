"""Parse ELF32 little-endian files (relocatable objects and linked images).

The layouts are in weaklink.read.elfstructs. Every check raises InputError naming the file,
the byte offset and what was expected. The header, the section and program header tables, and
the symbol and relocation entries are unpacked with struct. A linked image's symbol table is
read as columns by weaklink.read.image.
"""
from __future__ import annotations

import mmap
import os
import stat
import struct
from collections import namedtuple
from functools import cached_property

from weaklink.errors import InputError, read_input
from weaklink.read import elfstructs as S

# Files from this size on are mapped read-only instead of read into memory: nothing is copied,
# and only the pages used are touched (the symbol and string tables, not the code or the debug
# sections). On the 11 MB image of benchmarks/bench_analyze.py (200k symbols) the read took
# 9 to 14 ms and 2,700 page faults, the mapping 1 ms and 170.
MAP_FROM = 1 << 20

Shdr = namedtuple("Shdr", [f for f, _ in S.SHDR_FIELDS])
Phdr = namedtuple("Phdr", [f for f, _ in S.PHDR_FIELDS])
_EHDR = struct.Struct(S.struct_format(S.EHDR_FIELDS))
_EHDR_NAMES = tuple(f for f, _ in S.EHDR_FIELDS)
_SHDR = struct.Struct(S.struct_format(S.SHDR_FIELDS))
_PHDR = struct.Struct(S.struct_format(S.PHDR_FIELDS))
_SYM = struct.Struct(S.struct_format(S.SYM_FIELDS))
_REL = struct.Struct(S.struct_format(S.REL_FIELDS))
_RELA = struct.Struct(S.struct_format(S.RELA_FIELDS))


class ElfFile:
    """One ELF file held in memory. `name` is how diagnostics refer to it."""

    def __init__(self, data: bytes, name: str, *, machine: int | None = S.EM_ARM):
        self.data = data
        self.name = name
        self.header = self._read_header(machine)
        h = self.header
        self.shnum, self._shstrndx = self._section_counts()
        self.shdrs: list[Shdr] = self._read_table(h["e_shoff"], self.shnum, h["e_shentsize"],
                                                  _SHDR, Shdr, "section header table")
        self.phdrs: list[Phdr] = self._read_table(h["e_phoff"], h["e_phnum"], h["e_phentsize"],
                                                  _PHDR, Phdr, "program header table")
        self._check_section_bounds()

    @classmethod
    def from_path(cls, path: str | os.PathLike, *, machine: int | None = S.EM_ARM) -> "ElfFile":
        return cls(_contents(path), str(path), machine=machine)

    # -- header and tables -------------------------------------------------------------------
    def _fail(self, what: str, offset: int | None = None):
        raise InputError(self.name, what, offset)

    def _read_header(self, machine) -> dict:
        if len(self.data) < 4 or self.data[:4] != S.ELF_MAGIC:
            self._fail("not an ELF file: expected magic 7f 45 4c 46", 0)
        if len(self.data) < S.EHDR_SIZE:
            self._fail(f"truncated ELF header: {len(self.data)} bytes, expected {S.EHDR_SIZE}", 0)
        if self.data[4] != S.ELFCLASS32:
            self._fail(f"ELF class {self.data[4]}, expected 1 (ELF32)", 4)
        if self.data[5] != S.ELFDATA2LSB:
            self._fail(f"ELF data encoding {self.data[5]}, expected 1 (little-endian)", 5)
        hdr = dict(zip(_EHDR_NAMES, _EHDR.unpack_from(self.data)))
        if machine is not None and hdr["e_machine"] != machine:
            self._fail(f"machine {hdr['e_machine']}, expected {machine} (ARM)", 18)
        return hdr

    def _section_counts(self) -> tuple[int, int]:
        """(number of sections, index of the section name table). gABI extended numbering: a
        file with 0xff00 sections or more stores 0 in e_shnum and SHN_XINDEX in e_shstrndx,
        and the real values in section 0's sh_size and sh_link (`ld --unique`, huge objects)."""
        h = self.header
        shnum, shstrndx = h["e_shnum"], h["e_shstrndx"]
        if h["e_shoff"] == 0 or (shnum != 0 and shstrndx != S.SHN_XINDEX):
            return shnum, shstrndx
        if h["e_shentsize"] != _SHDR.size:
            self._fail(f"section header table entry size {h['e_shentsize']}, expected "
                       f"{_SHDR.size}", h["e_shoff"])
        if h["e_shoff"] + _SHDR.size > len(self.data):
            self._fail(f"section header 0 (extended section numbering) ends at "
                       f"{h['e_shoff'] + _SHDR.size}, past the end of the file "
                       f"({len(self.data)} bytes)", h["e_shoff"])
        first = Shdr._make(_SHDR.unpack_from(self.data, h["e_shoff"]))
        return (first.sh_size if shnum == 0 else shnum,
                first.sh_link if shstrndx == S.SHN_XINDEX else shstrndx)

    def _read_table(self, offset, count, entsize, layout, record, what) -> list:
        if count == 0:
            return []
        if entsize != layout.size:
            self._fail(f"{what} entry size {entsize}, expected {layout.size}", offset)
        end = offset + count * entsize
        if end > len(self.data):
            self._fail(f"{what} ends at {end}, past the end of the file ({len(self.data)} bytes)",
                       offset)
        return list(map(record._make, layout.iter_unpack(self.data[offset:end])))

    def _check_section_bounds(self):
        sh = self.shdrs
        if not sh:
            return
        if self._shstrndx >= len(sh):
            self._fail(f"section name table index {self._shstrndx} out of range "
                       f"({len(sh)} sections)", 50)
        size = len(self.data)
        for i, s in enumerate(sh):
            if s.sh_type != S.SHT_NOBITS and s.sh_offset + s.sh_size > size:
                self._fail(f"section {i} ({self.section_name(i) if i != self._shstrndx else '?'}) "
                           f"offset {s.sh_offset} + size {s.sh_size} "
                           f"runs past the end of the file ({size} bytes)",
                           self.header["e_shoff"] + i * S.SHDR_SIZE)

    def shdr_offset(self, index: int) -> int:
        """File offset of section header `index` (for error positions)."""
        return self.header["e_shoff"] + index * S.SHDR_SIZE

    @property
    def e_type(self) -> int:
        return self.header["e_type"]

    @property
    def entry(self) -> int:
        return self.header["e_entry"]

    # -- section contents ----------------------------------------------------------------------
    def section_bytes(self, index: int, start: int = 0, length: int | None = None) -> bytes:
        """The file bytes of a section (from `start`, at most `length` of them); NOBITS
        sections read as zeros. A NOBITS size is not backed by the file, so zeros are only
        made for a bounded `length`, or for a whole section no larger than the file."""
        sh = self.shdrs[index]
        size = sh.sh_size
        end = size if length is None else min(size, start + length)
        if sh.sh_type == S.SHT_NOBITS:
            if length is None and size > len(self.data):
                self._fail(f"section {index} is NOBITS of {size} bytes: its contents are not in "
                           f"the file ({len(self.data)} bytes)", self.shdr_offset(index) + 20)
            return bytes(max(end - start, 0))
        off = sh.sh_offset
        return self.data[off + start:off + max(end, start)]

    @cached_property
    def _shstrtab(self) -> bytes:
        return self.section_bytes(self._shstrndx) if self.shdrs else b""

    def section_name(self, index: int) -> str:
        table, offset = self._shstrtab, self.shdrs[index].sh_name
        if offset >= len(table) and offset != 0:
            self._fail(f"section {index} name offset {offset} out of range (string table has "
                       f"{len(table)} bytes)", self.shdr_offset(index))
        end = table.find(b"\0", offset)
        return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")

    @cached_property
    def section_names(self) -> list[str]:
        return [self.section_name(i) for i in range(len(self.shdrs))]

    def find_section(self, name: str) -> int | None:
        try:
            return self.section_names.index(name)
        except ValueError:
            return None

    # -- symbol table ---------------------------------------------------------------------------
    def _first_of_type(self, sh_type: int) -> int | None:
        return next((i for i, s in enumerate(self.shdrs) if s.sh_type == sh_type), None)

    @cached_property
    def symtab_index(self) -> int | None:
        return self._first_of_type(S.SHT_SYMTAB)

    @cached_property
    def symtab_span(self) -> tuple[int, int]:
        """(file offset, entry count) of .symtab; (0, 0) when there is none."""
        i = self.symtab_index
        if i is None:
            return 0, 0
        sh = self.shdrs[i]
        if sh.sh_entsize not in (0, S.SYM_SIZE):
            self._fail(f"symbol table entry size {sh.sh_entsize}, expected 16", self.shdr_offset(i))
        return sh.sh_offset, sh.sh_size // S.SYM_SIZE

    @cached_property
    def symbol_strtab(self) -> bytes:
        i = self.symtab_index
        if i is None:
            return b""
        link = self.shdrs[i].sh_link
        if link >= len(self.shdrs):
            self._fail(f"symbol table links to string table {link}, out of range",
                       self.shdr_offset(i) + 24)
        return self.section_bytes(link)

    @cached_property
    def symtab_shndx_span(self) -> tuple[int, int] | None:
        """(file offset, entry count) of SHT_SYMTAB_SHNDX, the extended section indices of
        objects with more than 65279 sections; None when there is none."""
        i = self._first_of_type(S.SHT_SYMTAB_SHNDX)
        if i is None:
            return None
        return self.shdrs[i].sh_offset, self.shdrs[i].sh_size // 4

    @cached_property
    def symbol_entries(self) -> list[tuple]:
        """Every Elf32_Sym of .symtab as a tuple (st_name, st_value, st_size, st_info,
        st_other, st_shndx), entry 0 and the locals included."""
        offset, count = self.symtab_span
        return list(_SYM.iter_unpack(self.data[offset:offset + count * S.SYM_SIZE]))

    def symbol_name(self, k: int) -> str:
        """The name of symbol-table entry `k` ('' past the string table)."""
        strtab = self.symbol_strtab
        nm = self.symbol_entries[k][0]
        end = strtab.find(b"\0", nm)
        return strtab[nm:end if end >= 0 else len(strtab)].decode("utf-8", "replace")

    def relocation_entries(self, rel: int) -> list[tuple]:
        """(r_offset, r_info[, r_addend]) of every entry of relocation section `rel`."""
        sh = self.shdrs[rel]
        layout = _REL if sh.sh_type == S.SHT_REL else _RELA
        n = sh.sh_size // layout.size
        return list(layout.iter_unpack(self.data[sh.sh_offset:sh.sh_offset + n * layout.size]))


def _contents(path: str | os.PathLike):
    """The bytes of an ELF file: a read-only memory map of a regular file of MAP_FROM bytes
    or more (slicing it gives bytes, as for the bytes read_input returns), else read_input's
    bytes or its one-line InputError. Like lld and the other tools that map their inputs, a
    mapped file must not be truncated in place while it is analysed; GNU ld and lld replace
    their output files rather than rewriting them."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError, TypeError):
        return read_input(path, what="ELF file")        # its one line says why
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size >= MAP_FROM:
            return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):                   # a file system that cannot map: read it
        pass
    finally:
        os.close(fd)
    return read_input(path, what="ELF file")

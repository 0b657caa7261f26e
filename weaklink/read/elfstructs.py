"""ELF32 little-endian layouts and constants, declared once as data (ELF gABI, ARM ELF ABI).

Parsing lives in weaklink.read.elf; this module only says what the bytes look like.
"""
from __future__ import annotations

import numpy as np

ELF_MAGIC = b"\x7fELF"
ELFCLASS32 = 1
ELFDATA2LSB = 1

ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
EM_ARM = 40

# Special section indices.
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHN_ABS = 0xFFF1
SHN_COMMON = 0xFFF2
SHN_XINDEX = 0xFFFF

# Section types.
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 0, 1, 2, 3
SHT_RELA, SHT_NOBITS, SHT_REL, SHT_GROUP = 4, 8, 9, 17
SHT_SYMTAB_SHNDX = 18
SHT_NOTE, SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY = 7, 14, 15, 16
SHT_ARM_EXIDX, SHT_ARM_ATTRIBUTES = 0x70000001, 0x70000003
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_GROUP = 0x1, 0x2, 0x4, 0x200
SHF_LINK_ORDER, SHF_GNU_RETAIN, SHF_EXCLUDE = 0x80, 0x200000, 0x80000000
GRP_COMDAT = 0x1

# Symbol binding (st_info >> 4) and type (st_info & 0xf).
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STB_GNU_UNIQUE = 10
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_FILE, STT_COMMON, STT_TLS = 0, 1, 2, 3, 4, 5, 6

BINDING_NAMES = {STB_LOCAL: "local", STB_GLOBAL: "global", STB_WEAK: "weak", STB_GNU_UNIQUE: "unique"}
TYPE_NAMES = {
    STT_NOTYPE: "notype", STT_OBJECT: "object", STT_FUNC: "func", STT_SECTION: "section",
    STT_FILE: "file", STT_COMMON: "object", STT_TLS: "tls",
}

# Program header types.
PT_LOAD = 1

EHDR = np.dtype([
    ("e_ident", "S16"), ("e_type", "<u2"), ("e_machine", "<u2"), ("e_version", "<u4"),
    ("e_entry", "<u4"), ("e_phoff", "<u4"), ("e_shoff", "<u4"), ("e_flags", "<u4"),
    ("e_ehsize", "<u2"), ("e_phentsize", "<u2"), ("e_phnum", "<u2"),
    ("e_shentsize", "<u2"), ("e_shnum", "<u2"), ("e_shstrndx", "<u2"),
])

SHDR = np.dtype([
    ("sh_name", "<u4"), ("sh_type", "<u4"), ("sh_flags", "<u4"), ("sh_addr", "<u4"),
    ("sh_offset", "<u4"), ("sh_size", "<u4"), ("sh_link", "<u4"), ("sh_info", "<u4"),
    ("sh_addralign", "<u4"), ("sh_entsize", "<u4"),
])

PHDR = np.dtype([
    ("p_type", "<u4"), ("p_offset", "<u4"), ("p_vaddr", "<u4"), ("p_paddr", "<u4"),
    ("p_filesz", "<u4"), ("p_memsz", "<u4"), ("p_flags", "<u4"), ("p_align", "<u4"),
])

SYM = np.dtype([
    ("st_name", "<u4"), ("st_value", "<u4"), ("st_size", "<u4"),
    ("st_info", "u1"), ("st_other", "u1"), ("st_shndx", "<u2"),
])

assert EHDR.itemsize == 52 and SHDR.itemsize == 40 and PHDR.itemsize == 32 and SYM.itemsize == 16

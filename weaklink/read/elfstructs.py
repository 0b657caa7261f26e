"""ELF32 little-endian layouts and constants, declared once as data (ELF gABI, ARM ELF ABI).

Parsing lives in weaklink.read.elf; this module only says what the bytes look like.
"""
from __future__ import annotations

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
# A compressed section (gABI): an Elf32_Chdr (ch_type, ch_size, ch_addralign: u32 each), then
# the compressed bytes.
SHF_COMPRESSED, ELFCOMPRESS_ZLIB, CHDR_SIZE = 0x800, 1, 12
SHF_TLS = 0x400

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

# The tables' layouts: (field, struct code) in file order, little-endian; the readers unpack
# them with struct.
EHDR_FIELDS = (
    ("e_ident", "16s"), ("e_type", "H"), ("e_machine", "H"), ("e_version", "I"),
    ("e_entry", "I"), ("e_phoff", "I"), ("e_shoff", "I"), ("e_flags", "I"),
    ("e_ehsize", "H"), ("e_phentsize", "H"), ("e_phnum", "H"),
    ("e_shentsize", "H"), ("e_shnum", "H"), ("e_shstrndx", "H"),
)
SHDR_FIELDS = (
    ("sh_name", "I"), ("sh_type", "I"), ("sh_flags", "I"), ("sh_addr", "I"),
    ("sh_offset", "I"), ("sh_size", "I"), ("sh_link", "I"), ("sh_info", "I"),
    ("sh_addralign", "I"), ("sh_entsize", "I"),
)
PHDR_FIELDS = (
    ("p_type", "I"), ("p_offset", "I"), ("p_vaddr", "I"), ("p_paddr", "I"),
    ("p_filesz", "I"), ("p_memsz", "I"), ("p_flags", "I"), ("p_align", "I"),
)
SYM_FIELDS = (
    ("st_name", "I"), ("st_value", "I"), ("st_size", "I"),
    ("st_info", "B"), ("st_other", "B"), ("st_shndx", "H"),
)

REL_FIELDS = (("r_offset", "I"), ("r_info", "I"))
RELA_FIELDS = (("r_offset", "I"), ("r_info", "I"), ("r_addend", "i"))


def struct_format(fields) -> str:
    return "<" + "".join(code for _, code in fields)


EHDR_SIZE, SHDR_SIZE, PHDR_SIZE, SYM_SIZE = 52, 40, 32, 16

"""Where an address of a linked image lives (section, PT_LOAD segment), the bytes there and what
a symbol holds at reset: the layout half of weaklink.read.image.Image.

An initialised object's value is the PROGBITS bytes of its section in the file (the loader
copies them from the LMA); .bss and NOLOAD sections are NOBITS and start as zero
(anchors_ecosystem_style.md A1). Integers are little-endian: the Corstone Cortex-M cores run
little-endian (ELFDATA2LSB is checked when the file is read).
"""
from __future__ import annotations

from functools import cached_property

from weaklink.read import elfstructs as S
from weaklink.read.symbols import Symbol

VALUE_SIZES = (1, 2, 4, 8)      # the sizes of data whose reset value is read as an integer


class ImageLayout:
    """Sections, segments and reset values. Needs `elf` from the image."""

    def real_section(self, shndx: int) -> bool:
        """Is a symbol's (SHN_XINDEX-expanded) section index a section of the file? Not
        SHN_UNDEF, SHN_ABS or SHN_COMMON. With extended numbering (0xff00 sections or more)
        an expanded index may exceed SHN_LORESERVE; only ABS and COMMON are then ambiguous,
        and read as themselves."""
        return shndx != S.SHN_UNDEF and shndx < len(self.elf.shdrs) \
            and shndx not in (S.SHN_ABS, S.SHN_COMMON)

    def section_name(self, shndx: int) -> str | None:
        """Name of a real section index; None for SHN_ABS, SHN_COMMON and SHN_UNDEF."""
        return self.elf.section_names[shndx] if self.real_section(shndx) else None

    @cached_property
    def _alloc_sections(self) -> list[int]:
        sh = self.elf.shdrs
        rows = [i for i, s in enumerate(sh) if s.sh_flags & S.SHF_ALLOC]
        return sorted(rows, key=lambda i: sh[i].sh_addr)

    def section_at(self, address: int) -> int | None:
        """The allocated section whose [sh_addr, sh_addr + sh_size) holds `address`."""
        sh = self.elf.shdrs
        for i in reversed(self._alloc_sections):
            if sh[i].sh_addr <= address < sh[i].sh_addr + sh[i].sh_size:
                return i
        return None

    def segment_at(self, address: int) -> int | None:
        """Program-header index of the PT_LOAD segment whose [p_vaddr, p_vaddr + p_memsz)
        holds `address` (the run-time address; .data's load copy sits at p_paddr)."""
        for i, p in enumerate(self.elf.phdrs):
            if p.p_type == S.PT_LOAD and p.p_vaddr <= address < p.p_vaddr + p.p_memsz:
                return i
        return None

    def load_segments(self) -> list:
        """The PT_LOAD program headers (elf.Phdr records), in program-header order."""
        return [p for p in self.elf.phdrs if p.p_type == S.PT_LOAD]

    def bytes_at(self, address: int, size: int, *, clip: bool = False) -> bytes | None:
        """The bytes at a run-time address at reset: its section's file bytes, zeros for
        NOBITS. None when no section holds them all; with `clip`, up to the section's end."""
        i = self.section_at(address)
        if i is None:
            return None
        sh = self.elf.shdrs[i]
        off = address - sh.sh_addr
        if not clip and off + size > sh.sh_size:
            return None
        return self.elf.section_bytes(i, off, size)

    def find_loaded(self, needle: bytes, skip: int = 0):
        """(file offset, address, its section's end offset) of everything in the loadable
        PROGBITS sections that holds `needle` `skip` bytes in; searched in place: a mapped
        image's pools of tens of MB are not copied."""
        data = self.elf.data
        for sh in self.elf.shdrs:
            if sh.sh_type == S.SHT_PROGBITS and sh.sh_flags & S.SHF_ALLOC:
                end = sh.sh_offset + sh.sh_size
                hit = data.find(needle, sh.sh_offset + skip, end)
                while hit >= 0:
                    yield hit - skip, sh.sh_addr + hit - skip - sh.sh_offset, end
                    hit = data.find(needle, hit + 1, end)

    def file_backed(self, shndx: int) -> bool:
        """Does the section have bytes that the loader copies? NOBITS never does (.bss,
        NOLOAD); a PROGBITS section outside every PT_LOAD's file image is not loaded either."""
        sh = self.elf.shdrs[shndx]
        if sh.sh_type == S.SHT_NOBITS or not sh.sh_flags & S.SHF_ALLOC:
            return False
        segs = self.load_segments()
        if not segs:
            return True
        off, size = sh.sh_offset, sh.sh_size
        return any(p.p_offset <= off and off + size <= p.p_offset + p.p_filesz for p in segs)

    def initial_bytes(self, sym: Symbol) -> bytes | None:
        """What the symbol holds at reset: its section's file bytes (PROGBITS) or zeros
        (NOBITS/NOLOAD). None when it has no section or runs past its section."""
        shndx = sym.shndx if self.real_section(sym.shndx) else self.section_at(sym.address)
        if shndx is None or shndx == S.SHN_UNDEF:
            return None
        sh = self.elf.shdrs[shndx]
        rel = sym.address - sh.sh_addr
        if rel < 0 or rel + sym.size > sh.sh_size:
            return None
        if not self.file_backed(shndx):
            return bytes(sym.size)
        start = sh.sh_offset + rel
        return self.elf.data[start:start + sym.size]

    def initial_value(self, sym: Symbol) -> int | None:
        """The symbol's reset value as an unsigned little-endian integer, for sizes 1, 2, 4, 8
        of data (objects and untyped labels); None for functions and other sizes."""
        if sym.size not in VALUE_SIZES or sym.type in (S.STT_FUNC, S.STT_SECTION, S.STT_FILE):
            return None
        raw = self.initial_bytes(sym)
        return None if raw is None else int.from_bytes(raw, "little")

"""What a word load from a constant address reads, when the image says it: a word of a
read-only loaded section (code, literal pools, `.rodata`, wherever the linker script put it).

The bytes there are the section's file bytes (the loader or boot ROM copies them unchanged) and
no store can change them: a read-only section is not SHF_WRITE, so the compiler put no object
there that the program writes (GCC moves a `const`-qualified or never-written initialised
pointer to `.rodata`; Himax's `cvapp.cpp` keeps `tensor_arena = (uint32_t)tensor_arena_buf` so).
A writable variable's reset value is no evidence of what it holds when the load runs.
Integers are little-endian (ELFDATA2LSB is checked when the file is read)."""
from __future__ import annotations

from weaklink.read import elfstructs as S


def read_only_word(image, address: int) -> int | None:
    """The word at `address` when it lies in a loaded read-only section of the image, else None."""
    if address % 4:
        return None
    shndx = image.section_at(address)
    if shndx is None:
        return None
    sh = image.elf.shdrs[shndx]
    if sh.sh_type != S.SHT_PROGBITS or sh.sh_flags & S.SHF_WRITE or address + 4 > sh.sh_addr + sh.sh_size:
        return None
    start = sh.sh_offset + address - sh.sh_addr
    return int.from_bytes(image.elf.data[start:start + 4], "little")

"""A small linked image built here with the real cross toolchain, for exact checks that do
not depend on the bundled fixture firmware: Thumb bits, odd data, every value size, .data vs
.bss vs NOLOAD, a pointer into an array, and a C++-namespaced near miss."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

C_SOURCE = r"""
#include <stdint.h>
uint32_t table[4] = {1, 2, 3, 4};
uint32_t *table_ptr = &table[2];
__attribute__((weak)) uint32_t *weak_ptr = 0;
uint64_t big = 0x1122334455667788ULL;
uint16_t half = 0xbeef;
uint8_t byte_v = 0x7f;
uint32_t zeroed;
__attribute__((section(".noinit"))) uint32_t noinit_v;
__attribute__((section(".scratch"), aligned(16))) uint8_t scratch_buf[256];
uint8_t *scratch_ptr = scratch_buf;
void f(void) {}
void (*fptr)(void) = f;
int main(void) { return 0; }
"""

ASM_SOURCE = r"""
    .syntax unified
    .data
    .byte 0
    .global odd_obj
    .type odd_obj, %object
odd_obj:
    .byte 0x5a
    .size odd_obj, 1
    .balign 4
    .weak weak_v
    .type weak_v, %object
weak_v:
    .word 1
    .size weak_v, 4
    .global _ZN2ns6weak_vE
    .type _ZN2ns6weak_vE, %object
_ZN2ns6weak_vE:
    .word 5
    .size _ZN2ns6weak_vE, 4
"""

LINKER_SCRIPT = """
MEMORY {
  FLASH   (rx) : ORIGIN = 0x10000000, LENGTH = 64K
  RAM     (rw) : ORIGIN = 0x20000000, LENGTH = 64K
  SCRATCH (rw) : ORIGIN = 0x31000000, LENGTH = 16K
}
ENTRY(main)
SECTIONS {
  .text   : { *(.text*) } > FLASH
  .rodata : { *(.rodata*) } > FLASH
  .data   : { *(.data*) } > RAM AT > FLASH
  .bss    : { *(.bss*) *(COMMON) } > RAM
  .noinit (NOLOAD) : { *(.noinit) } > RAM
  .scratch (NOLOAD) : { *(.scratch) } > SCRATCH
}
"""


@dataclass(frozen=True)
class SmallImage:
    elf: Path
    map: Path
    obj: Path


@pytest.fixture(scope="session")
def small_image(cross_toolchain, tmp_path_factory) -> SmallImage:
    tc = cross_toolchain
    d = tmp_path_factory.mktemp("small_image")
    (d / "a.c").write_text(C_SOURCE)
    (d / "b.s").write_text(ASM_SOURCE)
    (d / "t.ld").write_text(LINKER_SCRIPT)
    steps = [("gcc", [*tc.CPU_FLAGS, "-g", "-O0", "-c", "a.c", "-o", "a.o"]),
             ("gcc", [*tc.CPU_FLAGS, "-c", "b.s", "-o", "b.o"]),
             ("ld", ["-T", "t.ld", "a.o", "b.o", "-o", "t.elf", "-Map", "t.map"])]
    for tool, argv in steps:
        done = tc.run(tool, argv, cwd=d)
        assert done.returncode == 0, done.stderr
    return SmallImage(d / "t.elf", d / "t.map", d / "a.o")

"""Images for the diff tests, built here with the real cross toolchain: one program in three
builds. `grown` adds a function at the start of .text and a word at the start of .data (every
later symbol moves, the pointer follows its target); `moved` also places `buf` in .bss (RAM)
instead of .scratch (SCRATCH) and makes `hook` a weak default."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

BASE = r"""
#include <stdint.h>
GROW
uint32_t table[4] = {1, 2, 3, 4};
uint32_t *table_ptr = &table[2];
BUF_ATTR uint8_t buf[256];
uint8_t *buf_ptr = buf;
HOOK_ATTR int hook = 3;
uint32_t limit = 10;
int main(void) { return (int)table_ptr[0] + hook + buf_ptr[0]; }
"""
GROW = ("uint32_t pad_word = 7;\n"
        "__attribute__((used)) void grow(void) { for (volatile int i = 0; i < 9; i++) {} }\n")
SCRATCH = '__attribute__((section(".scratch"), aligned(16)))'

LINKER_SCRIPT = """
MEMORY {
  FLASH   (rx) : ORIGIN = 0x10000000, LENGTH = 64K
  RAM     (rw) : ORIGIN = 0x20000000, LENGTH = 64K
  SCRATCH (rw) : ORIGIN = 0x31000000, LENGTH = 16K
}
ENTRY(main)
SECTIONS {
  .text   : { *(.text.grow) *(.text*) } > FLASH
  .rodata : { *(.rodata*) } > FLASH
  .data   : { *(.data.pad_word) *(.data*) } > RAM AT > FLASH
  .bss    : { *(.bss*) *(COMMON) } > RAM
  .scratch (NOLOAD) : { *(.scratch) } > SCRATCH
}
"""

BUILDS = {
    "base": {"GROW": "", "BUF_ATTR": SCRATCH, "HOOK_ATTR": ""},
    "grown": {"GROW": GROW, "BUF_ATTR": SCRATCH, "HOOK_ATTR": ""},
    "moved": {"GROW": GROW, "BUF_ATTR": "", "HOOK_ATTR": "__attribute__((weak))"},
}


@dataclass(frozen=True)
class Build:
    elf: Path
    map: Path


@pytest.fixture(scope="session")
def builds(cross_toolchain, tmp_path_factory) -> dict[str, Build]:
    tc = cross_toolchain
    out = {}
    for name, subst in BUILDS.items():
        root = tmp_path_factory.mktemp(f"diff_{name}")   # one source name: prog.c in each
        (root / "t.ld").write_text(LINKER_SCRIPT)
        src = BASE
        for key, text in subst.items():
            src = src.replace(key, text)
        (root / "prog.c").write_text(src)
        for tool, argv in (("gcc", [*tc.CPU_FLAGS, "-g", "-O1", "-ffunction-sections",
                                    "-fdata-sections", "-c", "prog.c", "-o", "prog.o"]),
                           ("ld", ["-T", "t.ld", "prog.o", "-o", f"{name}.elf",
                                   "-Map", f"{name}.map"])):
            done = tc.run(tool, argv, cwd=root)
            assert done.returncode == 0, done.stderr
        out[name] = Build(root / f"{name}.elf", root / f"{name}.map")
    return out


@pytest.fixture(scope="session")
def story(firmware):
    """The three diffs of `weaklink demo --diff` (NPU checks included)."""
    from weaklink.demo.diffs import run_diffs

    return {(d.old, d.new): d.report for d in run_diffs().diffs}

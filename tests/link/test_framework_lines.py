"""Link lines in the shape of real firmware builds, modelled and linked by the real gcc/ld:
Zephyr's final link (-fuse-ld=bfd, -no-pie, --whole-archive libraries, --sort-common,
--print-memory-usage, -Map, --cref) and Himax WE2's (objects in an @objs.in response file,
a TrustZone secure image's --cmse-implib/--out-implib, --sort-section, --gc-sections, nano
specs). Both failed before ld's option table: `unrecognized ld option '-fuse-ld=bfd'`,
`--cmse-implib`, and gcc's own deleted response file on the collect2 line."""
from __future__ import annotations

import pytest

from weaklink import toolchain
from weaklink.cli import main
from weaklink.errors import UsageError
from weaklink.resolve.gnu.oracle import differences

GCC = ["arm-none-eabi-gcc", *toolchain.CPU_FLAGS]
SECTIONS = ("-ffunction-sections", "-fdata-sections", "-g")

ZEPHYR_LD = """
MEMORY { FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 512K
         RAM (rwx) : ORIGIN = 0x21000000, LENGTH = 256K }
ENTRY(__start)
SECTIONS {
  rom_start : { KEEP(*(.exc_vector_table*)) } > FLASH
  text : { *(.text*) *(.rodata*) } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  datas : { *(.data*) } > RAM AT > FLASH
  bss (NOLOAD) : { *(.bss*) *(COMMON) } > RAM
  tflm_arena (NOLOAD) : { *(tflm_arena) } > RAM
}
"""
ZEPHYR_SOURCES = {
    "reset.o": """extern int main(void); extern void z_sys_init(void);
        __attribute__((section(".exc_vector_table"), used))
        static void (*const vt[])(void) = { (void (*)(void))0x21040000 };
        void __start(void) { z_sys_init(); main(); for (;;) { } }""",
    "hooks.o": """__attribute__((weak)) void board_hook(void) { }
        __attribute__((weak)) int ethosu_address_remap(int a) { return a; }
        int _OffsetAbsSyms;""",
    "init.o": """extern void board_hook(void); int z_counter;
        void z_sys_init(void) { board_hook(); z_counter++; }""",
    "board.o": "int z_counter; void board_hook(void) { }",
    "sched.o": "void k_sched(void) { } void k_unused(void) { }",
    "never.o": "int never_pulled(void) { return 1; }",
    "main.o": """#include <string.h>
        extern void k_sched(void); extern int ethosu_address_remap(int);
        __attribute__((section("tflm_arena"))) static char arena[256];
        int main(void) { memset(arena, 0, sizeof arena); k_sched();
                         return ethosu_address_remap((int)arena); }""",
}


def _zephyr(sc):
    for name, src in ZEPHYR_SOURCES.items():
        sc.c(name, src, *SECTIONS, "-fcommon")
    sc.archive("libapp.a", ["main.o", "board.o"])
    sc.archive("libzephyr.a", ["reset.o", "hooks.o", "init.o"])
    sc.archive("libkernel.a", ["sched.o", "never.o"])
    (sc.root / "linker.cmd").write_text(ZEPHYR_LD)
    return [*GCC, "-fuse-ld=bfd", "-no-pie", "-Wl,-no-pie", "-nostdlib", "-static", "-Wl,-X",
            "-Wl,-N", "-Wl,--gc-sections", "-Wl,--build-id=none",
            "-Wl,--sort-common=descending", "-Wl,--sort-section=alignment",
            "-Wl,-u,_OffsetAbsSyms", "-Wl,--orphan-handling=warn", "-Wl,-T", "-Wl,linker.cmd",
            "-Wl,-Map=zephyr.map", "-Wl,--print-memory-usage", "-Wl,--cref",
            "-Wl,--whole-archive", "libapp.a", "libzephyr.a", "-Wl,--no-whole-archive",
            "libkernel.a", "-Wl,--start-group", "-lc", "-lgcc", "-Wl,--end-group",
            "-o", "zephyr.elf"]


def test_zephyr_shaped_line_agrees_with_the_real_link(sc):
    argv = _zephyr(sc)
    model = sc.link_driver(argv, cref=True)
    real = sc.driver(argv)
    assert real.ok, real.stderr
    assert differences(model, real, args=list(model.ld_args)) == []
    assert model.symbols["board_hook"].file == "libapp.a(board.o)"
    assert "libkernel.a(never.o)" not in model.loaded
    shown = [o for o, _ in model.no_effect]
    assert {"--sort-common=descending", "-no-pie", "--print-memory-usage",
            "--sort-section=alignment", "-Map=zephyr.map"} <= set(shown)
    assert not any(a.startswith("-fuse-ld") for a in model.ld_args)


WE2_LD = """
MEMORY { FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 512K
         RAM (rwx) : ORIGIN = 0x30000000, LENGTH = 256K }
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) KEEP(*(.init)) KEEP(*(.fini)) *(.rodata*) } > FLASH
  .gnu.sgstubs 0x10070000 : { KEEP(*(.gnu.sgstubs*)) . = ALIGN(32); } > FLASH
  .ARM.exidx : { *(.ARM.exidx* .gnu.linkonce.armexidx.*) } > FLASH
  .data : { *(.data*) } > RAM AT > FLASH
  .bss (NOLOAD) : { __bss_start__ = .; *(.bss*) *(COMMON) __bss_end__ = .; } > RAM
  .bss.NoInit (NOLOAD) : { *(.bss.NoInit*) } > RAM
  end = .; __end__ = .;
}
"""
WE2_SOURCES = {
    "main obj.o": """#include <string.h>
        extern int sg_get(void); extern int drv_init(void);
        __attribute__((section(".bss.NoInit"))) static char tensor_arena_buf[64];
        int main(void) { memset(tensor_arena_buf, sg_get(), sizeof tensor_arena_buf);
                         return drv_init() + tensor_arena_buf[3]; }""",
    "sg.o": """int secure_value = 3;
        __attribute__((cmse_nonsecure_entry)) int sg_get(void) { return secure_value; }""",
    "startup.o": """extern void _start(void);
        __attribute__((section(".vectors"), used))
        static void (*const vectors[])(void) = { (void (*)(void))0x30040000, _start };
        void Reset_Handler(void) { _start(); }""",
    "drv.o": """__attribute__((weak)) int drv_hook(void) { return 0; }
        int drv_init(void) { return drv_hook(); } int drv_unused(void) { return 7; }""",
}


def _we2(sc):
    for name, src in WE2_SOURCES.items():
        sc.c(name, src, *SECTIONS, "-mcmse")
    sc.archive("libdriver.a", ["drv.o"])
    (sc.root / "we2.ld").write_text(WE2_LD)
    (sc.root / "objs.in").write_text("'main obj.o'\n sg.o\tstartup.o\n")
    return [*GCC, "-mcmse", "-specs=nano.specs", "-specs=nosys.specs", "-T", "we2.ld",
            "@objs.in", "-Xlinker", "--cmse-implib", "-Xlinker", "--out-implib=cmse_lib.o",
            "-Wl,--sort-section=alignment", "-Wl,--gc-sections", "-Wl,-Map=we2.map",
            "-Wl,--start-group", "libdriver.a", "-Wl,--end-group", "-lm", "-o", "we2.elf"]


def test_himax_shaped_line_agrees_with_the_real_link(sc):
    argv = _we2(sc)
    model = sc.link_driver(argv, cref=True)
    real = sc.driver(argv)
    assert real.ok, real.stderr
    assert (sc.root / "cmse_lib.o").exists()          # the secure image's import library
    assert differences(model, real, args=list(model.ld_args)) == []
    assert not any(a.startswith("@") for a in model.ld_args)    # no gcc temporary file
    assert "main obj.o" in model.loaded and "sg.o" in model.loaded
    assert {"--cmse-implib", "--out-implib=cmse_lib.o"} <= {o for o, _ in model.no_effect}


def test_json_lists_the_options_without_effect(sc, capsys, monkeypatch):
    argv = _we2(sc)
    monkeypatch.chdir(sc.root)
    assert main(["link", "--json", "--", *argv]) == 0
    import json
    report = json.loads(capsys.readouterr().out)
    got = {o["option"]: o["help"] for o in report["options_without_effect"]}
    assert got["--cmse-implib"].startswith("Make import library")
    assert main(["link", "--", *argv]) == 0
    out = capsys.readouterr().out
    assert "no effect on resolution: -X, --cmse-implib, --out-implib=cmse_lib.o" in out


def test_a_response_file_that_is_gone_is_one_line(sc, capsys, monkeypatch):
    sc.c("m.o", "int main(void) { return 0; }")
    with pytest.raises(UsageError, match="@gone.rsp: no such response file"):
        sc.link_driver([*GCC, "-specs=nosys.specs", "m.o", "-Wl,@gone.rsp"])
    monkeypatch.chdir(sc.root)
    assert main(["link", "--", *GCC, "-specs=nosys.specs", "m.o", "-Wl,@gone.rsp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err

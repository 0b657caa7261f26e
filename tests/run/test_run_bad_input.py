"""Bad input to `weaklink run`: one line on stderr naming the file, exit status 2, nothing on
stdout; for a firmware that ran and crashed or did not exit, the line has the program counter
and the UART's last lines, and stdout has the report (tests/run/test_endings.py)."""
from __future__ import annotations

import sys
from pathlib import Path


from weaklink.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import build_firmware  # noqa: E402

U55 = ["--accelerator", "ethos-u55-128", "--system-config", "Ethos_U55_High_End_Embedded",
       "--memory-mode", "Shared_Sram"]


def one_line(capsys, argv, report: bool = False) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and (out.startswith(f"{argv[1]}: ") if report else out == "")
    assert err.count("\n") == 1 and err.startswith("weaklink: error: "), err
    return err


def test_not_an_elf(capsys, tmp_path):
    bad = tmp_path / "fw.elf"
    bad.write_text("not firmware\n")
    assert "not an ELF file" in one_line(capsys, ["run", str(bad), *U55])


def test_not_an_arm_image(capsys):
    assert "expected 1 (ELF32)" in one_line(capsys, ["run", sys.executable, *U55])


def test_an_image_for_another_board(capsys, run_variants, cross_toolchain):
    from weaklink.builders import firmware as fixtures

    u85 = fixtures.build([fixtures.Variant("weak", "custom", "u85")])[0]
    err = one_line(capsys, ["run", str(u85.elf), "--accelerator", "ethos-u85-256", "--system-config",
                            "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB"])
    assert "0x12000000" in err and "outside mps3-an547's memory" in err


# Arm's ethos-u core_platform targets/corstone-300/platform.ld (used by TFLM's
# cortex_m_corstone_300 target, with TFLM's patch putting .bss in SRAM, 32 MiB there) gives .bss,
# the heap and the stack a PT_NULL program header (`:null`): those sections are in no PT_LOAD.
# QEMU's SRAM at 0x31000000 is 4 MiB.
NULL_SEGMENT_BSS = """
MEMORY { ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 0x80000
         DTCM (rw) : ORIGIN = 0x30000000, LENGTH = 0x80000
         SRAM (rw) : ORIGIN = 0x31000000, LENGTH = 0x2000000 }
PHDRS { rom_exec PT_LOAD; null PT_NULL; }
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) } > ITCM :rom_exec
  .bss : { *(.bss* COMMON) } > SRAM :null
  .stack (COPY) : { . = ALIGN(8); . = . + 0x4000; __stack_top = .; } > DTCM :null
}
"""


def test_memory_in_no_load_segment_past_the_board(capsys, tmp_path, cross_toolchain):
    elf = build_firmware(tmp_path, "static char big[5 << 20]; void say(const char *); "
                                   "int main(void) { for (unsigned i = 0; i < sizeof big; i += 4096) "
                                   "big[i] = 1; say(\"done\\n\"); return big[4096]; }",
                         script=NULL_SEGMENT_BSS)
    err = one_line(capsys, ["run", str(elf), *U55, "--timeout", "10"])
    assert "section .bss occupies 0x31000000..0x31500000, outside mps3-an547's memory" in err


def test_a_crash_gives_the_faulting_pc_and_the_uart_tail(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, 'void say(const char *); int main(void) { say("1\\n"); say("2\\n"); '
                                   'say("3\\n"); say("about to crash\\n"); __builtin_trap(); return 0; }')
    err = one_line(capsys, ["run", str(elf), *U55, "--timeout", "10"], report=True)
    assert "the firmware crashed: HardFault at pc 0x" in err and "(main+0x" in err
    # the last lines printed (a failing test says why just before it stops)
    assert "UART tail: '2 / 3 / about to crash'" in err


def test_no_exit_gives_the_pc_and_the_uart_tail(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, 'void say(const char *); int main(void) { say("waiting\\n"); '
                                   'for (;;) { __asm volatile("nop"); } }')
    err = one_line(capsys, ["run", str(elf), *U55, "--timeout", "1"], report=True)
    assert "no exit within 1 s: stopped at pc 0x" in err and "(main+0x" in err
    assert "UART tail: 'waiting'" in err


def test_no_qemu(capsys, monkeypatch, tmp_path):
    import weaklink.run.qemu as q

    monkeypatch.setattr(q, "QEMU", "qemu-system-arm-not-installed")
    elf = build_firmware(tmp_path, "int main(void) { return 0; }") if _toolchain() else sys.executable
    err = one_line(capsys, ["run", str(elf), *U55])
    assert "qemu-system-arm-not-installed not found on PATH; install it with `apt-get install qemu-system-arm`" in err \
        or "ELF32" in err


def test_bad_timeout(capsys, tmp_path):
    bad = tmp_path / "fw.elf"
    bad.write_text("x")
    assert "--timeout" in one_line(capsys, ["run", str(bad), *U55, "--timeout", "0"])


def _toolchain():
    from weaklink import toolchain
    return toolchain.available()


def test_qemu_that_does_not_start(capsys, monkeypatch, cross_toolchain, tmp_path):
    import shutil

    import weaklink.run.qemu as q

    monkeypatch.setattr(q, "QEMU", shutil.which("false"))       # exits at once, serves nothing
    elf = build_firmware(tmp_path, "int main(void) { return 0; }")
    assert "QEMU did not start" in one_line(capsys, ["run", str(elf), *U55])

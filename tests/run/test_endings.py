"""How firmware ends, and that `weaklink run` ends there: a semihosting exit, `_exit` printing
`exit` and spinning (Zephyr's newlib hook), a fault taken to a handler that spins (a CMSIS
Default_Handler with weak aliases), a timeout. Each prints the UART and the job table, and each
has its JSON. Firmware built here with the real cross toolchain, run on the real QEMU."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from weaklink.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import STARTUP, build_firmware  # noqa: E402

U55 = ["--accelerator", "ethos-u55-128", "--system-config", "Ethos_U55_High_End_Embedded",
       "--memory-mode", "Shared_Sram"]

# Zephyr's newlib hook (lib/libc/newlib/libc-hooks.c): `_exit` writes "exit" and spins.
EXIT_SPIN = r"""
void say(const char *);
__attribute__((noinline)) void _exit(int status) { say("exit\n"); while (1) { } }
__attribute__((noinline)) void exit(int status) { _exit(status); }
int main(void) { say("inference done\n"); exit(STATUS); return 0; }
"""

# A CMSIS-style startup: Default_Handler is `b .` and every fault vector is a weak alias of it.
CMSIS_STARTUP = STARTUP.replace(
    "void Fault_Handler(void) { for (;;) {} }\nvoid NPU_IRQHandler(void) __attribute__((weak, alias(\"Fault_Handler\")));",
    "void Default_Handler(void) { for (;;) {} }\n"
    + "".join(f'void {n}(void) __attribute__((weak, alias("Default_Handler")));\n'
              for n in ("HardFault_Handler", "MemManage_Handler", "BusFault_Handler", "UsageFault_Handler",
                        "NPU_IRQHandler", "UART_IRQHandler"))).replace(
    "Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler,\n    Fault_Handler, Fault_Handler, Fault_Handler,",
    "Reset_Handler, Default_Handler, HardFault_Handler, MemManage_Handler,\n    BusFault_Handler, "
    "UsageFault_Handler, Default_Handler, [16 + 10] = UART_IRQHandler,")

# A fault in thread mode on the process stack (as in an RTOS thread): the frame is on the PSP.
PSP_FAULT = r"""
#include <stdint.h>
void say(const char *);
static uint32_t thread_stack[256] __attribute__((aligned(8)));
int main(void) {
    say("in a thread\n");
    __asm volatile("msr psp, %0\n mov r0, #2\n msr control, r0\n isb" ::"r"(thread_stack + 256) : "r0");
    *(volatile uint32_t *)0xFFFFFFF0u = 1;       /* no memory there: a precise BusFault */
    return 0;
}
"""


def run_cli(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("status", [0, 3])
def test_exit_spin_ends_the_run_with_the_status_from_r0(capsys, qemu, cross_toolchain, tmp_path, status):
    elf = build_firmware(tmp_path, EXIT_SPIN.replace("STATUS", str(status)))
    code, out, err = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20"])
    assert code == (0 if status == 0 else 1) and err == "", err
    assert f"exit {status} (_exit, then a loop with no way out)" in out.splitlines()[0]
    assert "  exit\n" in out and "  inference done\n" in out              # the UART, whole
    assert f"ended: _exit({status}) called" in out and "(_exit+0x" in out
    code, out, _ = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20", "--json"])
    data = json.loads(out)
    assert data["ending"] == "exit-spin" and data["outcome"] == "exit" and data["exit_code"] == status
    assert data["exit_call"]["function"] == "_exit" and data["exit_call"]["status"] == status
    assert data["spin"]["where"].startswith("pc 0x") and "(_exit+0x" in data["spin"]["where"]
    assert data["seconds"]["wall"] < 10            # ended at the spin, not at the timeout


def test_a_fault_names_the_handler_and_every_weak_alias(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, 'void say(const char *); int main(void) { say("about to crash\\n"); '
                                   '__builtin_trap(); return 0; }', startup=CMSIS_STARTUP)
    code, out, err = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20"])
    aliases = "Default_Handler (= BusFault_Handler, HardFault_Handler, MemManage_Handler, NPU_IRQHandler, " \
              "UART_IRQHandler, UsageFault_Handler)"
    assert code == 2
    assert out.splitlines()[0].endswith(f"FAULT: HardFault in {aliases}, 0 NPU job(s) on QEMU mps3-an547")
    assert "  about to crash\n" in out and "no NPU job was started" in out
    assert "fault: HardFault at pc 0x" in out and "(main+0x" in out and "on the MSP" in out
    # UDF escalates to HardFault: UNDEFINSTR in the UsageFault status, FORCED in HFSR
    assert "CFSR 0x00010000 (UNDEFINSTR), HFSR 0x40000000 (FORCED)" in out
    assert err.count("\n") == 1 and err.startswith("weaklink: error: ")
    assert "the firmware crashed: HardFault at pc 0x" in err and aliases in err
    assert "UART tail: 'about to crash'" in err
    code, out, _ = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20", "--json"])
    data = json.loads(out)
    assert code == 2 and data["ending"] == "fault" and data["outcome"] == "crash"
    fault = data["fault"]
    assert fault["name"] == "HardFault" and fault["exception"] == 3 and fault["stack"] == "MSP"
    assert fault["handler_names"][0] == "Default_Handler" and len(fault["handler_names"]) == 7
    assert fault["registers"]["CFSR"] == 0x10000 and "(main+0x" in fault["where"]
    assert data["end"]["pc"] == fault["pc"]


def test_a_fault_on_the_process_stack(capsys, qemu, cross_toolchain, tmp_path):
    """The frame of a fault in a thread is on the PSP, which QEMU's stub does not show: read
    in the guest, and the faulting store is found there."""
    elf = build_firmware(tmp_path, PSP_FAULT, startup=CMSIS_STARTUP)
    code, out, _ = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20", "--json"])
    data = json.loads(out)
    assert code == 2 and data["ending"] == "fault"
    fault = data["fault"]
    assert fault["stack"] == "PSP" and "(main+0x" in fault["where"]
    assert "PRECISERR" in fault["status"] and "BFAR 0xfffffff0" in fault["status"]


def test_an_interrupt_without_its_own_handler(capsys, qemu, cross_toolchain, tmp_path):
    """IRQ 10 (the CMSIS alias UART_IRQHandler): pended and enabled, it goes to Default_Handler."""
    elf = build_firmware(tmp_path, 'void say(const char *); int main(void) { say("irq\\n"); '
                                   '*(volatile unsigned *)0xE000E100u = 1u << 10; '
                                   '*(volatile unsigned *)0xE000E200u = 1u << 10; for (;;) {} }',
                         startup=CMSIS_STARTUP)
    code, out, err = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "20", "--json"])
    data = json.loads(out)
    assert code == 2 and data["ending"] == "fault" and data["fault"]["name"] == "IRQ 10"
    assert data["fault"]["registers"] is None
    assert "IRQ 10 went to Default_Handler (= " in err and "no handler of its own" in err


def test_a_timeout_prints_the_report_and_its_json(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, 'void say(const char *); int main(void) { say("waiting\\n"); '
                                   'for (volatile int i = 0;; ++i) {} }')
    code, out, err = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "1"])
    assert code == 2 and "TIMEOUT, 0 NPU job(s)" in out and "  waiting\n" in out
    assert "no exit within 1 s: stopped at pc 0x" in err
    code, out, _ = run_cli(capsys, ["run", str(elf), *U55, "--timeout", "1", "--json"])
    data = json.loads(out)
    assert code == 2 and data["ending"] == "timeout" and data["outcome"] == "timeout"
    assert data["spin"] is None                  # the loop stores to the stack: not a spin


def test_semihosting_exit_json(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, "int main(void) { return 5; }")
    code, out, _ = run_cli(capsys, ["run", str(elf), *U55, "--json"])
    data = json.loads(out)
    assert code == 1 and data["ending"] == "semihosting" and data["exit_code"] == 5
    assert data["fault"] is None and data["exit_call"] is None


def test_vela_ini_is_read(capsys, qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, "int main(void) { return 0; }")
    ini = tmp_path / "board.ini"
    ini.write_text("[System_Config.Board_Sys]\ncore_clock=400e6\naxi0_port=Sram\naxi1_port=OffChipFlash\n"
                   "Sram_clock_scale=1.0\nSram_burst_length=32\nSram_read_latency=16\nSram_write_latency=16\n"
                   "OffChipFlash_clock_scale=0.25\nOffChipFlash_burst_length=128\n"
                   "OffChipFlash_read_latency=64\nOffChipFlash_write_latency=64\n"
                   "[Memory_Mode.Board_Mem]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\n")
    argv = ["run", str(elf), "--accelerator", "ethos-u55-128", "--system-config", "Board_Sys",
            "--memory-mode", "Board_Mem"]
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and "no [System_Config.Board_Sys]" in err
    code, out, err = run_cli(capsys, argv + ["--vela-ini", str(ini)])
    assert code == 0 and "ethos-u55-128 / Board_Sys / Board_Mem" in out, err

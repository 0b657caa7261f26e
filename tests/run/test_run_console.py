"""The firmware's two consoles under `weaklink run`: UART0 and semihosting's, each captured on
its own, and the exit status semihosting's SYS_EXIT gives."""
from __future__ import annotations

import sys
from pathlib import Path

from weaklink.run import run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import build_firmware  # noqa: E402

U55 = dict(accelerator="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
MAIN = r"""
void say(const char *s);
static void sys_write0(const char *s)
{
    register int r0 __asm("r0") = 4;              /* SYS_WRITE0 */
    register const char *r1 __asm("r1") = s;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}
int main(void) { say("on the uart\n"); sys_write0("on semihosting\n"); return -3; }
"""


def test_uart_and_semihosting_apart_and_the_exit_status(qemu, cross_toolchain, tmp_path):
    report = run(build_firmware(tmp_path, MAIN), **U55, timeout=10)
    assert report.outcome == "exit" and report.exit_code == -3        # 253 as a process status
    assert report.uart == "on the uart\n"
    assert report.semihosting == "on semihosting\n"

"""Small firmware for mps3-an547 built from source in a test with the real cross toolchain:
a vector table whose fault vectors all go to `Fault_Handler` and whose NPU interrupt (IRQ 56)
goes to `NPU_IRQHandler` when the test defines one, UART0 output (`say`), and main's return
value as the semihosting exit status."""
from __future__ import annotations

import subprocess
from pathlib import Path

from weaklink import toolchain

# A minimal image for mps3-an547: vector table and code in ITCM, data and stack in DTCM.
LINKER_SCRIPT = """
MEMORY { ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 0x80000
         DTCM (rw) : ORIGIN = 0x30000000, LENGTH = 0x80000 }
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) } > ITCM
  .bss (NOLOAD) : { *(.bss* COMMON) } > DTCM
  .stack (NOLOAD) : { . = ALIGN(8); . = . + 0x4000; __stack_top = .; } > DTCM
}
"""

STARTUP = r"""
#include <stdint.h>
extern uint32_t __stack_top;
int main(void);
void Reset_Handler(void);
void Fault_Handler(void) { for (;;) {} }
void NPU_IRQHandler(void) __attribute__((weak, alias("Fault_Handler")));
__attribute__((section(".vectors"), used)) void (*const vectors[16 + 64])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, [16 + 56] = NPU_IRQHandler };
static volatile uint32_t *const uart = (uint32_t *)0x49303000u;
void say(const char *s) { while (*s) { while (uart[1] & 1u) {} uart[0] = (uint8_t)*s++; } }
static void semihosting_exit(int status) {
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    register uint32_t r0 __asm__("r0") = 0x20u;
    register uint32_t *r1 __asm__("r1") = block;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}
void Reset_Handler(void) { uart[4] = 16u; uart[2] = 1u; semihosting_exit(main()); for (;;) {} }
"""


def build_firmware(directory: Path, main_c: str = "", asm: str = "", name: str = "fw",
                   startup: str = STARTUP, script: str = LINKER_SCRIPT) -> Path:
    """main_c (with the startup above, or another) and optional assembly, linked for mps3-an547."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fw.ld").write_text(script)
    sources = [directory / "startup.c"]
    sources[0].write_text(startup)
    if main_c:
        sources.append(directory / "main.c")
        sources[-1].write_text(main_c)
    if asm:
        sources.append(directory / "seq.S")
        sources[-1].write_text(asm)
    elf = directory / f"{name}.elf"
    done = subprocess.run([toolchain.tool("gcc"), *toolchain.CPU_FLAGS, "-O1", "-g", "-ffreestanding",
                           "-nostdlib", "-T", str(directory / "fw.ld"), *map(str, sources), "-o", str(elf)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return elf

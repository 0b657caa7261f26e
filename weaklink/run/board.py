"""The board the firmware boots on: QEMU's `mps3-an547` (Cortex-M55, the Corstone-300 memory
map), and what a Corstone-300 image needs of it.

Memory (QEMU hw/arm/mps2-tz.c `an547_raminfo`, hw/arm/armsse.c for the SSE-300's TCMs), each
at its non-secure address and at the secure alias with address bit 28 set:
ITCM 0x00000000 512 KiB, SRAM 0x01000000 2 MiB, DTCM 0x20000000 512 KiB, SRAM 2 0x21000000
4 MiB, QSPI 0x28000000 8 MiB (read-only to the CPU), DDR 0x60000000 2 GiB (0x60000000 and
0x70000000 are different bytes there, not aliases as on the FVP).
The CPU boots in the secure state from the vector table at the start of ITCM.
The NPU (Ethos-U55/U65 on Corstone-300) has its register page at 0x48102000 and the secure
alias 0x58102000 and raises IRQ 56; QEMU leaves that page an unimplemented placeholder (reads
0, writes ignored) and drives nothing on the IRQ (Arm Corstone-300 TRM and ethos-u core_platform
`targets/corstone-300`; measured on QEMU 7.2, shared/research/firmware_execution.md).
"""
from __future__ import annotations

from dataclasses import dataclass

SECURE_ALIAS = 1 << 28


@dataclass(frozen=True)
class Memory:
    name: str
    base: int                 # the non-secure address (DDR: the region's start)
    size: int
    rom: bool = False
    aliased: bool = True      # also at base | SECURE_ALIAS

    def spans(self) -> list[tuple[int, int]]:
        spans = [(self.base, self.base + self.size)]
        if self.aliased:
            spans.append((self.base | SECURE_ALIAS, (self.base | SECURE_ALIAS) + self.size))
        return spans

    def contains(self, address: int, size: int = 1) -> bool:
        return any(lo <= address and address + max(size, 1) <= hi for lo, hi in self.spans())


@dataclass(frozen=True)
class Board:
    name: str
    machine: str
    memories: tuple[Memory, ...]
    vector_table: int         # where the CPU reads SP and the reset vector
    npu_pages: tuple[int, ...]
    npu_irq: int
    nvic_ispr: int = 0xE000E200          # NVIC Interrupt Set-Pending Registers (Armv8-M ARM)

    def memory_at(self, address: int, size: int = 1) -> Memory | None:
        return next((m for m in self.memories if m.contains(address, size)), None)

    def describe(self) -> str:
        return ", ".join(f"{m.name} 0x{m.base:08x}+{m.size >> 10} KiB" for m in self.memories)


AN547 = Board(
    name="mps3-an547", machine="mps3-an547",
    memories=(Memory("ITCM", 0x00000000, 512 << 10), Memory("SRAM", 0x01000000, 2 << 20),
              Memory("DTCM", 0x20000000, 512 << 10), Memory("SRAM 2", 0x21000000, 4 << 20),
              Memory("QSPI", 0x28000000, 8 << 20, rom=True),
              Memory("DDR", 0x60000000, 2 << 30, aliased=False)),
    vector_table=0x10000000, npu_pages=(0x48102000, 0x58102000), npu_irq=56)

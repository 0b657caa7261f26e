"""The board the firmware boots on: QEMU's `mps3-an547` (Cortex-M55, the Corstone-300 memory
map), described once for Corstone-300 images and once for Corstone-320 images that use only the
memory the two maps share.

QEMU's memory (hw/arm/mps2-tz.c `an547_raminfo`, hw/arm/armsse.c for the SSE-300's TCMs), each
at its non-secure address and at the secure alias with address bit 28 set:
ITCM 0x00000000 512 KiB, SRAM 0x01000000 2 MiB, DTCM 0x20000000 512 KiB, SRAM 2 0x21000000
4 MiB, QSPI 0x28000000 8 MiB (read-only to the CPU), DDR 0x60000000 2 GiB (0x60000000 and
0x70000000 are different bytes there, not aliases as on the FVP). Nothing else: QEMU 7.2 has
no option that maps more RAM on this machine (`-M mps3-an547,help`; `-m` is the DDR, refused
unless 2 GiB), and the board sets the SSE-300's `init-svtor` itself, so `-global` cannot move
the boot vector (measured: `info qtree` keeps init-svtor 0 with `-global sse-300.init-svtor=...`).
The CPU boots in the secure state from the vector table at the start of ITCM (0x00000000,
whose secure alias is 0x10000000).

Corstone-300: the NPU (Ethos-U55/U65) has its register page at 0x48102000 and the secure
alias 0x58102000 and raises IRQ 56; QEMU leaves that page an unimplemented placeholder (reads
0, writes ignored) and drives nothing on the IRQ (Arm Corstone-300 TRM and ethos-u core_platform
`targets/corstone-300`; measured on QEMU 7.2, shared/research/firmware_execution.md).

Corstone-320 (ExecuTorch examples/arm/executor_runner/Corstone-320.ld, MEMORY: ITCM 0x10000000
32 KiB, BROM 0x11000000 128 KiB, BRAM 0x12000000 2 MiB, DTCM 0x30000000 32 KiB, SRAM 0x31000000
4 MiB, QSPI 0x38000000 8 MiB, DDR 0x70000000 256 MiB): every region but BRAM falls in memory
mps3-an547 has at the same address (ITCM and DTCM in its TCMs, BROM in SRAM's secure alias,
SRAM in SRAM 2's, QSPI in QSPI's, DDR in DDR), so an image that leaves BRAM empty runs. It boots
from BROM (the vectors there, as ExecuTorch's script places them): the debugger points VTOR,
SP and PC at that table before the first instruction, since QEMU reads ITCM's. The NPU
(Ethos-U85) is at 0x50004000 with IRQ 16 (ethos-u core_platform `targets/corstone-320/
target.cpp`: ETHOSU_BASE_ADDRESS, ETHOSU_IRQ); its non-secure alias 0x40004000 is assumed by
the SSE's address-bit-28 rule. On QEMU both addresses are unmapped: the watchpoint stops every
access before it reaches the bus.
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
    vector_table: int         # where the image's table must be: SP, the reset vector, the handlers
    npu_pages: tuple[int, ...]
    npu_irq: int
    soc: str                  # the Corstone whose images it runs
    reset_table: int = 0x10000000        # where QEMU's reset reads SP and PC (ITCM)
    nvic_ispr: int = 0xE000E200          # NVIC Interrupt Set-Pending Registers (Armv8-M ARM)
    vtor: int = 0xE000ED08               # SCB Vector Table Offset Register (Armv8-M ARM)
    lacks: str = ""                      # the SoC's memory QEMU does not have

    def memory_at(self, address: int, size: int = 1) -> Memory | None:
        return next((m for m in self.memories if m.contains(address, size)), None)

    def describe(self) -> str:
        text = ", ".join(f"{m.name} 0x{m.base:08x}+{m.size >> 10} KiB" for m in self.memories)
        return text + (f"; not {self.lacks}" if self.lacks else "")


AN547 = Board(
    name="mps3-an547", machine="mps3-an547",
    memories=(Memory("ITCM", 0x00000000, 512 << 10), Memory("SRAM", 0x01000000, 2 << 20),
              Memory("DTCM", 0x20000000, 512 << 10), Memory("SRAM 2", 0x21000000, 4 << 20),
              Memory("QSPI", 0x28000000, 8 << 20, rom=True),
              Memory("DDR", 0x60000000, 2 << 30, aliased=False)),
    vector_table=0x10000000, npu_pages=(0x48102000, 0x58102000), npu_irq=56, soc="corstone-300")

# Corstone-320's regions at their secure addresses, each inside an mps3-an547 memory (above);
# BRAM is left out: QEMU has nothing at 0x12000000.
CORSTONE_320 = Board(
    name="mps3-an547 (Corstone-320 map)", machine="mps3-an547",
    memories=(Memory("ITCM", 0x10000000, 32 << 10, aliased=False),
              Memory("BROM", 0x11000000, 128 << 10, rom=True, aliased=False),
              Memory("DTCM", 0x30000000, 32 << 10, aliased=False),
              Memory("SRAM", 0x31000000, 4 << 20, aliased=False),
              Memory("QSPI", 0x38000000, 8 << 20, rom=True, aliased=False),
              Memory("DDR", 0x70000000, 256 << 20, aliased=False)),
    vector_table=0x11000000, npu_pages=(0x40004000, 0x50004000), npu_irq=16, soc="corstone-320",
    lacks="BRAM 0x12000000+2048 KiB, which QEMU does not map")

BOARDS = {b.soc: b for b in (AN547, CORSTONE_320)}


def board_for(soc: str, corstone: str) -> Board:
    """The description for the SoC an image was built for; a preset without one of its own (a
    hypothetical SoC such as `shared-bus`) runs on its accelerator's Corstone (`corstone`)."""
    return BOARDS.get(soc) or BOARDS[corstone]

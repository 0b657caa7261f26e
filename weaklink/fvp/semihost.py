"""SYS_HEAPINFO (semihosting operation 0x16) answered as the FVP's cpu0.semihosting-heap_base,
-heap_limit, -stack_base and -stack_limit say.

QEMU 7.2 answers it from the RAM the image starts in (semihosting/arm-compat-semi.c,
common_semi_find_bases: the heap from the image's end to the region's top, the stack at the
top; measured for an image in ITCM: heap 0x0..0x80000, stack base 0x80000), and newlib's crt0 (libgloss/arm/crt0.S) moves the stack pointer to a non-zero stack base
and sets __heap_limit from a non-zero heap limit: the firmware would see another memory layout
than on the FVP, where ExecuTorch gives stack_base=0 and heap_limit=0 (run_fvp.sh). So the
image's semihosting calls (`BKPT 0xAB`, Armv8-M ARM: BKPT; semihosting's M-profile trap) get a
breakpoint; at one with r0 = SYS_HEAPINFO the block r1 points at is written here and the PC
moves past the BKPT; every other operation is stepped through for QEMU to serve."""
from __future__ import annotations

import struct

from weaklink.run.irq import wait_sites

SYS_HEAPINFO = 0x16
BKPT_SEMIHOSTING = {b"\xab\xbe": "bkpt 0xab"}       # T1 encoding of BKPT #0xAB, little-endian
PC, XPSR = 15, 16


def heapinfo_hooks(words: tuple[int, int, int, int]):
    """The Session's hooks (see weaklink.run.run's `session`): a function of the image."""
    block = struct.pack("<4I", *words)

    def serve(session, regs: list[int]) -> None:
        pc = regs[PC]
        if regs[0] != SYS_HEAPINFO:
            session._step_over(pc)
            return
        c = session.client
        where = int.from_bytes(c.read_memory(regs[1], 4), "little")    # r1 -> the block's address
        c.write_memory(where, block)
        after = list(regs[:17])
        after[0], after[PC] = 0, pc + 2
        c.write_core_registers(after)

    def hooks(image) -> dict:
        """`image`: weaklink.run.image.RunImage."""
        return {address: serve for address in wait_sites(image.image, BKPT_SEMIHOSTING)}

    return hooks

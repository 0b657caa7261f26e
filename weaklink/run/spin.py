"""A loop the CPU cannot leave: how firmware stops when it has nothing left to do.

Firmware that has finished or faulted often ends by spinning rather than by exiting: Zephyr's
newlib hook `_exit` writes "exit" and loops in `while (1)` (zephyr lib/libc/newlib/libc-hooks.c);
a CMSIS startup file's `Default_Handler`, which every unclaimed vector aliases weakly, is
`b .`. A CPU found in such a loop leaves it only through an exception. The test is on the
code, decoded by weaklink.read.thumb: from the PC, each instruction falls through or branches
unconditionally (B), only computes on registers or waits (no load or store, the stack included;
no call, no supervisor call or breakpoint, semihosting being a BKPT; no IT block, no
coprocessor), and the path comes back to an instruction it has already passed. A loop that
loads or stores (a poll, a counter in RAM, a UART it prints to) is not one: it may make
progress, or be waiting for something to change. An instruction not decoded is not inert, so
a loop not understood is never taken for a spin.
"""
from __future__ import annotations

from typing import Callable

from weaklink.read import thumb

MAX_PATH = 32             # instructions followed from the PC: a spin is a few instructions
# The instruction classes that only compute on registers, wait or change nothing the loop sees
INERT = {"mov", "movw", "mvn", "movt", "add", "sub", "adr", "lsl", "lsr", "asr", "ror", "data",
         "compare", "nop", "yield", "wfe", "wfi", "sev", "hint", "barrier", "msr", "mrs", "cps", "b"}


def no_way_out(code: Callable[[int], bytes], pc: int) -> tuple[int, int] | None:
    """The lowest and highest instruction addresses of the loop the CPU at `pc` runs and
    cannot leave, or None. `code(address)` gives the 4 bytes at an address."""
    path: list[int] = []
    at = pc
    for _ in range(MAX_PATH):
        if at in path:
            loop = path[path.index(at):]
            return min(loop), max(loop)
        path.append(at)
        insn = thumb.at(code(at), at, at)
        if insn is None or insn.op not in INERT:
            return None
        if insn.flow == thumb.JUMP:
            at = insn.target
        elif insn.flow == thumb.NEXT:
            at += insn.size
        else:
            return None
    return None

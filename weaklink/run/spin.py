"""A loop the CPU cannot leave: how firmware stops when it has nothing left to do.

Firmware that has finished or faulted often ends by spinning rather than by exiting: Zephyr's
newlib hook `_exit` writes "exit" and loops in `while (1)` (zephyr lib/libc/newlib/libc-hooks.c);
a CMSIS startup file's `Default_Handler`, which every unclaimed vector aliases weakly, is
`b .`. A CPU found in such a loop leaves it only through an exception. The test is on the
code, with the constant-tracking Thumb reader's flow (weaklink.bind.thumb): from the PC, each
instruction falls through or branches unconditionally (B), touches no memory, calls nothing and
is not conditional, and the path comes back to an instruction it has already passed. A loop
that loads or stores (a poll, a counter in RAM, a UART it prints to) is not one: it may make
progress, or be waiting for something to change.
"""
from __future__ import annotations

from typing import Callable

from weaklink.bind.thumb import JUMP, NEXT, decode, step

MAX_PATH = 32             # instructions followed from the PC: a spin is a few instructions


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
        insn = decode(code(at), at, at, at + 4)
        if insn is None or not inert(insn.hw1, insn.hw2, insn.size):
            return None
        flow = step({}, insn, lambda _: None)
        if flow.kind == JUMP and flow.target is not None:
            at = flow.target
        elif flow.kind == NEXT and not flow.it:
            at += insn.size
        else:
            return None
    return None


def inert(hw1: int, hw2: int, size: int) -> bool:
    """Whether the instruction only computes on registers, waits, or branches unconditionally
    (Arm v7-M ARM, A5.2 and A5.3 encoding tables; Armv8-M keeps them): no load or store (the
    stack included), no call, no supervisor call or breakpoint (semihosting is a BKPT), no IT
    block, no coprocessor. Anything not listed is not inert, so a loop not understood is never
    taken for a spin."""
    if size == 2:
        h = hw1
        if h >> 13 == 0 or h >> 11 in (0b00100, 0b00101, 0b00110, 0b00111):
            return True                                    # shifts, add/sub, MOV/CMP/ADD/SUB imm
        if h >> 10 == 0b010000:                            # data processing (register)
            return True
        if h >> 10 == 0b010001:                            # MOV/ADD/CMP high registers, BX; not BLX
            return h >> 7 != 0b010001111
        if h >> 11 in (0b10100, 0b10101, 0b11100):         # ADR, ADD Rd, SP; B (T2)
            return True
        if h >> 12 == 0b1011:                              # miscellaneous (A5.2.5)
            sub = (h >> 8) & 0xF
            # ADD/SUB SP, extend, CPS, REV; hints (mask 0: NOP, YIELD, WFE, WFI, SEV), not IT
            return sub in (0x0, 0x2, 0x6, 0xA) or (sub == 0xF and not h & 0xF)
        return False
    op1, op2 = (hw1 >> 11) & 3, (hw1 >> 4) & 0x7F
    if op1 == 2 and not hw2 >> 15:                         # data processing (immediate)
        return True
    if op1 == 2:                                           # branches and miscellaneous control
        kind = (hw2 >> 12) & 0b101
        if kind == 0b001:                                  # B.W (T4)
            return True
        # MSR, MRS, hints and barriers; not B<c>.W, BL, the loop branches or UDF
        return kind == 0b000 and (hw1 >> 7) & 7 == 0b111 and op2 in (0b0111000, 0b0111001, 0b0111010,
                                                                   0b0111011, 0b0111110, 0b0111111)
    if op1 == 1:                                           # data processing (shifted register)
        return op2 & 0b1100000 == 0b0100000
    if op1 == 3:                                           # data processing (register), multiply, divide
        return op2 & 0b1110000 == 0b0100000 or op2 & 0b1111000 in (0b0110000, 0b0111000)
    return False

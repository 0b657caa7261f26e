"""The Thumb load and store instructions a driver uses on a device's registers, decoded so
that the debugger can perform them itself.

A watchpoint on the NPU's register page stops the CPU before the access (Arm watchpoints are
taken before the instruction completes). The session then reads the instruction at the PC,
computes its address from the registers, serves the load from the register model (or hands
the store's value to it), applies the base register's writeback and moves the PC past the
instruction: the access never reaches QEMU's empty placeholder, so any register base works,
mapped or not.

The instruction is decoded by weaklink.read.thumb, whose `Access` gives the address and the
writeback: LDR/STR(B/H/SB/SH) with an immediate or a register offset, pre- or post-indexed
with writeback, the unprivileged T forms; LDRD/STRD; LDM/STM, PUSH/POP. Anything else touching
the page (exclusive accesses, FP or MVE loads, a literal load, which never reads a device) is
refused by name. The IT state (xPSR) the performed instruction advances is the CPU's
execution state, kept here.
"""
from __future__ import annotations

from weaklink.errors import InputError
from weaklink.read import thumb


def access_at(code: bytes, pc: int, where: str = "") -> thumb.Access:
    """The load or store at `pc`; `code` holds at least its first 2 (and, when 32-bit, 4) bytes."""
    insn = thumb.at(code.ljust(4, b"\0"), pc, pc)
    if insn.access is None or insn.access.base == thumb.PC:
        text = f"{insn.hw1:04x} {insn.hw2:04x}" if insn.size == 4 else f"{insn.hw1:04x}"
        raise InputError(where or None, f"pc 0x{pc:08x}: instruction {text} accesses the NPU's "
                         "registers but is not a load or store this debugger performs "
                         "(LDR/STR, LDRD/STRD, LDM/STM)")
    return insn.access


def _bits(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def _itstate(xpsr: int) -> int:
    """ITSTATE, from xPSR[15:10]:[26:25]: the condition in [7:4], the mask below it."""
    return (_bits(xpsr, 15, 10) << 2) | _bits(xpsr, 26, 25)


def condition_passes(xpsr: int) -> bool:
    """Whether the instruction at the PC executes: outside an IT block always, inside one when
    its condition (ITSTATE[7:4]) holds on the flags (Armv8-M ARM, ConditionHolds())."""
    it = _itstate(xpsr)
    if it & 0xF == 0:
        return True
    cond = it >> 4
    n, z, c, v = (xpsr >> 31) & 1, (xpsr >> 30) & 1, (xpsr >> 29) & 1, (xpsr >> 28) & 1
    holds = [z, c, n, v, c and not z, n == v, n == v and not z, True][cond >> 1]
    return bool(holds) != bool(cond & 1 and cond != 0xF)


def it_advance(xpsr: int) -> int:
    """xPSR after one instruction of an IT block: ITSTATE (xPSR[15:10]:[26:25]) shifts its
    mask left; a mask ending in 000 ends the block (ARM ARM, ITAdvance())."""
    it = _itstate(xpsr)
    if it & 0xF == 0:                                  # not in an IT block (or ICI state)
        return xpsr
    it = 0 if it & 0x7 == 0 else (it & 0xE0) | ((it << 1) & 0x1F)
    xpsr &= ~((0x3F << 10) | (0x3 << 25))
    return xpsr | ((it >> 2) << 10) | ((it & 3) << 25)

"""The Thumb load and store instructions a driver uses on a device's registers, decoded so
that the debugger can perform them itself.

A watchpoint on the NPU's register page stops the CPU before the access (Arm watchpoints are
taken before the instruction completes). The session then reads the instruction at the PC,
computes its address from the registers, serves the load from the register model (or hands
the store's value to it), applies the base register's writeback and moves the PC past the
instruction: the access never reaches QEMU's empty placeholder, so any register base works,
mapped or not.

Encodings (Arm v8-M Architecture Reference Manual, DDI0553, "Thumb instruction set
encoding": 16-bit load/store single and multiple; 32-bit load/store single, dual and
multiple):
- 16-bit: LDR/STR(B/H) with a 5-bit immediate; the register-offset forms (LDRSB/LDRSH too);
  LDM/STM.
- 32-bit: LDR/STR(B/H/SB/SH) with a 12-bit immediate, with an 8-bit immediate and P/U/W
  (pre/post-indexed, writeback, and the unprivileged T forms), with a shifted register;
  LDRD/STRD with an 8-bit immediate ×4; LDM/STM IA and DB.
Anything else touching the page (exclusive accesses, FP or MVE loads) is refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass

from weaklink.bind.thumbisa import is_wide
from weaklink.errors import InputError


@dataclass(frozen=True)
class Access:
    """One decoded load or store."""
    load: bool
    size: int                 # bytes per register: 1, 2 or 4
    signed: bool              # a sign-extending load (LDRSB, LDRSH)
    registers: tuple[int, ...]    # Rt (and Rt2, or the register list), in transfer order
    base: int                 # Rn
    offset: int               # the immediate, or 0 with `index` set
    index: int | None         # Rm of a register offset
    shift: int                # LSL applied to Rm
    add: bool                 # U: offset added (else subtracted)
    pre: bool                 # P: address = base ± offset (else the base, offset on writeback)
    writeback: bool
    length: int               # instruction bytes: 2 or 4
    multiple: bool = False    # LDM/STM: a block of words, the base moves by 4 per register
    decrement: bool = False   # LDMDB/STMDB: the block ends below the base

    def _moved(self, regs: list[int]) -> int:
        if self.multiple:
            step = 4 * len(self.registers)
            return (regs[self.base] + (-step if self.decrement else step)) & 0xFFFFFFFF
        offset = self.offset if self.index is None else (regs[self.index] << self.shift) & 0xFFFFFFFF
        return (regs[self.base] + (offset if self.add else -offset)) & 0xFFFFFFFF

    def address(self, regs: list[int]) -> int:
        """The address of the first transfer; the others follow it word by word."""
        if self.multiple:
            return self._moved(regs) if self.decrement else regs[self.base]
        return self._moved(regs) if self.pre else regs[self.base]

    def new_base(self, regs: list[int]) -> int | None:
        """The base register after writeback, or None."""
        return self._moved(regs) if self.writeback else None


def _bits(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def _reglist(mask: int) -> tuple[int, ...]:
    return tuple(r for r in range(16) if mask >> r & 1)


def _single(load, size, signed, rt, rn, offset=0, index=None, shift=0, add=True, pre=True,
            writeback=False, length=4) -> Access:
    return Access(load, size, signed, (rt,), rn, offset, index, shift, add, pre, writeback, length)


def decode(code: bytes, pc: int, where: str = "") -> Access:
    """The load or store at `pc`; `code` holds at least its first 2 (and, when 32-bit, 4) bytes."""
    hw1 = int.from_bytes(code[0:2], "little")
    if is_wide(hw1):
        hw2 = int.from_bytes(code[2:4], "little")
        access = _decode32(hw1, hw2)
        text = f"{hw1:04x} {hw2:04x}"
    else:
        access = _decode16(hw1)
        text = f"{hw1:04x}"
    if access is None:
        raise InputError(where or None, f"pc 0x{pc:08x}: instruction {text} accesses the NPU's "
                         "registers but is not a load or store this debugger performs "
                         "(LDR/STR, LDRD/STRD, LDM/STM)")
    return access


def _decode16(hw: int) -> Access | None:
    op = hw >> 11
    rt, rn, imm5 = hw & 7, _bits(hw, 5, 3), _bits(hw, 10, 6)
    if op in (0b01100, 0b01101):                       # STR/LDR Rt, [Rn, #imm5*4]
        return _single(op & 1, 4, False, rt, rn, imm5 * 4, length=2)
    if op in (0b01110, 0b01111):                       # STRB/LDRB
        return _single(op & 1, 1, False, rt, rn, imm5, length=2)
    if op in (0b10000, 0b10001):                       # STRH/LDRH
        return _single(op & 1, 2, False, rt, rn, imm5 * 2, length=2)
    if hw >> 12 == 0b0101:                             # register offset
        opb, rm = _bits(hw, 11, 9), _bits(hw, 8, 6)
        load, size, signed = {0: (False, 4, False), 1: (False, 2, False), 2: (False, 1, False),
                              3: (True, 1, True), 4: (True, 4, False), 5: (True, 2, False),
                              6: (True, 1, False), 7: (True, 2, True)}[opb]
        return _single(load, size, signed, rt, rn, index=rm, length=2)
    if hw >> 12 == 0b1100:                             # STM/LDM Rn!, {list}
        load, rn, regs = bool(hw >> 11 & 1), _bits(hw, 10, 8), _reglist(hw & 0xFF)
        writeback = not load or rn not in regs
        return Access(load, 4, False, regs, rn, 0, None, 0, True, False, writeback, 2, multiple=True)
    return None


def _decode32(hw1: int, hw2: int) -> Access | None:
    rn, rt = hw1 & 0xF, hw2 >> 12
    if hw1 >> 9 == 0b1111100:                          # load/store single
        signed, big_imm, size_code, load = hw1 >> 8 & 1, hw1 >> 7 & 1, _bits(hw1, 6, 5), hw1 >> 4 & 1
        if size_code == 3 or rn == 15 or (signed and not load):
            return None
        size = 1 << size_code
        if big_imm:                                    # #imm12, positive, no writeback
            return _single(bool(load), size, bool(signed), rt, rn, hw2 & 0xFFF)
        if hw2 >> 11 & 1:                              # #imm8 with P, U, W (T: 1110)
            p, u, w = hw2 >> 10 & 1, hw2 >> 9 & 1, hw2 >> 8 & 1
            return _single(bool(load), size, bool(signed), rt, rn, hw2 & 0xFF, add=bool(u),
                           pre=bool(p), writeback=bool(w))
        if _bits(hw2, 11, 6) == 0:                     # [Rn, Rm, LSL #imm2]
            return _single(bool(load), size, bool(signed), rt, rn, index=hw2 & 0xF,
                           shift=_bits(hw2, 5, 4))
        return None
    if hw1 >> 9 == 0b1110100:
        p, u, w, load = hw1 >> 8 & 1, hw1 >> 7 & 1, hw1 >> 5 & 1, bool(hw1 >> 4 & 1)
        if hw1 >> 6 & 1:                               # LDRD/STRD (P or W set; else exclusive)
            if not (p or w) or rn == 15:
                return None
            return Access(load, 4, False, (rt, _bits(hw2, 11, 8)), rn, (hw2 & 0xFF) * 4, None, 0,
                          bool(u), bool(p), bool(w), 4)
        if (p, u) in ((0, 1), (1, 0)):                 # LDM/STM IA (01) or DB (10)
            regs = _reglist(hw2)
            return Access(load, 4, False, regs, rn, 0, None, 0, True, False, bool(w), 4,
                          multiple=True, decrement=bool(p))
    return None


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

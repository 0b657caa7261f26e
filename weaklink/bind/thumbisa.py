"""Thumb basics for the constant-tracking reader (weaklink.bind.thumb): an instruction, where
control goes after it, the register file of known constants, and the immediates and branch
offsets of the Armv7-M / Armv8-M encodings (Arm v7-M Architecture Reference Manual, A5)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

SP, LR, PC = 13, 14, 15
ALL = tuple(range(16))
CALL_CLOBBERS = (0, 1, 2, 3, 12, LR)     # AAPCS: r0-r3, r12 and lr do not survive a call
MASK = 0xFFFFFFFF

# Flow kinds: NEXT falls through; JUMP goes to `target` only; BRANCH to `target` or the next
# instruction; CALL (BL) to `target` and back; RETURN and OPAQUE leave the function (OPAQUE:
# to a place the code does not say, a register or a table); STOP never continues (UDF).
NEXT, JUMP, BRANCH, CALL, RETURN, OPAQUE, STOP = "next", "jump", "branch", "call", "return", "opaque", "stop"


@dataclass(frozen=True)
class Insn:
    pc: int
    hw1: int
    hw2: int            # 0 for a 16-bit instruction
    size: int           # 2 or 4


@dataclass(frozen=True)
class Flow:
    kind: str = NEXT
    target: int | None = None
    it: int = 0         # IT: how many following instructions are conditional


def is_wide(hw1: int) -> bool:
    """A 32-bit encoding starts with 0b11101, 0b11110 or 0b11111 (A5.1)."""
    return hw1 >> 11 in (0b11101, 0b11110, 0b11111)


def decode(code: bytes, base: int, pc: int, end: int) -> Insn | None:
    """The instruction at `pc` in `code` (which starts at `base`), None past `end`."""
    off = pc - base
    if pc + 2 > end or off < 0 or off + 2 > len(code):
        return None
    hw1 = struct.unpack_from("<H", code, off)[0]
    if not is_wide(hw1):
        return Insn(pc, hw1, 0, 2)
    if pc + 4 > end or off + 4 > len(code):
        return None
    return Insn(pc, hw1, struct.unpack_from("<H", code, off + 2)[0], 4)


def thumb_expand_imm(imm12: int) -> int:
    """ThumbExpandImm (A5.3.2)."""
    if imm12 >> 10 == 0:
        byte, kind = imm12 & 0xFF, (imm12 >> 8) & 3
        return [byte, byte << 16 | byte, byte << 24 | byte << 8,
                byte << 24 | byte << 16 | byte << 8 | byte][kind]
    unrotated, rot = 0x80 | (imm12 & 0x7F), imm12 >> 7
    return ((unrotated >> rot) | (unrotated << (32 - rot))) & MASK


def bl_target(pc: int, hw1: int, hw2: int) -> int | None:
    """The target of a BL (T1) at `pc`, or None when the pair is not a BL."""
    if hw1 >> 11 != 0b11110 or (hw2 & 0xD000) != 0xD000:
        return None
    return branch24(pc, hw1, hw2)


def branch24(pc: int, hw1: int, hw2: int) -> int:
    """BL and B.W (T4): S:I1:I2:imm10:imm11:'0', with I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S)."""
    s = (hw1 >> 10) & 1
    i1, i2 = 1 - (((hw2 >> 13) & 1) ^ s), 1 - (((hw2 >> 11) & 1) ^ s)
    off = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1
    return (pc + 4 + off - (s << 25)) & MASK


def branch20(pc: int, hw1: int, hw2: int) -> int:
    """B<c>.W (T3): S:J2:J1:imm6:imm11:'0'."""
    s = (hw1 >> 10) & 1
    off = (s << 20 | ((hw2 >> 11) & 1) << 19 | ((hw2 >> 13) & 1) << 18
           | (hw1 & 0x3F) << 12 | (hw2 & 0x7FF) << 1)
    return (pc + 4 + off - (s << 21)) & MASK


def signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def literal_base(pc: int) -> int:
    """Align(PC, 4), where PC reads as the instruction's address + 4."""
    return (pc + 4) & ~3


class State:
    """A register file of known constants; `conditional` (inside an IT block) keeps a written
    register only when the new value equals the old, since the write may not happen."""

    def __init__(self, regs: dict, conditional: bool, loads: dict | None = None,
                 memory=None, stores: dict | None = None):
        self.regs, self.conditional, self.loads = regs, conditional, loads
        self.memory, self.stores = memory, stores

    def load(self, pc: int, rn: int, offset: int) -> int | None:
        """Note a word load from [Rn, #offset] (before Rt is written: Rt may be Rn); the word
        `memory(address)` says it holds, or None."""
        base = self.regs.get(rn)
        if self.loads is not None:
            self.loads[pc] = (base, offset)
        if self.memory is None or base is None:
            return None
        return self.memory(pc, (base + offset) & MASK)

    def store(self, pc: int, rt: int, rn: int, offset: int) -> None:
        """Note a word store of Rt to [Rn, #offset]: address -> the value, None when two
        stores disagree or the value is not known."""
        base = self.regs.get(rn)
        if self.stores is None or base is None:
            return
        address, value = (base + offset) & MASK, self.regs.get(rt)
        self.stores[address] = value if self.stores.get(address, value) == value else None

    def get(self, r: int) -> int | None:
        return self.regs.get(r)

    def set(self, r: int, value: int | None) -> None:
        # sp is never a constant the code shows: every push, pop and stack adjustment moves it
        if value is None or r == SP or (self.conditional and self.regs.get(r) != value & MASK):
            self.regs.pop(r, None)
        else:
            self.regs[r] = value & MASK

    def clobber(self, *rs: int) -> None:
        for r in rs:
            self.regs.pop(r, None)

    def clobber_list(self, mask: int) -> None:
        self.clobber(*(r for r in ALL if mask >> r & 1))


def arith(a: int | None, b: int | None, sub: bool) -> int | None:
    if a is None or b is None:
        return None
    return (a - b if sub else a + b) & MASK


def shift(value: int | None, kind: int, amount: int) -> int | None:
    """LSL/LSR/ASR by an immediate (kind 0/1/2; amount 0 means 32 for LSR and ASR)."""
    if value is None:
        return None
    if kind == 0:
        return (value << amount) & MASK
    amount = amount or 32
    if kind == 1:
        return value >> amount if amount < 32 else 0
    return (signed(value, 32) >> min(amount, 31)) & MASK

"""A decoded Thumb instruction, and the immediates and branch offsets of the Armv7-M / Armv8-M
encodings (Arm v7-M Architecture Reference Manual, DDI0403, A5 "The Thumb instruction set
encoding" and A7; Armv8-M Architecture Reference Manual, DDI0553, C2)."""
from __future__ import annotations

from typing import NamedTuple

SP, LR, PC = 13, 14, 15
ALL = tuple(range(16))            # an encoding not decoded may write any register
MASK = 0xFFFFFFFF

# Where control goes after an instruction: NEXT falls through; JUMP goes to `target` only;
# BRANCH to `target` or the next instruction; CALL to `target` (None: a register) and back;
# RETURN and OPAQUE leave the function (OPAQUE: to a place the code does not say, a register
# or a table); STOP never continues (UDF).
NEXT, JUMP, BRANCH, CALL, RETURN, OPAQUE, STOP = ("next", "jump", "branch", "call", "return",
                                                  "opaque", "stop")
# The hints by number, in the 16-bit IT space with mask 0000 and the 32-bit hint space (A7.7.38)
HINTS = {0: "nop", 1: "yield", 2: "wfe", 3: "wfi", 4: "sev"}


class Access(NamedTuple):
    """The memory a load or store of core registers transfers (A7.7, the LDR/STR/LDM/STM
    pseudocode): the address is the base, plus or minus the offset when `pre`; a literal load
    (`base` is PC) reads from the instruction's `address` instead (Align(PC, 4) ± offset)."""
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
    multiple: bool = False    # LDM/STM, PUSH/POP: a block of words, the base moves 4 per register
    decrement: bool = False   # LDMDB/STMDB, PUSH: the block ends below the base

    def _moved(self, regs) -> int:
        if self.multiple:
            step = 4 * len(self.registers)
            return (regs[self.base] + (-step if self.decrement else step)) & MASK
        offset = self.offset if self.index is None else (regs[self.index] << self.shift) & MASK
        return (regs[self.base] + (offset if self.add else -offset)) & MASK

    def address(self, regs) -> int:
        """The address of the first transfer, given the register values; the others follow it
        word by word."""
        if self.multiple:
            return self._moved(regs) if self.decrement else regs[self.base]
        return self._moved(regs) if self.pre else regs[self.base]

    def new_base(self, regs) -> int | None:
        """The base register after writeback, or None."""
        return self._moved(regs) if self.writeback else None


class Insn(NamedTuple):
    """One instruction. `op` is its class: "mov" (Rd = imm, or Rm), "movw", "mvn", "movt",
    "add"/"sub" (Rd = Rn ± imm, or ± Rm in the 16-bit register forms), "adr" (Rd = `address`),
    "lsl"/"lsr"/"asr"/"ror" (Rd = Rm shifted by imm), "data" (any other data processing: Rd
    and no more said), "compare", "load"/"store" (`access`), "ldrex"/"strex"/"tt", "fp"
    (floating point), "b", "cbz", "bl", "blx", "bx", "tbb", "loop" (Armv8.1-M low-overhead
    loops), "it", the hints "nop"/"yield"/"wfe"/"wfi"/"sev"/"hint"/"pld", "barrier", "msr",
    "mrs", "cps", "svc", "bkpt", "udf", "sg", "clrm", "unknown" (not decoded: `writes` is ALL).
    `writes`: the core registers it may write besides PC (a branch's is `flow`)."""
    pc: int
    size: int                 # 2 or 4
    hw1: int
    hw2: int                  # 0 for a 16-bit instruction
    op: str
    rd: int | None = None     # Rd, or Rt of a load/store
    rn: int | None = None
    rm: int | None = None
    imm: int | None = None    # the immediate, expanded (ThumbExpandImm, imm16, shift amount)
    writes: tuple[int, ...] = ()
    flow: str = NEXT
    target: int | None = None     # a branch's destination
    address: int | None = None    # PC-relative: a literal load's word, ADR's result
    it: int = 0               # IT: how many following instructions are conditional
    access: Access | None = None


def is_wide(hw1: int) -> bool:
    """A 32-bit encoding starts with 0b11101, 0b11110 or 0b11111 (A5.1)."""
    return hw1 >> 11 in (0b11101, 0b11110, 0b11111)


def signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def literal_base(pc: int) -> int:
    """Align(PC, 4), where PC reads as the instruction's address + 4."""
    return (pc + 4) & ~3


def reglist(mask: int) -> tuple[int, ...]:
    return tuple(r for r in ALL if mask >> r & 1)


def thumb_expand_imm(imm12: int) -> int:
    """ThumbExpandImm (A5.3.2)."""
    if imm12 >> 10 == 0:
        byte, kind = imm12 & 0xFF, (imm12 >> 8) & 3
        return [byte, byte << 16 | byte, byte << 24 | byte << 8,
                byte << 24 | byte << 16 | byte << 8 | byte][kind]
    unrotated, rot = 0x80 | (imm12 & 0x7F), imm12 >> 7
    return ((unrotated >> rot) | (unrotated << (32 - rot))) & MASK


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

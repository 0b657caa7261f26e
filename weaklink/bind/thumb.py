"""Thumb (Armv7-M / Armv8-M) instructions, as far as a constant-tracking reader needs them:
which core registers an instruction may write, the constants it loads, and where control goes.

`step(regs, insn, word, conditional)` updates `regs` (register number -> known 32-bit value)
for one instruction and returns its `Flow`. The rule is never to guess: an instruction writes
a register either with a value computed from known constants (MOVS/MOV.W/MOVW/MOVT, LDR from
the literal pool, ADR, MOV between registers, add/subtract/shift of known values) or the
register becomes unknown. Stores write no register except their base with writeback; loads
write their destination(s); whatever cannot be decoded makes every register unknown.

Encodings: Arm v7-M Architecture Reference Manual, chapter A5 ("The Thumb instruction set
encoding") and A7 (the instructions); Armv8.1-M adds the low-overhead-loop branches, which are
in the space A5.3.4 left to BLX (immediate), undefined on M-profile cores.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

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
    return _branch24(pc, hw1, hw2)


def _branch24(pc: int, hw1: int, hw2: int) -> int:
    """BL and B.W (T4): S:I1:I2:imm10:imm11:'0', with I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S)."""
    s = (hw1 >> 10) & 1
    i1, i2 = 1 - (((hw2 >> 13) & 1) ^ s), 1 - (((hw2 >> 11) & 1) ^ s)
    off = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1
    return (pc + 4 + off - (s << 25)) & MASK


def _branch20(pc: int, hw1: int, hw2: int) -> int:
    """B<c>.W (T3): S:J2:J1:imm6:imm11:'0'."""
    s = (hw1 >> 10) & 1
    off = (s << 20 | ((hw2 >> 11) & 1) << 19 | ((hw2 >> 13) & 1) << 18
           | (hw1 & 0x3F) << 12 | (hw2 & 0x7FF) << 1)
    return (pc + 4 + off - (s << 21)) & MASK


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _literal_base(pc: int) -> int:
    """Align(PC, 4), where PC reads as the instruction's address + 4."""
    return (pc + 4) & ~3


class _State:
    """A register file of known constants; `conditional` (inside an IT block) keeps a written
    register only when the new value equals the old, since the write may not happen."""

    def __init__(self, regs: dict, conditional: bool):
        self.regs, self.conditional = regs, conditional

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


def _arith(a: int | None, b: int | None, sub: bool) -> int | None:
    if a is None or b is None:
        return None
    return (a - b if sub else a + b) & MASK


def _shift(value: int | None, kind: int, amount: int) -> int | None:
    """LSL/LSR/ASR by an immediate (kind 0/1/2; amount 0 means 32 for LSR and ASR)."""
    if value is None:
        return None
    if kind == 0:
        return (value << amount) & MASK
    amount = amount or 32
    if kind == 1:
        return value >> amount if amount < 32 else 0
    return (_signed(value, 32) >> min(amount, 31)) & MASK


def step(regs: dict, insn: Insn, word: Callable[[int], int | None],
         conditional: bool = False) -> Flow:
    """Apply one instruction to `regs`; `word(address)` reads a literal (None: unknown)."""
    st = _State(regs, conditional)
    if insn.size == 4:
        return _wide(st, insn, word)
    return _narrow(st, insn, word)


# -- 16-bit encodings (A5.2) --------------------------------------------------------------------
def _narrow(st: _State, insn: Insn, word) -> Flow:
    h, pc = insn.hw1, insn.pc
    top5, top4 = h >> 11, h >> 12
    if h >> 13 == 0b000:                                   # shift (imm), add, subtract
        rd, rn = h & 7, (h >> 3) & 7
        if top5 == 0b00011:                                # ADDS/SUBS Rd, Rn, Rm / #imm3
            other = (h >> 6) & 7 if h >> 10 & 1 else st.get((h >> 6) & 7)
            st.set(rd, _arith(st.get(rn), other, bool(h >> 9 & 1)))
        else:                                              # LSLS/LSRS/ASRS Rd, Rm, #imm5
            st.set(rd, _shift(st.get(rn), top5 & 3, (h >> 6) & 0x1F))
    elif top5 == 0b00100:                                  # MOVS Rd, #imm8
        st.set((h >> 8) & 7, h & 0xFF)
    elif top5 == 0b00101:                                  # CMP Rn, #imm8
        pass
    elif top5 in (0b00110, 0b00111):                       # ADDS/SUBS Rdn, #imm8
        rdn = (h >> 8) & 7
        st.set(rdn, _arith(st.get(rdn), h & 0xFF, top5 == 0b00111))
    elif h >> 10 == 0b010000:                              # data processing (register)
        if (h >> 6) & 0xF not in (0b1000, 0b1010, 0b1011):  # TST, CMP, CMN write no register
            st.clobber(h & 7)
    elif h >> 10 == 0b010001:                              # special data, branch and exchange
        return _special(st, insn)
    elif top5 == 0b01001:                                  # LDR Rt, [PC, #imm8*4]
        st.set((h >> 8) & 7, word(_literal_base(pc) + (h & 0xFF) * 4))
    elif top4 == 0b0101:                                   # load/store (register offset)
        if (h >> 9) & 7 >= 3:                              # LDRSB, LDR, LDRH, LDRB, LDRSH
            st.clobber(h & 7)
    elif h >> 13 == 0b011 or top4 == 0b1000:               # STR/LDR(B) and STRH/LDRH (imm)
        if h >> 11 & 1:
            st.clobber(h & 7)
    elif top4 == 0b1001:                                   # STR/LDR Rt, [SP, #imm8*4]
        if h >> 11 & 1:
            st.clobber((h >> 8) & 7)
    elif top5 == 0b10100:                                  # ADR Rd, label
        st.set((h >> 8) & 7, _literal_base(pc) + (h & 0xFF) * 4)
    elif top5 == 0b10101:                                  # ADD Rd, SP, #imm8*4
        st.clobber((h >> 8) & 7)
    elif top4 == 0b1011:
        return _misc(st, insn)
    elif top4 == 0b1100:                                   # STMIA / LDMIA Rn!, {list}
        rn, mask = (h >> 8) & 7, h & 0xFF
        if h >> 11 & 1:                                    # LDM: the list; Rn too unless listed
            st.clobber_list(mask | (0 if mask >> rn & 1 else 1 << rn))
        else:                                              # STM always writes back
            st.clobber(rn)
    elif top4 == 0b1101:
        cond = (h >> 8) & 0xF
        if cond == 0xE:                                    # UDF
            return Flow(STOP)
        if cond == 0xF:                                    # SVC: the handler may return in r0-r3
            st.clobber(0, 1, 2, 3, 12)
            return Flow()
        return Flow(BRANCH, (pc + 4 + _signed(h & 0xFF, 8) * 2) & MASK)
    elif top5 == 0b11100:                                  # B (T2)
        return Flow(JUMP, (pc + 4 + _signed(h & 0x7FF, 11) * 2) & MASK)
    else:
        st.clobber(*ALL)
    return Flow()


def _special(st: _State, insn: Insn) -> Flow:
    h = insn.hw1
    op = (h >> 8) & 3
    rdn, rm = (h & 7) | (h >> 4) & 8, (h >> 3) & 0xF
    if op == 3:                                            # BX / BLX Rm
        if h >> 7 & 1:                                     # BLX: an indirect call
            st.clobber(*CALL_CLOBBERS)
            return Flow()
        return Flow(RETURN) if rm == LR else Flow(OPAQUE)
    if op == 1:                                            # CMP Rn, Rm
        return Flow()
    value = insn.pc + 4 if rm == PC else st.get(rm)
    if rdn == PC:                                          # ADD/MOV PC, Rm: a computed jump
        return Flow(RETURN) if op == 2 and rm == LR else Flow(OPAQUE)
    st.set(rdn, value if op == 2 else _arith(st.get(rdn), value, False))
    return Flow()


def _misc(st: _State, insn: Insn) -> Flow:
    """Miscellaneous 16-bit instructions (A5.2.5)."""
    h, pc = insn.hw1, insn.pc
    sub = (h >> 8) & 0xF
    if sub in (0x1, 0x3, 0x9, 0xB):                        # CBZ / CBNZ
        return Flow(BRANCH, pc + 4 + (((h >> 9) & 1) << 6 | ((h >> 3) & 0x1F) << 1))
    if sub == 0x0 or sub in (0x4, 0x5, 0x6, 0xE):          # ADD/SUB SP, PUSH, CPS, BKPT
        return Flow()
    if sub in (0x2, 0xA):                                  # SXTH..UXTB, REV..REVSH
        st.clobber(h & 7)
        return Flow()
    if sub in (0xC, 0xD):                                  # POP {list[, pc]}
        st.clobber_list(h & 0xFF)
        return Flow(RETURN) if h >> 8 & 1 else Flow()
    if sub == 0xF:                                         # IT (mask != 0) or a hint
        mask = h & 0xF
        if mask:
            return Flow(it=4 - (mask & -mask).bit_length() + 1)
        return Flow()
    st.clobber(*ALL)
    return Flow()


# -- 32-bit encodings (A5.3) --------------------------------------------------------------------
def _wide(st: _State, insn: Insn, word) -> Flow:
    h1, h2 = insn.hw1, insn.hw2
    op1, op2 = (h1 >> 11) & 3, (h1 >> 4) & 0x7F
    if op1 == 1:
        if op2 & 0b1100100 == 0:                           # load/store multiple
            return _multiple(st, h1, h2)
        if op2 & 0b1100100 == 0b0000100:                   # dual, exclusive, table branch
            return _dual(st, insn, word)
        if op2 & 0b1100000 == 0b0100000:                   # data processing (shifted register)
            _shifted_register(st, h1, h2)
            return Flow()
        return _coprocessor(st, h1, h2)
    if op1 == 2:
        if h2 >> 15:
            return _branch_misc(st, insn)
        if op2 & 0b0100000 == 0:                           # data processing (modified immediate)
            _modified_immediate(st, h1, h2)
        else:                                              # plain binary immediate
            _plain_immediate(st, insn)
        return Flow()
    if op2 & 0b1110001 == 0:                               # store single data item
        _store_single(st, h1, h2)
        return Flow()
    if op2 & 0b1100111 in (0b0000001, 0b0000011, 0b0000101):   # LDRB, LDRH, LDR (and hints)
        return _load_single(st, insn, word)
    if op2 & 0b1110000 == 0b0100000 or op2 & 0b1111000 == 0b0110000:
        st.clobber((h2 >> 8) & 0xF)                        # data processing (register), multiply
        return Flow()
    if op2 & 0b1111000 == 0b0111000:                       # long multiply (RdLo, RdHi), divide
        st.clobber((h2 >> 12) & 0xF, (h2 >> 8) & 0xF)
        return Flow()
    if op2 & 0b1000000:
        return _coprocessor(st, h1, h2)
    st.clobber(*ALL)
    return Flow()


def _multiple(st: _State, h1: int, h2: int) -> Flow:
    """STM/STMDB/PUSH.W write only Rn (with writeback); LDM/LDMDB/POP.W the list too."""
    rn, writeback, load = h1 & 0xF, h1 >> 5 & 1, h1 >> 4 & 1
    if h1 == 0xE89F:                                       # CLRM {list}: zeroes the list
        st.clobber_list(h2 & 0x7FFF)
        return Flow()
    if writeback:
        st.clobber(rn)
    if load:
        st.clobber_list(h2 & 0x7FFF)
        if h2 >> 15 & 1:                                   # PC in the list: a return
            return Flow(RETURN) if rn == SP else Flow(OPAQUE)
    return Flow()


def _dual(st: _State, insn: Insn, word) -> Flow:
    """A5.3.6: STRD writes only Rn with writeback; LDRD writes Rt, Rt2 (and Rn); exclusives
    write their status or destination; TBB/TBH jump through a table."""
    h1, h2 = insn.hw1, insn.hw2
    o1, o2, o3 = (h1 >> 7) & 3, (h1 >> 4) & 3, (h2 >> 4) & 0xF
    rn, rt, rt2 = h1 & 0xF, (h2 >> 12) & 0xF, (h2 >> 8) & 0xF
    if h1 == 0xE97F and h2 == 0xE97F:                      # SG (Armv8-M Security Extension)
        return Flow()
    if o1 == 0 and o2 == 0:                                # STREX Rd, Rt, [Rn]; TT/TTT/TTA/TTAT
        st.clobber(rt2)
    elif o1 == 0 and o2 == 1:                              # LDREX Rt, [Rn]
        st.clobber(rt)
    elif (o1 < 2 and o2 == 2) or (o1 >= 2 and o2 in (0, 2)):   # STRD (immediate)
        if h1 >> 5 & 1:
            st.clobber(rn)
    elif (o1 < 2 and o2 == 3) or (o1 >= 2 and o2 in (1, 3)):   # LDRD (immediate, literal)
        if rn == PC and not h1 >> 5 & 1:
            imm = (h2 & 0xFF) * 4
            address = _literal_base(insn.pc) + (imm if h1 >> 7 & 1 else -imm)
            st.set(rt, word(address))
            st.set(rt2, word(address + 4))
        else:
            st.clobber(rt, rt2, *((rn,) if h1 >> 5 & 1 else ()))
    elif o1 == 1 and o2 == 0:                              # STREXB/H/D: status in Rd
        st.clobber(h2 & 0xF)
    elif o1 == 1 and o2 == 1:
        if o3 in (0, 1):                                   # TBB / TBH
            return Flow(OPAQUE)
        st.clobber(rt, rt2)                                # LDREXB/H/D
    else:
        st.clobber(*ALL)
    return Flow()


def _shifted_register(st: _State, h1: int, h2: int) -> None:
    rd, opc, s, rn, rm = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF, h2 & 0xF
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return
    shift = ((h2 >> 12) & 7) << 2 | (h2 >> 6) & 3
    if opc == 0b0010 and rn == PC:                         # MOV.W / LSL/LSR/ASR Rd, Rm, #imm
        kind = (h2 >> 4) & 3
        st.set(rd, _shift(st.get(rm), kind, shift) if kind < 3 else None)
    else:
        st.clobber(rd)


def _modified_immediate(st: _State, h1: int, h2: int) -> None:
    rd, opc, s, rn = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF
    imm = thumb_expand_imm(((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF)
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return
    if opc == 0b0010 and rn == PC:                         # MOV.W Rd, #imm
        st.set(rd, imm)
    elif opc == 0b0011 and rn == PC:                       # MVN Rd, #imm
        st.set(rd, ~imm)
    elif opc in (0b1000, 0b1101):                          # ADD.W / SUB.W Rd, Rn, #imm
        st.set(rd, _arith(st.get(rn), imm, opc == 0b1101))
    else:
        st.clobber(rd)


def _plain_immediate(st: _State, insn: Insn) -> None:
    h1, h2 = insn.hw1, insn.hw2
    op, rn, rd = (h1 >> 4) & 0x1F, h1 & 0xF, (h2 >> 8) & 0xF
    imm12 = ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF
    imm16 = (h1 & 0xF) << 12 | imm12
    if op in (0b00000, 0b01010):                           # ADDW / SUBW (ADR with Rn = PC)
        base = _literal_base(insn.pc) if rn == PC else st.get(rn)
        st.set(rd, _arith(base, imm12, op == 0b01010))
    elif op == 0b00100:                                    # MOVW Rd, #imm16
        st.set(rd, imm16)
    elif op == 0b01100:                                    # MOVT Rd, #imm16: keeps the low half
        low = st.get(rd)
        st.set(rd, None if low is None else (low & 0xFFFF) | imm16 << 16)
    else:                                                  # SSAT, USAT, SBFX, UBFX, BFI, BFC
        st.clobber(rd)


def _branch_misc(st: _State, insn: Insn) -> Flow:
    """A5.3.4: branches and miscellaneous control; the BL itself is the caller's business."""
    h1, h2 = insn.hw1, insn.hw2
    kind = (h2 >> 12) & 0b101
    if kind == 0b101:                                      # BL
        st.clobber(*CALL_CLOBBERS)
        return Flow(CALL, _branch24(insn.pc, h1, h2))
    if kind == 0b001:                                      # B.W (T4)
        return Flow(JUMP, _branch24(insn.pc, h1, h2))
    if kind == 0b100:                                      # Armv8.1-M low-overhead loops
        return _loop(st, insn)
    if (h1 >> 7) & 7 != 0b111:                             # B<c>.W (T3)
        return Flow(BRANCH, _branch20(insn.pc, h1, h2))
    op = (h1 >> 4) & 0x7F
    if op & 0b1111110 == 0b0111110:                        # MRS Rd, spec_reg
        st.clobber((h2 >> 8) & 0xF)
    elif op & 0b1111110 == 0b0111000 or op in (0b0111010, 0b0111011):
        pass                                               # MSR, hints, barriers
    elif op == 0b1111111 and (h2 >> 12) & 7 == 0b010:     # UDF.W
        return Flow(STOP)
    else:
        st.clobber(*ALL)
    return Flow()


def _loop(st: _State, insn: Insn) -> Flow:
    """Armv8.1-M low-overhead loops (in the space v7-M gives to BLX (immediate)): DLS/DLSTP
    and WLS/WLSTP set lr, LE/LETP decrement it and branch back, LCTP writes no register. The
    offset is imm10:imm1:'0' from the second halfword's bits 10:1 and 11. The branch-future
    instructions (BF, BFX, BFL, BFLX, BFCSEL) change where a later instruction goes."""
    h1, h2 = insn.hw1, insn.hw2
    word32 = h1 << 16 | h2
    offset = ((h2 >> 1) & 0x3FF) << 2 | ((h2 >> 11) & 1) << 1
    if word32 == 0xF00FE001:                               # LCTP
        return Flow()
    if word32 & 0xFFFFF001 in (0xF02FC001, 0xF00FC001, 0xF01FC001):   # LE, LE lr, LETP
        st.clobber(LR)
        return Flow(BRANCH, (insn.pc + 4 - offset) & MASK)
    if word32 & 0xFFF0F001 == 0xF040C001 or word32 & 0xFFC0F001 == 0xF000C001:  # WLS, WLSTP
        st.clobber(LR)
        return Flow(BRANCH, (insn.pc + 4 + offset) & MASK)
    if word32 & 0xFFF0FFFF == 0xF040E001 or word32 & 0xFFC0FFFF == 0xF000E001:  # DLS, DLSTP
        st.clobber(LR)
        return Flow()
    st.clobber(LR)
    return Flow(OPAQUE)


def _store_single(st: _State, h1: int, h2: int) -> None:
    """STR/STRB/STRH: with an imm8 offset (T4: bit 11 of the second halfword), W writes back."""
    if not h1 >> 7 & 1 and h2 >> 11 & 1 and h2 >> 8 & 1:
        st.clobber(h1 & 0xF)


def _load_single(st: _State, insn: Insn, word) -> Flow:
    h1, h2 = insn.hw1, insn.hw2
    rn, rt, size = h1 & 0xF, (h2 >> 12) & 0xF, (h1 >> 5) & 3
    if rt == PC and size != 2:                             # PLD / PLI: hints
        return Flow()
    writeback = not h1 >> 7 & 1 and h2 >> 11 & 1 and h2 >> 8 & 1 and rn != PC
    if rt == PC:                                           # LDR PC: POP.W {pc} or a jump
        return Flow(RETURN) if rn == SP and writeback else Flow(OPAQUE)
    if rn == PC and size == 2 and not h1 >> 8 & 1:         # LDR.W Rt, [PC, #±imm12]
        imm = h2 & 0xFFF
        st.set(rt, word(_literal_base(insn.pc) + (imm if h1 >> 7 & 1 else -imm)))
    else:
        st.clobber(rt, *((rn,) if writeback else ()))
    return Flow()


def _coprocessor(st: _State, h1: int, h2: int) -> Flow:
    """Floating point (coprocessors 10 and 11) is decoded; anything else here (MVE, the
    custom datapath extension) may write any core register."""
    op1, coproc, rn, rt = (h1 >> 4) & 0x3F, (h2 >> 8) & 0xF, h1 & 0xF, (h2 >> 12) & 0xF
    if op1 & 0b100000 == 0 and op1 & 0b111010 != 0:        # LDC/STC space: VLDR/VSTR/VLDM/VSTM
        if coproc in (10, 11):
            if op1 & 0b000010:                             # W: writeback to Rn
                st.clobber(rn)
            return Flow()
    elif op1 == 0b000101 and coproc in (10, 11):           # VMOV Rt, Rt2, <FP registers>
        st.clobber(rt, rn)
        return Flow()
    elif op1 == 0b000100 and coproc in (10, 11):           # VMOV <FP registers>, Rt, Rt2
        return Flow()
    elif op1 & 0b110000 == 0b100000 and coproc in (10, 11):
        if h2 >> 4 & 1 and op1 & 1:                        # VMOV Rt, Sn / scalar; VMRS
            if rt != PC:
                st.clobber(rt)
        return Flow()                                      # FP data processing, VMOV to FP, VMSR
    st.clobber(*ALL)
    return Flow()

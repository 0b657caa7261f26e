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

from typing import Callable

from weaklink.bind.thumb32 import wide
from weaklink.bind.thumbisa import (ALL, BRANCH, CALL, CALL_CLOBBERS, JUMP, LR, MASK, NEXT, OPAQUE,
                                    PC, RETURN, STOP, Flow, Insn, State, arith, bl_target, decode,
                                    is_wide, literal_base, shift, signed)

__all__ = ["Insn", "Flow", "decode", "is_wide", "bl_target", "step", "NEXT", "JUMP", "BRANCH",
           "CALL", "RETURN", "OPAQUE", "STOP"]


def step(regs: dict, insn: Insn, word: Callable[[int], int | None],
         conditional: bool = False, loads: dict | None = None, memory=None,
         stores: dict | None = None) -> Flow:
    """Apply one instruction to `regs`; `word(address)` reads a literal (None: unknown).
    `loads` (optional) gets, per LDR (immediate) of a word, pc -> (base register's value or
    None, offset): where the code reads memory. `memory(pc, address)` (optional) gives the word
    a load from a known address reads (a constant of the image), or None; `stores` gets, per
    STR of a word to a known address, address -> the value stored (None: not known)."""
    st = State(regs, conditional, loads, memory, stores)
    if insn.size == 4:
        return wide(st, insn, word)
    return _narrow(st, insn, word)


# -- 16-bit encodings (A5.2) --------------------------------------------------------------------
def _narrow(st: State, insn: Insn, word) -> Flow:
    h, pc = insn.hw1, insn.pc
    top5, top4 = h >> 11, h >> 12
    if h >> 13 == 0b000:                                   # shift (imm), add, subtract
        rd, rn = h & 7, (h >> 3) & 7
        if top5 == 0b00011:                                # ADDS/SUBS Rd, Rn, Rm / #imm3
            other = (h >> 6) & 7 if h >> 10 & 1 else st.get((h >> 6) & 7)
            st.set(rd, arith(st.get(rn), other, bool(h >> 9 & 1)))
        else:                                              # LSLS/LSRS/ASRS Rd, Rm, #imm5
            st.set(rd, shift(st.get(rn), top5 & 3, (h >> 6) & 0x1F))
    elif top5 == 0b00100:                                  # MOVS Rd, #imm8
        st.set((h >> 8) & 7, h & 0xFF)
    elif top5 == 0b00101:                                  # CMP Rn, #imm8
        pass
    elif top5 in (0b00110, 0b00111):                       # ADDS/SUBS Rdn, #imm8
        rdn = (h >> 8) & 7
        st.set(rdn, arith(st.get(rdn), h & 0xFF, top5 == 0b00111))
    elif h >> 10 == 0b010000:                              # data processing (register)
        if (h >> 6) & 0xF not in (0b1000, 0b1010, 0b1011):  # TST, CMP, CMN write no register
            st.clobber(h & 7)
    elif h >> 10 == 0b010001:                              # special data, branch and exchange
        return _special(st, insn)
    elif top5 == 0b01001:                                  # LDR Rt, [PC, #imm8*4]
        st.set((h >> 8) & 7, word(literal_base(pc) + (h & 0xFF) * 4))
    elif top4 == 0b0101:                                   # load/store (register offset)
        if (h >> 9) & 7 >= 3:                              # LDRSB, LDR, LDRH, LDRB, LDRSH
            st.clobber(h & 7)
    elif h >> 13 == 0b011 or top4 == 0b1000:               # STR/LDR(B) and STRH/LDRH (imm)
        if top5 == 0b01101:                                # LDR Rt, [Rn, #imm5*4]
            st.set(h & 7, st.load(pc, (h >> 3) & 7, ((h >> 6) & 0x1F) * 4))
        elif top5 == 0b01100:                              # STR Rt, [Rn, #imm5*4]
            st.store(pc, h & 7, (h >> 3) & 7, ((h >> 6) & 0x1F) * 4)
        elif h >> 11 & 1:
            st.clobber(h & 7)
    elif top4 == 0b1001:                                   # STR/LDR Rt, [SP, #imm8*4]
        if h >> 11 & 1:
            st.clobber((h >> 8) & 7)
    elif top5 == 0b10100:                                  # ADR Rd, label
        st.set((h >> 8) & 7, literal_base(pc) + (h & 0xFF) * 4)
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
        return Flow(BRANCH, (pc + 4 + signed(h & 0xFF, 8) * 2) & MASK)
    elif top5 == 0b11100:                                  # B (T2)
        return Flow(JUMP, (pc + 4 + signed(h & 0x7FF, 11) * 2) & MASK)
    else:
        st.clobber(*ALL)
    return Flow()


def _special(st: State, insn: Insn) -> Flow:
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
    st.set(rdn, value if op == 2 else arith(st.get(rdn), value, False))
    return Flow()


def _misc(st: State, insn: Insn) -> Flow:
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

"""32-bit Thumb encodings (Arm v7-M Architecture Reference Manual, A5.3; Armv8.1-M's
low-overhead loops): the registers each one may write, and the constants it makes known.
Stores write no register but their base with writeback; loads their destination(s); what is
not decoded here may write any register."""
from __future__ import annotations

from weaklink.bind.thumbisa import (ALL, CALL_CLOBBERS, MASK, PC, SP, LR, BRANCH, CALL, JUMP,
                                    OPAQUE, RETURN, STOP, Flow, Insn, State, arith, branch20,
                                    branch24, literal_base, shift, thumb_expand_imm)


def wide(st: State, insn: Insn, word) -> Flow:
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
        _store_single(st, insn)
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


def _multiple(st: State, h1: int, h2: int) -> Flow:
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


def _dual(st: State, insn: Insn, word) -> Flow:
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
            address = literal_base(insn.pc) + (imm if h1 >> 7 & 1 else -imm)
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


def _shifted_register(st: State, h1: int, h2: int) -> None:
    rd, opc, s, rn, rm = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF, h2 & 0xF
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return
    amount = ((h2 >> 12) & 7) << 2 | (h2 >> 6) & 3
    if opc == 0b0010 and rn == PC:                         # MOV.W / LSL/LSR/ASR Rd, Rm, #imm
        kind = (h2 >> 4) & 3
        st.set(rd, shift(st.get(rm), kind, amount) if kind < 3 else None)
    else:
        st.clobber(rd)


def _modified_immediate(st: State, h1: int, h2: int) -> None:
    rd, opc, s, rn = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF
    imm = thumb_expand_imm(((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF)
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return
    if opc == 0b0010 and rn == PC:                         # MOV.W Rd, #imm
        st.set(rd, imm)
    elif opc == 0b0011 and rn == PC:                       # MVN Rd, #imm
        st.set(rd, ~imm)
    elif opc in (0b1000, 0b1101):                          # ADD.W / SUB.W Rd, Rn, #imm
        st.set(rd, arith(st.get(rn), imm, opc == 0b1101))
    else:
        st.clobber(rd)


def _plain_immediate(st: State, insn: Insn) -> None:
    h1, h2 = insn.hw1, insn.hw2
    op, rn, rd = (h1 >> 4) & 0x1F, h1 & 0xF, (h2 >> 8) & 0xF
    imm12 = ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF
    imm16 = (h1 & 0xF) << 12 | imm12
    if op in (0b00000, 0b01010):                           # ADDW / SUBW (ADR with Rn = PC)
        base = literal_base(insn.pc) if rn == PC else st.get(rn)
        st.set(rd, arith(base, imm12, op == 0b01010))
    elif op == 0b00100:                                    # MOVW Rd, #imm16
        st.set(rd, imm16)
    elif op == 0b01100:                                    # MOVT Rd, #imm16: keeps the low half
        low = st.get(rd)
        st.set(rd, None if low is None else (low & 0xFFFF) | imm16 << 16)
    else:                                                  # SSAT, USAT, SBFX, UBFX, BFI, BFC
        st.clobber(rd)


def _branch_misc(st: State, insn: Insn) -> Flow:
    """A5.3.4: branches and miscellaneous control; the BL itself is the caller's business."""
    h1, h2 = insn.hw1, insn.hw2
    kind = (h2 >> 12) & 0b101
    if kind == 0b101:                                      # BL
        st.clobber(*CALL_CLOBBERS)
        return Flow(CALL, branch24(insn.pc, h1, h2))
    if kind == 0b001:                                      # B.W (T4)
        return Flow(JUMP, branch24(insn.pc, h1, h2))
    if kind == 0b100:                                      # Armv8.1-M low-overhead loops
        return _loop(st, insn)
    if (h1 >> 7) & 7 != 0b111:                             # B<c>.W (T3)
        return Flow(BRANCH, branch20(insn.pc, h1, h2))
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


def _loop(st: State, insn: Insn) -> Flow:
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


def _store_single(st: State, insn: Insn) -> None:
    """STR/STRB/STRH: with an imm8 offset (T4: bit 11 of the second halfword), W writes back."""
    h1, h2 = insn.hw1, insn.hw2
    if h1 & 0xFFF0 == 0xF8C0:                              # STR.W Rt, [Rn, #imm12]
        st.store(insn.pc, (h2 >> 12) & 0xF, h1 & 0xF, h2 & 0xFFF)
    if not h1 >> 7 & 1 and h2 >> 11 & 1 and h2 >> 8 & 1:
        st.clobber(h1 & 0xF)


def _load_single(st: State, insn: Insn, word) -> Flow:
    h1, h2 = insn.hw1, insn.hw2
    rn, rt, size = h1 & 0xF, (h2 >> 12) & 0xF, (h1 >> 5) & 3
    if rt == PC and size != 2:                             # PLD / PLI: hints
        return Flow()
    writeback = not h1 >> 7 & 1 and h2 >> 11 & 1 and h2 >> 8 & 1 and rn != PC
    if rt == PC:                                           # LDR PC: POP.W {pc} or a jump
        return Flow(RETURN) if rn == SP and writeback else Flow(OPAQUE)
    if rn == PC and size == 2 and not h1 >> 8 & 1:         # LDR.W Rt, [PC, #±imm12]
        imm = h2 & 0xFFF
        st.set(rt, word(literal_base(insn.pc) + (imm if h1 >> 7 & 1 else -imm)))
    else:
        value = None
        if size == 2 and h1 >> 7 & 1 and rn != PC:        # LDR.W Rt, [Rn, #imm12]
            value = st.load(insn.pc, rn, h2 & 0xFFF)
        st.clobber(rt, *((rn,) if writeback else ()))
        st.set(rt, value)
    return Flow()


def _coprocessor(st: State, h1: int, h2: int) -> Flow:
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

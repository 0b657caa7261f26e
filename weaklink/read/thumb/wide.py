"""32-bit Thumb encodings (Arm v7-M ARM, A5.3; Armv8.1-M's low-overhead loops): data
processing, branches and miscellaneous control, multiplies, floating point; the loads and
stores are in weaklink.read.thumb.widemem."""
from __future__ import annotations

from weaklink.read.thumb.insn import (ALL, BRANCH, CALL, HINTS, JUMP, LR, MASK, OPAQUE, PC, STOP,
                                      Insn, branch20, branch24, literal_base, thumb_expand_imm)
from weaklink.read.thumb.widemem import dual, multiple, single

_SHIFTS = ("lsl", "lsr", "asr", "ror")


def wide(h1: int, h2: int, pc: int) -> Insn:
    op1, op2 = (h1 >> 11) & 3, (h1 >> 4) & 0x7F
    if op1 == 1:
        if op2 & 0b1100100 == 0:                           # load/store multiple
            return multiple(h1, h2, pc)
        if op2 & 0b1100100 == 0b0000100:                   # dual, exclusive, table branch
            return dual(h1, h2, pc)
        if op2 & 0b1100000 == 0b0100000:                   # data processing (shifted register)
            return _shifted_register(h1, h2, pc)
        return _coprocessor(h1, h2, pc)
    if op1 == 2:
        if h2 >> 15:
            return _branch_misc(h1, h2, pc)
        if op2 & 0b0100000 == 0:                           # data processing (modified immediate)
            return _modified_immediate(h1, h2, pc)
        return _plain_immediate(h1, h2, pc)
    if op2 & 0b1110001 == 0:                               # store single data item
        return single(h1, h2, pc, load=False)
    if op2 & 0b1100111 in (0b0000001, 0b0000011, 0b0000101):   # LDRB, LDRH, LDR (and hints)
        return single(h1, h2, pc, load=True)
    rd = (h2 >> 8) & 0xF
    if op2 & 0b1110000 == 0b0100000 or op2 & 0b1111000 == 0b0110000:
        return Insn(pc, 4, h1, h2, "data", rd, h1 & 0xF, h2 & 0xF, writes=(rd,))  # register, multiply
    if op2 & 0b1111000 == 0b0111000:                       # long multiply (RdLo, RdHi), divide
        return Insn(pc, 4, h1, h2, "data", rd, h1 & 0xF, h2 & 0xF,
                    writes=tuple(r for r in ((h2 >> 12) & 0xF, rd) if r != PC))
    if op2 & 0b1000000:
        return _coprocessor(h1, h2, pc)
    return Insn(pc, 4, h1, h2, "unknown", writes=ALL)


def _shifted_register(h1: int, h2: int, pc: int) -> Insn:
    rd, opc, s, rn, rm = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF, h2 & 0xF
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return Insn(pc, 4, h1, h2, "compare", rn=rn, rm=rm)
    if opc == 0b0010 and rn == PC:                         # MOV.W / LSL/LSR/ASR/ROR Rd, Rm, #imm
        kind, amount = (h2 >> 4) & 3, ((h2 >> 12) & 7) << 2 | (h2 >> 6) & 3
        op = "mov" if kind == amount == 0 else _SHIFTS[kind]
        return Insn(pc, 4, h1, h2, op, rd, rm=rm, imm=amount, writes=(rd,))
    return Insn(pc, 4, h1, h2, "data", rd, rn, rm, writes=(rd,))


def _modified_immediate(h1: int, h2: int, pc: int) -> Insn:
    rd, opc, s, rn = (h2 >> 8) & 0xF, (h1 >> 5) & 0xF, h1 >> 4 & 1, h1 & 0xF
    imm = thumb_expand_imm(((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF)
    if rd == PC and s:                                     # TST, TEQ, CMP, CMN
        return Insn(pc, 4, h1, h2, "compare", rn=rn, imm=imm)
    if opc in (0b0010, 0b0011) and rn == PC:               # MOV.W / MVN Rd, #imm
        return Insn(pc, 4, h1, h2, "mvn" if opc & 1 else "mov", rd, imm=imm, writes=(rd,))
    op = {0b1000: "add", 0b1101: "sub"}.get(opc, "data")   # ADD.W / SUB.W Rd, Rn, #imm
    return Insn(pc, 4, h1, h2, op, rd, rn, imm=imm, writes=(rd,))


def _plain_immediate(h1: int, h2: int, pc: int) -> Insn:
    op, rn, rd = (h1 >> 4) & 0x1F, h1 & 0xF, (h2 >> 8) & 0xF
    imm12 = ((h1 >> 10) & 1) << 11 | ((h2 >> 12) & 7) << 8 | h2 & 0xFF
    if op in (0b00000, 0b01010):                           # ADDW / SUBW (ADR with Rn = PC)
        sub = op == 0b01010
        if rn == PC:
            return Insn(pc, 4, h1, h2, "adr", rd, PC, imm=imm12, writes=(rd,),
                        address=(literal_base(pc) + (-imm12 if sub else imm12)) & MASK)
        return Insn(pc, 4, h1, h2, "sub" if sub else "add", rd, rn, imm=imm12, writes=(rd,))
    if op in (0b00100, 0b01100):                           # MOVW / MOVT Rd, #imm16
        return Insn(pc, 4, h1, h2, "movt" if op & 0b01000 else "movw", rd,
                    imm=(h1 & 0xF) << 12 | imm12, writes=(rd,))
    return Insn(pc, 4, h1, h2, "data", rd, rn, writes=(rd,))   # SSAT, USAT, SBFX, UBFX, BFI, BFC


def _branch_misc(h1: int, h2: int, pc: int) -> Insn:
    """A5.3.4: branches and miscellaneous control."""
    kind = (h2 >> 12) & 0b101
    if kind == 0b101:                                      # BL
        return Insn(pc, 4, h1, h2, "bl", writes=(LR,), flow=CALL, target=branch24(pc, h1, h2))
    if kind == 0b001:                                      # B.W (T4)
        return Insn(pc, 4, h1, h2, "b", flow=JUMP, target=branch24(pc, h1, h2))
    if kind == 0b100:                                      # Armv8.1-M low-overhead loops
        return _loop(h1, h2, pc)
    if (h1 >> 7) & 7 != 0b111:                             # B<c>.W (T3)
        return Insn(pc, 4, h1, h2, "b", flow=BRANCH, target=branch20(pc, h1, h2))
    op = (h1 >> 4) & 0x7F
    if op & 0b1111110 == 0b0111110:                        # MRS Rd, spec_reg
        rd = (h2 >> 8) & 0xF
        return Insn(pc, 4, h1, h2, "mrs", rd, writes=(rd,))
    if op & 0b1111110 == 0b0111000:
        return Insn(pc, 4, h1, h2, "msr", rn=h1 & 0xF)
    if op == 0b0111010:                                    # hints
        return Insn(pc, 4, h1, h2, HINTS.get(h2 & 0xFF, "hint"), imm=h2 & 0xFF)
    if op == 0b0111011:                                    # CLREX, DSB, DMB, ISB
        return Insn(pc, 4, h1, h2, "barrier", imm=h2 & 0xFF)
    if op == 0b1111111 and (h2 >> 12) & 7 == 0b010:        # UDF.W
        return Insn(pc, 4, h1, h2, "udf", imm=(h1 & 0xF) << 12 | h2 & 0xFFF, flow=STOP)
    return Insn(pc, 4, h1, h2, "unknown", writes=ALL)


def _loop(h1: int, h2: int, pc: int) -> Insn:
    """Armv8.1-M low-overhead loops (in the space v7-M gives to BLX (immediate)): DLS/DLSTP
    and WLS/WLSTP set lr, LE/LETP decrement it and branch back, LCTP writes no register. The
    offset is imm10:imm1:'0' from the second halfword's bits 10:1 and 11. The branch-future
    instructions (BF, BFX, BFL, BFLX, BFCSEL) change where a later instruction goes."""
    word32 = h1 << 16 | h2
    offset = ((h2 >> 1) & 0x3FF) << 2 | ((h2 >> 11) & 1) << 1
    if word32 == 0xF00FE001:                               # LCTP
        return Insn(pc, 4, h1, h2, "loop")
    if word32 & 0xFFFFF001 in (0xF02FC001, 0xF00FC001, 0xF01FC001):   # LE, LE lr, LETP
        return Insn(pc, 4, h1, h2, "loop", writes=(LR,), flow=BRANCH, target=(pc + 4 - offset) & MASK)
    if word32 & 0xFFF0F001 == 0xF040C001 or word32 & 0xFFC0F001 == 0xF000C001:  # WLS, WLSTP
        return Insn(pc, 4, h1, h2, "loop", LR, h1 & 0xF, writes=(LR,), flow=BRANCH,
                    target=(pc + 4 + offset) & MASK)
    if word32 & 0xFFF0FFFF == 0xF040E001 or word32 & 0xFFC0FFFF == 0xF000E001:  # DLS, DLSTP
        return Insn(pc, 4, h1, h2, "loop", LR, h1 & 0xF, writes=(LR,))
    return Insn(pc, 4, h1, h2, "loop", writes=(LR,), flow=OPAQUE)


def _coprocessor(h1: int, h2: int, pc: int) -> Insn:
    """Floating point (coprocessors 10 and 11) is decoded; anything else here (MVE, the
    custom datapath extension) may write any core register."""
    op1, coproc, rn, rt = (h1 >> 4) & 0x3F, (h2 >> 8) & 0xF, h1 & 0xF, (h2 >> 12) & 0xF
    fp = coproc in (10, 11)
    if fp and op1 & 0b100000 == 0 and op1 & 0b111010 != 0:    # VLDR/VSTR/VLDM/VSTM
        address = None
        if op1 & 0b010011 == 0b010001 and rn == PC:        # VLDR (literal)
            imm = (h2 & 0xFF) * 4
            address = literal_base(pc) + (imm if h1 >> 7 & 1 else -imm)
        return Insn(pc, 4, h1, h2, "fp", rn=rn, writes=(rn,) if op1 & 0b000010 else (), address=address)
    if fp and op1 == 0b000101:                             # VMOV Rt, Rt2, <FP registers>
        return Insn(pc, 4, h1, h2, "fp", rt, writes=(rt, rn))
    if fp and op1 == 0b000100:                             # VMOV <FP registers>, Rt, Rt2
        return Insn(pc, 4, h1, h2, "fp")
    if fp and op1 & 0b110000 == 0b100000:
        if h2 >> 4 & 1 and op1 & 1 and rt != PC:           # VMOV Rt, Sn / scalar; VMRS
            return Insn(pc, 4, h1, h2, "fp", rt, writes=(rt,))
        return Insn(pc, 4, h1, h2, "fp")                   # FP data processing, VMOV to FP, VMSR
    return Insn(pc, 4, h1, h2, "unknown", writes=ALL)

"""16-bit Thumb encodings (Arm v7-M ARM, A5.2; Armv8-M keeps them)."""
from __future__ import annotations

from weaklink.read.thumb.insn import (ALL, BRANCH, CALL, HINTS, JUMP, LR, MASK, NEXT, OPAQUE, PC,
                                      RETURN, SP, STOP, Access, Insn, literal_base, reglist, signed)

# A5.2.4 load/store single data item, register offset: opB -> (load, size, signed)
_REGISTER_OFFSET = {0: (False, 4, False), 1: (False, 2, False), 2: (False, 1, False),
                    3: (True, 1, True), 4: (True, 4, False), 5: (True, 2, False),
                    6: (True, 1, False), 7: (True, 2, True)}


def narrow(h: int, pc: int) -> Insn:
    top5, top4 = h >> 11, h >> 12
    if h >> 13 == 0b000:                                   # shift (imm), add, subtract
        rd, rn = h & 7, (h >> 3) & 7
        if top5 == 0b00011:                                # ADDS/SUBS Rd, Rn, Rm / #imm3
            op = "sub" if h >> 9 & 1 else "add"
            if h >> 10 & 1:
                return Insn(pc, 2, h, 0, op, rd, rn, imm=(h >> 6) & 7, writes=(rd,))
            return Insn(pc, 2, h, 0, op, rd, rn, (h >> 6) & 7, writes=(rd,))
        op = ("lsl", "lsr", "asr")[top5 & 3]               # LSLS/LSRS/ASRS Rd, Rm, #imm5
        return Insn(pc, 2, h, 0, op, rd, rm=rn, imm=(h >> 6) & 0x1F, writes=(rd,))
    if top5 == 0b00100:                                    # MOVS Rd, #imm8
        rd = (h >> 8) & 7
        return Insn(pc, 2, h, 0, "mov", rd, imm=h & 0xFF, writes=(rd,))
    if top5 == 0b00101:                                    # CMP Rn, #imm8
        return Insn(pc, 2, h, 0, "compare", rn=(h >> 8) & 7, imm=h & 0xFF)
    if top5 in (0b00110, 0b00111):                         # ADDS/SUBS Rdn, #imm8
        rdn = (h >> 8) & 7
        return Insn(pc, 2, h, 0, "sub" if top5 & 1 else "add", rdn, rdn, imm=h & 0xFF, writes=(rdn,))
    if h >> 10 == 0b010000:                                # data processing (register)
        if (h >> 6) & 0xF in (0b1000, 0b1010, 0b1011):     # TST, CMP, CMN
            return Insn(pc, 2, h, 0, "compare", rn=h & 7, rm=(h >> 3) & 7)
        return Insn(pc, 2, h, 0, "data", h & 7, h & 7, (h >> 3) & 7, writes=(h & 7,))
    if h >> 10 == 0b010001:
        return _special(h, pc)
    if top5 == 0b01001:                                    # LDR Rt, [PC, #imm8*4]
        rt, imm = (h >> 8) & 7, (h & 0xFF) * 4
        access = Access(True, 4, False, (rt,), PC, imm, None, 0, True, True, False, 2)
        return Insn(pc, 2, h, 0, "load", rt, PC, imm=imm, writes=(rt,),
                    address=literal_base(pc) + imm, access=access)
    if top4 == 0b0101:                                     # load/store (register offset)
        load, size, sign = _REGISTER_OFFSET[(h >> 9) & 7]
        rt, rn, rm = h & 7, (h >> 3) & 7, (h >> 6) & 7
        access = Access(load, size, sign, (rt,), rn, 0, rm, 0, True, True, False, 2)
        return Insn(pc, 2, h, 0, "load" if load else "store", rt, rn, rm,
                    writes=(rt,) if load else (), access=access)
    if h >> 13 == 0b011 or top4 == 0b1000:                 # STR/LDR(B), STRH/LDRH Rt, [Rn, #imm5]
        size = 2 if top4 == 0b1000 else (1 if h >> 12 & 1 else 4)
        return _single(h, pc, bool(h >> 11 & 1), size, h & 7, (h >> 3) & 7, ((h >> 6) & 0x1F) * size)
    if top4 == 0b1001:                                     # STR/LDR Rt, [SP, #imm8*4]
        return _single(h, pc, bool(h >> 11 & 1), 4, (h >> 8) & 7, SP, (h & 0xFF) * 4)
    if top5 == 0b10100:                                    # ADR Rd, label
        rd = (h >> 8) & 7
        return Insn(pc, 2, h, 0, "adr", rd, PC, imm=(h & 0xFF) * 4, writes=(rd,),
                    address=literal_base(pc) + (h & 0xFF) * 4)
    if top5 == 0b10101:                                    # ADD Rd, SP, #imm8*4
        rd = (h >> 8) & 7
        return Insn(pc, 2, h, 0, "add", rd, SP, imm=(h & 0xFF) * 4, writes=(rd,))
    if top4 == 0b1011:
        return _misc(h, pc)
    if top4 == 0b1100:                                     # STMIA / LDMIA Rn!, {list}
        load, rn, regs = bool(h >> 11 & 1), (h >> 8) & 7, reglist(h & 0xFF)
        writeback = not load or rn not in regs             # LDM writes back unless Rn is listed
        access = Access(load, 4, False, regs, rn, 0, None, 0, True, False, writeback, 2, multiple=True)
        writes = (regs if load else ()) + ((rn,) if writeback else ())
        return Insn(pc, 2, h, 0, "load" if load else "store", rn=rn, writes=writes, access=access)
    if top4 == 0b1101:
        cond = (h >> 8) & 0xF
        if cond == 0xE:
            return Insn(pc, 2, h, 0, "udf", imm=h & 0xFF, flow=STOP)
        if cond == 0xF:
            return Insn(pc, 2, h, 0, "svc", imm=h & 0xFF)
        return Insn(pc, 2, h, 0, "b", flow=BRANCH, target=(pc + 4 + signed(h & 0xFF, 8) * 2) & MASK)
    if top5 == 0b11100:                                    # B (T2)
        return Insn(pc, 2, h, 0, "b", flow=JUMP, target=(pc + 4 + signed(h & 0x7FF, 11) * 2) & MASK)
    return Insn(pc, 2, h, 0, "unknown", writes=ALL)


def _single(h: int, pc: int, load: bool, size: int, rt: int, rn: int, offset: int) -> Insn:
    access = Access(load, size, False, (rt,), rn, offset, None, 0, True, True, False, 2)
    return Insn(pc, 2, h, 0, "load" if load else "store", rt, rn, imm=offset,
                writes=(rt,) if load else (), access=access)


def _special(h: int, pc: int) -> Insn:
    """A5.2.3: ADD, CMP, MOV on any registers; BX, BLX (register)."""
    op = (h >> 8) & 3
    rdn, rm = (h & 7) | (h >> 4) & 8, (h >> 3) & 0xF
    if op == 3:
        if h >> 7 & 1:                                     # BLX Rm: an indirect call
            return Insn(pc, 2, h, 0, "blx", rm=rm, writes=(LR,), flow=CALL)
        return Insn(pc, 2, h, 0, "bx", rm=rm, flow=RETURN if rm == LR else OPAQUE)
    if op == 1:
        return Insn(pc, 2, h, 0, "compare", rn=rdn, rm=rm)
    name = "mov" if op == 2 else "add"
    if rdn == PC:                                          # MOV/ADD PC, Rm: a computed jump
        flow = RETURN if op == 2 and rm == LR else OPAQUE
        return Insn(pc, 2, h, 0, name, rdn, None if op == 2 else rdn, rm, flow=flow)
    return Insn(pc, 2, h, 0, name, rdn, None if op == 2 else rdn, rm, writes=(rdn,))


def _misc(h: int, pc: int) -> Insn:
    """Miscellaneous 16-bit instructions (A5.2.5)."""
    sub = (h >> 8) & 0xF
    if sub == 0x0:                                         # ADD/SUB SP, SP, #imm7*4
        return Insn(pc, 2, h, 0, "sub" if h >> 7 & 1 else "add", SP, SP, imm=(h & 0x7F) * 4, writes=(SP,))
    if sub in (0x1, 0x3, 0x9, 0xB):                        # CBZ / CBNZ
        return Insn(pc, 2, h, 0, "cbz", rn=h & 7, flow=BRANCH,
                    target=pc + 4 + (((h >> 9) & 1) << 6 | ((h >> 3) & 0x1F) << 1))
    if sub in (0x2, 0xA):                                  # SXTH..UXTB, REV..REVSH
        return Insn(pc, 2, h, 0, "data", h & 7, rm=(h >> 3) & 7, writes=(h & 7,))
    if sub in (0x4, 0x5):                                  # PUSH {list[, lr]}
        regs = reglist(h & 0xFF | (h >> 8 & 1) << LR)
        access = Access(False, 4, False, regs, SP, 0, None, 0, True, False, True, 2, True, True)
        return Insn(pc, 2, h, 0, "store", rn=SP, writes=(SP,), access=access)
    if sub in (0xC, 0xD):                                  # POP {list[, pc]}
        regs = reglist(h & 0xFF | (h >> 8 & 1) << PC)
        access = Access(True, 4, False, regs, SP, 0, None, 0, True, False, True, 2, True)
        return Insn(pc, 2, h, 0, "load", rn=SP, writes=reglist(h & 0xFF) + (SP,),
                    flow=RETURN if h >> 8 & 1 else NEXT, access=access)
    if sub == 0x6:                                         # CPS
        return Insn(pc, 2, h, 0, "cps")
    if sub == 0xE:
        return Insn(pc, 2, h, 0, "bkpt", imm=h & 0xFF)
    if sub == 0xF:                                         # IT (mask != 0) or a hint
        mask = h & 0xF
        if mask:
            return Insn(pc, 2, h, 0, "it", imm=(h >> 4) & 0xF, it=4 - (mask & -mask).bit_length() + 1)
        return Insn(pc, 2, h, 0, HINTS.get((h >> 4) & 0xF, "hint"), imm=(h >> 4) & 0xF)
    return Insn(pc, 2, h, 0, "unknown", writes=ALL)

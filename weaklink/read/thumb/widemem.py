"""32-bit Thumb loads and stores of core registers (Arm v7-M ARM, A5.3.5 load/store multiple,
A5.3.6 dual, exclusive and table branch, A5.3.7-A5.3.10 single data item; Armv8-M adds SG,
TT and, in Armv8.1-M, CLRM)."""
from __future__ import annotations

from weaklink.read.thumb.insn import (ALL, NEXT, OPAQUE, PC, RETURN, SP, Access, Insn,
                                      literal_base, reglist)


def multiple(h1: int, h2: int, pc: int) -> Insn:
    """LDM/LDMDB/POP.W and STM/STMDB/PUSH.W; CLRM."""
    if h1 == 0xE89F:                                       # CLRM {list}: zeroes the list
        return Insn(pc, 4, h1, h2, "clrm", writes=reglist(h2 & 0x7FFF))
    kind, rn, writeback, load = (h1 >> 7) & 3, h1 & 0xF, bool(h1 >> 5 & 1), bool(h1 >> 4 & 1)
    if kind not in (0b01, 0b10):                           # SRS, RFE: not in M profile
        return Insn(pc, 4, h1, h2, "unknown", writes=ALL)
    access = Access(load, 4, False, reglist(h2), rn, 0, None, 0, True, False, writeback, 4,
                    multiple=True, decrement=kind == 0b10)
    writes = (reglist(h2 & 0x7FFF) if load else ()) + ((rn,) if writeback else ())
    flow = NEXT
    if load and h2 >> 15 & 1:                              # PC in the list: a return
        flow = RETURN if rn == SP else OPAQUE
    return Insn(pc, 4, h1, h2, "load" if load else "store", rn=rn, writes=writes, flow=flow,
                access=access)


def dual(h1: int, h2: int, pc: int) -> Insn:
    """A5.3.6: LDRD/STRD, the exclusives, TBB/TBH; SG and TT (Armv8-M Security Extension)."""
    o1, o2, o3 = (h1 >> 7) & 3, (h1 >> 4) & 3, (h2 >> 4) & 0xF
    rn, rt, rt2 = h1 & 0xF, (h2 >> 12) & 0xF, (h2 >> 8) & 0xF
    if h1 == 0xE97F and h2 == 0xE97F:
        return Insn(pc, 4, h1, h2, "sg")
    if o1 == 0 and o2 == 0:                                # STREX Rd, Rt, [Rn]; TT Rd, Rn
        return Insn(pc, 4, h1, h2, "tt" if rt == PC else "strex", rt2, rn, writes=(rt2,))
    if o1 == 0 and o2 == 1:                                # LDREX Rt, [Rn]
        return Insn(pc, 4, h1, h2, "ldrex", rt, rn, writes=(rt,))
    if o1 == 1 and o2 == 0:                                # STREXB/H/D: the status in Rd
        return Insn(pc, 4, h1, h2, "strex", h2 & 0xF, rn, writes=(h2 & 0xF,))
    if o1 == 1 and o2 == 1:
        if o3 in (0, 1):                                   # TBB / TBH: a jump through a table
            return Insn(pc, 4, h1, h2, "tbb", rn=rn, rm=h2 & 0xF, flow=OPAQUE)
        return Insn(pc, 4, h1, h2, "ldrex", rt, rn, writes=tuple(r for r in (rt, rt2) if r != PC))
    p, u, w, load = h1 >> 8 & 1, h1 >> 7 & 1, bool(h1 >> 5 & 1), bool(h1 >> 4 & 1)
    imm = (h2 & 0xFF) * 4                                  # LDRD/STRD Rt, Rt2, [Rn, #±imm8*4]
    access = Access(load, 4, False, (rt, rt2), rn, imm, None, 0, bool(u), bool(p), w, 4)
    if load and rn == PC and not w:                        # LDRD (literal)
        return Insn(pc, 4, h1, h2, "load", rt, PC, imm=imm, writes=(rt, rt2), access=access,
                    address=literal_base(pc) + (imm if u else -imm))
    writes = ((rt, rt2) if load else ()) + ((rn,) if w else ())
    return Insn(pc, 4, h1, h2, "load" if load else "store", rt, rn, imm=imm, writes=writes,
                access=access)


def single(h1: int, h2: int, pc: int, load: bool) -> Insn:
    """LDR/STR(B/H), LDRSB/LDRSH: with a 12-bit immediate; an 8-bit one with P, U, W (and the
    unprivileged T forms, PUW 110); a register shifted left by 0-3; PC-relative (literal)."""
    rn, rt, size_code, sign = h1 & 0xF, h2 >> 12, (h1 >> 5) & 3, bool(h1 >> 8 & 1)
    if size_code == 3 or (sign and size_code == 2):
        return Insn(pc, 4, h1, h2, "unknown", writes=ALL)
    if load and rt == PC and size_code != 2:               # PLD, PLI, unallocated hints
        return Insn(pc, 4, h1, h2, "pld", rn=rn)
    size, address = 1 << size_code, None
    if load and rn == PC:                                  # LDR<size> Rt, [PC, #±imm12]
        imm, add = h2 & 0xFFF, bool(h1 >> 7 & 1)
        access = Access(True, size, sign, (rt,), PC, imm, None, 0, add, True, False, 4)
        address = literal_base(pc) + (imm if add else -imm)
    elif h1 >> 7 & 1:                                      # [Rn, #imm12]
        access = Access(load, size, sign, (rt,), rn, h2 & 0xFFF, None, 0, True, True, False, 4)
    elif h2 >> 11 & 1:                                     # [Rn, #±imm8] with P, U, W
        p, u, w = h2 >> 10 & 1, h2 >> 9 & 1, h2 >> 8 & 1
        access = Access(load, size, sign, (rt,), rn, h2 & 0xFF, None, 0, bool(u), bool(p), bool(w), 4)
    elif (h2 >> 6) & 0x3F == 0:                            # [Rn, Rm, LSL #imm2]
        access = Access(load, size, sign, (rt,), rn, 0, h2 & 0xF, (h2 >> 4) & 3, True, True, False, 4)
    else:
        return Insn(pc, 4, h1, h2, "unknown", writes=ALL)
    writes = ((rt,) if load and rt != PC else ()) + ((rn,) if access.writeback else ())
    flow = NEXT
    if load and rt == PC:                                  # LDR PC: POP.W {pc}, or a jump
        flow = RETURN if rn == SP and access.writeback else OPAQUE
    return Insn(pc, 4, h1, h2, "load" if load else "store", rt, rn, access.index,
                imm=access.offset, writes=writes, flow=flow, address=address, access=access)

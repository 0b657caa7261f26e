"""What a firmware passes to a function, read from the image: `ethosu_init`'s fast memory.

`ethosu_init(drv, base_address, fast_memory, fast_memory_size, secure, privileged)`: under the
AAPCS the third and fourth arguments travel in r2 and r3. Two sources, tried in order:

1. DWARF call sites (an optimised `-g` build; GCC 12 writes DWARF 5): a DW_TAG_call_site whose
   DW_AT_call_origin is the callee has DW_TAG_call_site_parameter children; the one located
   in r2 (DW_OP_reg2) carries DW_AT_call_value, e.g. DW_OP_addr of the buffer, and r3's the
   size as a constant expression.
2. The code before the call (an unoptimised build): the Thumb instructions from the calling
   function's start to the BL, tracking the constants loaded into r2 and r3 (LDR from the
   literal pool, MOVW/MOVT, MOVS/MOV.W immediates, MOV between registers). Any other write to
   r2/r3 makes that register unknown.

Either gives an `ArgValues` with its source; None means "unknown" to the caller, never a guess.
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from weaklink.errors import InputError
from weaklink.read import elfstructs as S

FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG = 2, 3
# 16-bit "miscellaneous" encodings (first byte) that write no low register: add/sub sp,
# cbz/cbnz, push, bkpt, it and hints.
SAFE_MISC = {0xB0, 0xB1, 0xB3, 0xB4, 0xB5, 0xB9, 0xBB, 0xBE, 0xBF}


@dataclass(frozen=True)
class ArgValues:
    call_site: int                  # address of the BL
    values: dict                    # register number -> value (absent: unknown)
    source: str                     # "dwarf call site" | "literal pool"


# -- DWARF ------------------------------------------------------------------------------------
DW_OP_addr, DW_OP_const1u, DW_OP_const2u, DW_OP_const4u = 0x03, 0x08, 0x0A, 0x0C
DW_OP_constu, DW_OP_plus, DW_OP_shl, DW_OP_or, DW_OP_mul = 0x10, 0x22, 0x24, 0x21, 0x1E
DW_OP_lit0, DW_OP_lit31, DW_OP_reg0, DW_OP_reg31 = 0x30, 0x4F, 0x50, 0x6F
BINARY = {DW_OP_plus: int.__add__, DW_OP_shl: int.__lshift__, DW_OP_or: int.__or__,
          DW_OP_mul: int.__mul__}


def _uleb(expr: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(expr):
        b = expr[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos
    raise ValueError("truncated ULEB128")


def dwarf_constant(expr: bytes) -> int | None:
    """The value of a constant DWARF expression (addresses, literals, simple arithmetic);
    None for anything that depends on the machine state."""
    stack, pos = [], 0
    fixed = {DW_OP_addr: "<I", DW_OP_const1u: "<B", DW_OP_const2u: "<H", DW_OP_const4u: "<I"}
    try:
        while pos < len(expr):
            op = expr[pos]
            pos += 1
            if op in fixed:
                size = struct.calcsize(fixed[op])
                stack.append(struct.unpack_from(fixed[op], expr, pos)[0])
                pos += size
            elif op == DW_OP_constu:
                value, pos = _uleb(expr, pos)
                stack.append(value)
            elif DW_OP_lit0 <= op <= DW_OP_lit31:
                stack.append(op - DW_OP_lit0)
            elif op in BINARY and len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(BINARY[op](a, b) & 0xFFFFFFFF)
            else:
                return None
    except (struct.error, ValueError):
        return None
    return stack[-1] if len(stack) == 1 else None


def _walk(die):
    for child in die.iter_children():
        yield child
        yield from _walk(child)


def _origin_name(die) -> str | None:
    try:
        target = die.get_DIE_from_attribute("DW_AT_call_origin")
    except Exception:          # a reference pyelftools cannot follow: not our callee
        return None
    for _ in range(4):         # a declaration may point on to its specification
        name = target.attributes.get("DW_AT_name")
        if name is not None:
            return name.value.decode() if isinstance(name.value, bytes) else str(name.value)
        nxt = next((a for a in ("DW_AT_specification", "DW_AT_abstract_origin")
                    if a in target.attributes), None)
        if nxt is None:
            return None
        target = target.get_DIE_from_attribute(nxt)
    return None


def from_dwarf(elf_data: bytes, callee: str, name: str | None = None) -> list[ArgValues]:
    """The register arguments of every call site of `callee` that DWARF describes; corrupt
    DWARF is one InputError naming the image (`name`)."""
    try:
        return _call_sites(elf_data, callee)
    except (MemoryError, InputError):
        raise
    except Exception as exc:    # pyelftools reports corrupt DWARF with many exception types
        raise InputError(name or "image", f"unreadable DWARF: {type(exc).__name__}: {exc}") from None


def _call_sites(elf_data: bytes, callee: str) -> list[ArgValues]:
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(elf_data))
    if not elf.has_dwarf_info():
        return []
    out = []
    for cu in elf.get_dwarf_info().iter_CUs():
        for die in _walk(cu.get_top_DIE()):
            if die.tag not in ("DW_TAG_call_site", "DW_TAG_GNU_call_site"):
                continue
            if _origin_name(die) != callee:
                continue
            values = {}
            for param in die.iter_children():
                loc = param.attributes.get("DW_AT_location")
                val = (param.attributes.get("DW_AT_call_value")
                       or param.attributes.get("DW_AT_GNU_call_site_value"))
                if loc is None or val is None or not isinstance(loc.value, list) or len(loc.value) != 1:
                    continue
                reg = loc.value[0] - DW_OP_reg0
                value = dwarf_constant(bytes(val.value))
                if 0 <= reg <= DW_OP_reg31 - DW_OP_reg0 and value is not None:
                    values[reg] = value
            pc = die.attributes.get("DW_AT_call_return_pc") or die.attributes.get("DW_AT_low_pc")
            out.append(ArgValues((pc.value - 4) if pc else 0, values, "dwarf call site"))
    return out


# -- Thumb code -------------------------------------------------------------------------------
def _thumb_expand_imm(imm12: int) -> int:
    """ThumbExpandImm (Armv7-M/Armv8-M ARM, A5.3.2)."""
    if imm12 >> 10 == 0:
        byte, kind = imm12 & 0xFF, (imm12 >> 8) & 3
        return [byte, byte << 16 | byte, byte << 24 | byte << 8,
                byte << 24 | byte << 16 | byte << 8 | byte][kind]
    unrotated, rot = 0x80 | (imm12 & 0x7F), imm12 >> 7
    return ((unrotated >> rot) | (unrotated << (32 - rot))) & 0xFFFFFFFF


def _bl_target(pc: int, hw1: int, hw2: int) -> int | None:
    """The target of a Thumb BL (T1) at `pc`, or None when it is not a BL."""
    if hw1 >> 11 != 0b11110 or (hw2 & 0xD000) != 0xD000:
        return None
    s = (hw1 >> 10) & 1
    i1, i2 = 1 - (((hw2 >> 13) & 1) ^ s), 1 - (((hw2 >> 11) & 1) ^ s)
    off = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1
    if s:
        off -= 1 << 25
    return (pc + 4 + off) & 0xFFFFFFFF


def _step(regs: dict, pc: int, hw1: int, hw2: int, word) -> None:
    """Track constants in r0-r7 across one instruction (16- or 32-bit)."""
    if hw1 >> 11 in (0b11101, 0b11110, 0b11111):          # 32-bit
        rd = (hw2 >> 8) & 0xF
        if (hw1 & 0xFB40) == 0xF240 and not hw2 & 0x8000:   # MOVW / MOVT (T3 / T1)
            imm16 = (hw1 & 0xF) << 12 | ((hw1 >> 10) & 1) << 11 | ((hw2 >> 12) & 7) << 8 | hw2 & 0xFF
            if hw1 & 0x0080:
                regs[rd] = (regs[rd] & 0xFFFF) | imm16 << 16 if rd in regs else None
            else:
                regs[rd] = imm16
        elif (hw1 & 0xFBEF) == 0xF04F and not hw2 & 0x8000:  # MOV.W Rd, #imm (T2)
            regs[rd] = _thumb_expand_imm(((hw1 >> 10) & 1) << 11 | ((hw2 >> 12) & 7) << 8 | hw2 & 0xFF)
        elif (hw1 & 0xFF7F) == 0xF85F:                       # LDR.W Rt, [pc, #±imm12]
            rt, imm = (hw2 >> 12) & 0xF, hw2 & 0xFFF
            base = (pc + 4) & ~3
            regs[rt] = word(base + imm if hw1 & 0x80 else base - imm)
        else:
            # Any other 32-bit instruction may write r2/r3: forget them unless it is a store.
            if not (hw1 >> 9 == 0b1111100 and not hw1 & 0x10):
                regs.pop(FAST_MEMORY_REG, None)
                regs.pop(FAST_MEMORY_SIZE_REG, None)
        return
    if hw1 >> 11 == 0b01001:                                 # LDR Rt, [pc, #imm8*4] (T1)
        regs[(hw1 >> 8) & 7] = word(((pc + 4) & ~3) + (hw1 & 0xFF) * 4)
    elif hw1 >> 11 == 0b00100:                               # MOVS Rd, #imm8
        regs[(hw1 >> 8) & 7] = hw1 & 0xFF
    elif hw1 >> 8 == 0b01000110:                             # MOV Rd, Rm (T1)
        rd, rm = (hw1 & 7) | (hw1 >> 4) & 8, (hw1 >> 3) & 0xF
        regs[rd] = regs.get(rm)
    elif hw1 >> 11 == 0b10100:                               # ADR Rd, label: a constant
        regs[(hw1 >> 8) & 7] = ((pc + 4) & ~3) + (hw1 & 0xFF) * 4
    elif hw1 >> 12 in (0b0101, 0b0110, 0b0111, 0b1000, 0b1001) and not (hw1 >> 11) & 1:
        pass                                                 # stores leave registers alone
    elif hw1 >> 12 in (0b1101, 0b1110) or hw1 >> 8 in SAFE_MISC:
        pass                    # branches, add/sub sp, cbz/cbnz, push, bkpt, it and hints
    elif (hw1 & 0xFE00) == 0xBC00:                           # POP {reglist}
        for rd in (FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG):
            if hw1 >> rd & 1:
                regs.pop(rd, None)
    else:
        # A data-processing or load instruction: r2/r3 may be its destination (bits 2:0 or 10:8).
        for rd in (hw1 & 7, (hw1 >> 8) & 7):
            if rd in (FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG):
                regs.pop(rd, None)
    for k in [k for k, v in regs.items() if v is None]:
        del regs[k]


def from_code(image, callee: str) -> list[ArgValues]:
    """r2/r3 at every `BL callee` in the image's code, from the calling function's start."""
    targets = {s.address & ~1 for s in image.lookup(callee) if s.shndx}
    if not targets:
        return []
    elf = image.elf
    out = []
    for i, sh in enumerate(elf.sections):
        if int(sh["sh_type"]) != S.SHT_PROGBITS or not int(sh["sh_flags"]) & S.SHF_EXECINSTR:
            continue
        code, base = elf.section_bytes(i), int(sh["sh_addr"])
        out += _scan(image, code, base, targets)
    return out


def _scan(image, code: bytes, base: int, targets: set[int]) -> list[ArgValues]:
    starts = sorted(a for a in _function_starts(image) if base <= a < base + len(code))
    out = []

    def word(addr):
        off = addr - base
        return struct.unpack_from("<I", code, off)[0] if 0 <= off <= len(code) - 4 else None

    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else base + len(code)
        regs: dict = {}
        pc = start
        while pc + 2 <= end:
            hw1 = struct.unpack_from("<H", code, pc - base)[0]
            wide = hw1 >> 11 in (0b11101, 0b11110, 0b11111)
            hw2 = struct.unpack_from("<H", code, pc - base + 2)[0] if wide and pc + 4 <= end else 0
            target = _bl_target(pc, hw1, hw2) if wide else None
            if target is not None:
                if target in targets:
                    out.append(ArgValues(pc, {r: regs[r] for r in (FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG)
                                              if regs.get(r) is not None}, "literal pool"))
                regs = {}        # a call clobbers r0-r3 (AAPCS)
            else:
                _step(regs, pc, hw1, hw2, word)
            pc += 4 if wide else 2
    return out


def _function_starts(image) -> set[int]:
    """Where the image's functions (local and global) start: instruction-stream entry points."""
    c = image.defined
    return {a for a, t in zip(c.address, c.type) if t == S.STT_FUNC}

"""What a firmware passes to a function, read from the image: `ethosu_init`'s fast memory.

`ethosu_init(drv, base_address, fast_memory, fast_memory_size, secure, privileged)`: under the
AAPCS the third and fourth arguments travel in r2 and r3. Two sources, tried in order:

1. DWARF call sites (an optimised `-g` build; GCC 12 writes DWARF 5): a DW_TAG_call_site whose
   DW_AT_call_origin is the callee has DW_TAG_call_site_parameter children; the one located
   in r2 (DW_OP_reg2) carries DW_AT_call_value, e.g. DW_OP_addr of the buffer, and r3's the
   size as a constant expression.
2. The code before the call (any build, DWARF or not): the calling function's Thumb code,
   followed along its branches from its start to the BL (weaklink.bind.thumb), tracking the
   constants loaded into registers (LDR from the literal pool, MOVW/MOVT, MOVS/MOV.W, ADR,
   MOV between registers, arithmetic on known values). Where paths meet, a register keeps
   its value only when every path agrees; an instruction that may write a register without
   a constant makes it unknown; a function that jumps through a register or a table gives
   no value at all.

Either gives an `ArgValues` with its source; None means "unknown" to the caller, never a guess.
"""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

import numpy as np

from weaklink.bind import thumb
from weaklink.bind.constmem import read_only_word
from weaklink.bind.origins import ARGUMENT_MARK, RETURNED, Trace
from weaklink.read import elfstructs as S
from weaklink.read.dwarf import Dwarf
from weaklink.read.dwarfforms import uleb

FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG = 2, 3


@dataclass(frozen=True)
class ArgValues:
    call_site: int                  # address of the BL
    values: dict                    # register number -> value (absent: unknown)
    source: str                     # "dwarf call site" | "literal pool"
    note: str = ""                  # why no register could be read, when that is known


# -- DWARF ------------------------------------------------------------------------------------
DW_OP_addr, DW_OP_const1u, DW_OP_const2u, DW_OP_const4u = 0x03, 0x08, 0x0A, 0x0C
DW_OP_constu, DW_OP_plus, DW_OP_shl, DW_OP_or, DW_OP_mul = 0x10, 0x22, 0x24, 0x21, 0x1E
DW_OP_lit0, DW_OP_lit31, DW_OP_reg0, DW_OP_reg31 = 0x30, 0x4F, 0x50, 0x6F
BINARY = {DW_OP_plus: int.__add__, DW_OP_shl: int.__lshift__, DW_OP_or: int.__or__,
          DW_OP_mul: int.__mul__}


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
                value, pos = uleb(expr, pos)
                stack.append(value)
            elif DW_OP_lit0 <= op <= DW_OP_lit31:
                stack.append(op - DW_OP_lit0)
            elif op in BINARY and len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(BINARY[op](a, b) & 0xFFFFFFFF)
            else:
                return None
    except (struct.error, IndexError):        # a truncated operand
        return None
    return stack[-1] if len(stack) == 1 else None


def from_dwarf(dwarf: Dwarf, callee: str) -> list[ArgValues]:
    """The register arguments of every call site of `callee` that DWARF describes (the units
    that name it, see weaklink.read.dwarf); corrupt DWARF is one InputError (DwarfError)."""
    out = []
    for site in dwarf.call_sites(callee):
        values = {}
        for op, expr in site.values.items():
            reg, value = op - DW_OP_reg0, dwarf_constant(expr)
            if 0 <= reg <= DW_OP_reg31 - DW_OP_reg0 and value is not None:
                values[reg] = value
        out.append(ArgValues(site.call_pc, values, "dwarf call site"))
    return out


# -- Thumb code -------------------------------------------------------------------------------
def _targets(image, callee: str) -> tuple[set[int], list[tuple[int, int]]]:
    """The callee's addresses, with GNU ld's long-branch stubs to it (`__callee_veneer`, a local
    function that loads the callee's address into pc): a BL to the stub is a call of the callee.
    Also the stubs' [start, end), whose literal is the callee's address but no function pointer."""
    stubs = [s for s in image.lookup(f"__{callee}_veneer") if s.shndx]
    targets = {s.address & ~1 for s in image.lookup(callee) if s.shndx}
    return targets | {s.address & ~1 for s in stubs}, [(s.address & ~1, (s.address & ~1) + max(s.size, 8))
                                                        for s in stubs]


def from_code(image, callee: str) -> list[ArgValues]:
    """r0-r3 at every `BL callee` (or tail-call `B callee`) in the image's code."""
    targets, _ = _targets(image, callee)
    if not targets:
        return []
    elf = image.elf
    out = []
    for i, sh in enumerate(elf.shdrs):
        if sh.sh_type != S.SHT_PROGBITS or not sh.sh_flags & S.SHF_EXECINSTR:
            continue
        out += _scan(image, elf.section_bytes(i), sh.sh_addr, targets)
    return out


def _scan(image, code: bytes, base: int, targets: set[int]) -> list[ArgValues]:
    def word(addr):
        off = addr - base
        return struct.unpack_from("<I", code, off)[0] if 0 <= off <= len(code) - 4 else None

    out, sites = [], _branch_sites(code, base, targets)
    for start, end in _function_extents(image, base, base + len(code)):
        k = bisect.bisect_left(sites, start)
        if k < len(sites) and sites[k] < end:       # only functions that may call a target
            out += _calls_in(code, base, start, end, targets, word)
    return out


def _branch_sites(code: bytes, base: int, targets: set[int]) -> list[int]:
    """Every halfword position whose bytes encode a branch or call with a static target in
    `targets` (BL, B.W, B<c>.W, B, B<c>, CBZ/CBNZ): a superset of the real call sites, since
    a position inside another instruction may match too, so a function holding none of them
    calls no target and its dataflow need not run. Vectorised over the section (numpy): the
    same encodings as thumbisa.branch24 / branch20."""
    raw = np.frombuffer(code, "<u2", len(code) // 2)
    if not len(raw) or not targets:
        return []
    top = raw >> 11
    cand = np.flatnonzero(top == 0b11110)
    cand = cand[cand + 1 < len(raw)]
    h, h2 = raw[cand].astype(np.int64), raw[cand + 1].astype(np.int64)
    pc = base + 2 * cand.astype(np.int64)
    s = (h >> 10) & 1
    j1, j2 = (h2 >> 13) & 1, (h2 >> 11) & 1
    t4 = pc + 4 + ((s << 24 | (1 - (j1 ^ s)) << 23 | (1 - (j2 ^ s)) << 22 | (h & 0x3FF) << 12
                    | (h2 & 0x7FF) << 1) - (s << 25))
    t3 = pc + 4 + ((s << 20 | j2 << 19 | j1 << 18 | (h & 0x3F) << 12 | (h2 & 0x7FF) << 1)
                   - (s << 21))
    wide = np.select([h2 & 0x9000 == 0x9000, (h2 & 0xD000 == 0x8000) & ((h >> 6) & 0xF < 0xE)],
                     [t4, t3], -1)
    out = [(pc, wide)]
    for kind in ("T2", "T1", "CB"):
        if kind == "T2":                                   # B (T2)
            k = np.flatnonzero(top == 0b11100)
        elif kind == "T1":                                 # B<c> (T1), not UDF/SVC
            k = np.flatnonzero((raw >> 12 == 0xD) & ((raw >> 8) & 0xF < 0xE))
        else:                                              # CBZ, CBNZ
            k = np.flatnonzero(raw & 0xF500 == 0xB100)
        h, pc = raw[k].astype(np.int64), base + 2 * k.astype(np.int64)
        if kind == "T2":
            imm = h & 0x7FF
            t = pc + 4 + 2 * (imm - ((imm >> 10) << 11))
        elif kind == "T1":
            imm = h & 0xFF
            t = pc + 4 + 2 * (imm - ((imm >> 7) << 8))
        else:
            t = pc + 4 + (((h >> 9) & 1) << 6 | ((h >> 3) & 0x1F) << 1)
        out.append((pc, t))
    want = np.sort(np.fromiter(targets, np.int64))

    def member(t):              # t in want, without sorting t
        t = np.where(t == -1, -1, t & 0xFFFFFFFF)
        return want[np.minimum(np.searchsorted(want, t), len(want) - 1)] == t
    hits = [pc[member(t)] for pc, t in out]
    return sorted(np.concatenate(hits).tolist())


def _merge(old: dict, new: dict) -> dict:
    """Where two paths meet, a register is known only when both give it the same value."""
    return {r: v for r, v in old.items() if new.get(r) == v}


def _calls_in(code, base, start, end, targets, word, seed=None, loads=None, memory=None,
              trace: Trace | None = None) -> list[ArgValues]:
    """Every call of a target in the function [start, end): the constants in r0-r3 on every
    path that reaches it (a forward dataflow over the function's branches, to a fixpoint).
    `seed`: the registers' values at the function's entry; `loads` gets the function's word
    loads (thumb.step); `memory(pc, address)`: the word a load from a constant address reads
    when the image says it. `trace`: where the values the code computes come from (markers for
    what a call returns and what a load reads, see Trace)."""
    states: dict[tuple[int, int], dict] = {(start, 0): dict(seed or {})}
    calls: dict[int, dict] = {}
    work, opaque = [(start, 0)], False
    while work:
        key = work.pop()
        pc, it_left = key
        insn = thumb.decode(code, base, pc, end)
        if insn is None:
            continue
        regs = dict(states[key])
        before = dict(regs)
        if trace is not None:
            flow = thumb.step(regs, insn, word, conditional=it_left > 0, loads=loads,
                              memory=trace.memory(memory), stores=trace.stores)
            if flow.kind == thumb.CALL:
                regs[0] = trace.mark(RETURNED, pc, flow.target)
        else:
            flow = thumb.step(regs, insn, word, conditional=it_left > 0, loads=loads, memory=memory)
        succ = []
        nxt = (pc + insn.size, max(it_left - 1, 0) if not flow.it else flow.it)
        if flow.kind in (thumb.CALL, thumb.JUMP, thumb.BRANCH) and flow.target in targets:
            calls[pc] = _merge(calls[pc], before) if pc in calls else before
        if flow.kind in (thumb.NEXT, thumb.CALL) or it_left:
            succ.append((nxt, regs))
        if flow.kind in (thumb.JUMP, thumb.BRANCH) and start <= flow.target < end:
            succ.append(((flow.target, 0), regs))
        if flow.kind == thumb.BRANCH and not it_left:
            succ.append((nxt, regs))
        opaque |= flow.kind == thumb.OPAQUE
        for at, state in succ:
            old = states.get(at)
            merged = dict(state) if old is None else _merge(old, state)
            if old is None or len(merged) != len(old):
                states[at] = merged
                work.append(at)
    if opaque:
        # A jump through a register or a table may land anywhere: every call in the
        # function is reported, and none of its registers is known.
        why = "the calling function also jumps through a register or a table"
        return [ArgValues(pc, {}, "literal pool", why) for pc in _linear_calls(code, base, start, end, targets)]
    return [ArgValues(pc, {r: v for r, v in regs.items() if r <= 3}, "literal pool")
            for pc, regs in sorted(calls.items())]


def _linear_calls(code, base, start, end, targets) -> list[int]:
    pc, out = start, []
    while (insn := thumb.decode(code, base, pc, end)) is not None:
        if insn.size == 4 and thumb.bl_target(pc, insn.hw1, insn.hw2) in targets:
            out.append(pc)
        pc += insn.size
    return out


def _function_extents(image, lo: int, hi: int) -> list[tuple[int, int]]:
    """[start, end) of every function (local and global) in [lo, hi): its symbol's size, or
    up to the next function when the size is 0."""
    sized: dict[int, int] = {}
    for fn in image.functions:
        if lo <= fn.address < hi:
            sized[fn.address] = max(sized.get(fn.address, 0), fn.size)
    starts = sorted(sized)
    out = []
    for k, a in enumerate(starts):
        nxt = starts[k + 1] if k + 1 < len(starts) else hi
        out.append((a, min(a + sized[a], hi) if sized[a] else nxt))
    return out


def address_taken(image, callee: str) -> int | None:
    """Where the image holds the callee's address as a word (a function pointer in data or a
    literal pool; Thumb functions' pointers have bit 0 set), outside ld's stubs to it: the one way
    left to call it that the code does not show. None when nothing holds it."""
    funcs = {s.address & ~1 for s in image.lookup(callee) if s.shndx and s.type == S.STT_FUNC}
    _, stubs = _targets(image, callee)
    elf = image.elf
    for i, sh in enumerate(elf.shdrs):
        if sh.sh_type != S.SHT_PROGBITS or not sh.sh_flags & S.SHF_ALLOC:
            continue
        data, base = elf.section_bytes(i), sh.sh_addr
        for func in funcs:
            needle = struct.pack("<I", func | 1)
            at = data.find(needle)
            while at >= 0:
                where = base + at
                if where % 4 == 0 and not any(a <= where < b for a, b in stubs):
                    return where
                at = data.find(needle, at + 1)
    return None


# -- calls with what the caller passes on ------------------------------------------------------


@dataclass(frozen=True)
class CodeCall:
    call_site: int
    target: int
    function: int               # start of the calling function
    values: dict                # r0-r3 -> the constant they hold at the call
    passed: dict                # r0-r3 -> the calling function's own argument register it holds
    loads: dict                 # the calling function's word loads at offset 0 of a
                                # constant: pc -> the address; or from its argument k at any
                                # offset: pc -> ("argument", k, offset)
    note: str = ""
    origins: dict = field(default_factory=dict)   # r0-r3 not known -> Trace.origin: a value
                                                  # a call returned or a load the reader cannot follow
    read_only: dict = field(default_factory=dict)  # r0-r3 -> (load pc, address): a constant read
                                                   # from a read-only word of the image


def calls_to(image, targets: set[int]) -> list[CodeCall]:
    """Every BL (or tail call) to one of `targets` in the image's code, with the constants in
    r0-r3, the registers that still hold the calling function's own arguments, and the word
    loads of the calling function whose base is a constant or one of its arguments."""
    elf, out = image.elf, []

    def memory(pc, address):
        return read_only_word(image, address)
    for i, sh in enumerate(elf.shdrs):
        if sh.sh_type != S.SHT_PROGBITS or not sh.sh_flags & S.SHF_EXECINSTR:
            continue
        code, base = elf.section_bytes(i), sh.sh_addr

        def word(addr, code=code, base=base):
            off = addr - base
            return struct.unpack_from("<I", code, off)[0] if 0 <= off <= len(code) - 4 else None

        sites = _branch_sites(code, base, targets)
        for start, end in _function_extents(image, base, base + len(code)):
            k = bisect.bisect_left(sites, start)
            if k == len(sites) or sites[k] >= end:
                continue
            plain_loads, seeded_loads, trace = {}, {}, Trace()
            plain = _calls_in(code, base, start, end, targets, word, loads=plain_loads,
                              memory=memory)
            seeded = {c.call_site: c for c in _calls_in(
                code, base, start, end, targets, word,
                {r: ARGUMENT_MARK + r for r in range(4)}, seeded_loads, memory, trace)}
            loads = {pc: v for pc, (v, off) in plain_loads.items() if v is not None and not off}
            loads.update({pc: ("argument", v - ARGUMENT_MARK, off)
                          for pc, (v, off) in seeded_loads.items()
                          if v is not None and 0 <= v - ARGUMENT_MARK < 4 and pc not in loads})
            for c in plain:
                insn = thumb.decode(code, base, c.call_site, end)
                target = thumb.step({}, insn, word).target if insn else None
                s = seeded.get(c.call_site)
                passed = {r: v - ARGUMENT_MARK for r, v in (s.values.items() if s else ())
                          if 0 <= v - ARGUMENT_MARK < 4}
                origins = {r: trace.origin(v) for r, v in (s.values.items() if s else ())
                           if r not in c.values and trace.origin(v)}
                read_only = {r: trace.constants[v] for r, v in c.values.items() if v in trace.constants}
                out.append(CodeCall(c.call_site, target, start, c.values, passed, loads, c.note,
                                    origins, read_only))
    return out

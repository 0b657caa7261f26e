"""What a firmware passes to a function, read from the image: `ethosu_init`'s fast memory.

`ethosu_init(drv, base_address, fast_memory, fast_memory_size, secure, privileged)`: under the
AAPCS the third and fourth arguments travel in r2 and r3. Two sources, tried in order:

1. DWARF call sites (an optimised `-g` build; GCC 12 writes DWARF 5): a DW_TAG_call_site whose
   DW_AT_call_origin is the callee has DW_TAG_call_site_parameter children; the one located
   in r2 (DW_OP_reg2) carries DW_AT_call_value, e.g. DW_OP_addr of the buffer, and r3's the
   size as a constant expression.
2. The code before the call (any build, DWARF or not): the calling function's Thumb code,
   followed along its branches from its start to the BL (weaklink.bind.consttrack), tracking the
   constants loaded into registers (LDR from the literal pool, MOVW/MOVT, MOVS/MOV.W, ADR,
   MOV between registers, arithmetic on known values). Where paths meet, a register keeps
   its value only when every path agrees; an instruction that may write a register without
   a constant makes it unknown; a function that jumps through a register or a table gives
   no value at all. A load from a read-only word of the image reads the word the image holds
   there (weaklink.bind.constmem). One scan of the code (`calls_to`) reads the calls of every
   function asked for at once: ethosu_init's and TFLM's entry points (weaklink.bind.tflmcalls).

DWARF gives an `ArgValues`, the code a `CodeCall`; a register absent from either's `values` is
"unknown" to the caller, never a guess.
"""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field

from weaklink.bind.constmem import read_only_word
from weaklink.bind.consttrack import step
from weaklink.bind.origins import ARGUMENT_MARK, RETURNED, Trace
from weaklink.read import elfstructs as S
from weaklink.read import thumb
from weaklink.read.dwarf import Dwarf

FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG = 2, 3


@dataclass(frozen=True)
class ArgValues:
    call_site: int                  # address of the BL
    values: dict                    # register number -> value (absent: unknown)
    source: str                     # "dwarf call site" | "literal pool"
    note: str = ""                  # why no register could be read, when that is known


# -- DWARF ------------------------------------------------------------------------------------
def from_dwarf(dwarf: Dwarf, callee: str) -> list[ArgValues]:
    """The register arguments of every call site of `callee` that DWARF describes (the units
    that name it, see weaklink.read.dwarf); corrupt DWARF is one InputError (DwarfError)."""
    return [ArgValues(site.call_pc, {reg: v for reg, v in site.values.items() if v is not None},
                      "dwarf call site") for site in dwarf.call_sites(callee)]


# -- Thumb code -------------------------------------------------------------------------------
def callee_targets(image, callee: str) -> tuple[set[int], list[tuple[int, int]]]:
    """The callee's addresses, with GNU ld's long-branch stubs to it (`__callee_veneer`, a local
    function that loads the callee's address into pc): a BL to the stub is a call of the callee.
    Also the stubs' [start, end), whose literal is the callee's address but no function pointer."""
    stubs = [s for s in image.lookup(f"__{callee}_veneer") if s.shndx]
    targets = {s.address & ~1 for s in image.lookup(callee) if s.shndx}
    return targets | {s.address & ~1 for s in stubs}, [(s.address & ~1, (s.address & ~1) + max(s.size, 8))
                                                        for s in stubs]


def _merge(old: dict, new: dict) -> dict:
    """Where two paths meet, a register is known only when both give it the same value."""
    return {r: v for r, v in old.items() if new.get(r) == v}


def _calls_in(code, base, start, end, targets, word, seed=None, loads=None, memory=None,
              trace: Trace | None = None, decoded: dict | None = None) -> list[ArgValues]:
    """Every call of a target in the function [start, end): the constants in r0-r3 on every
    path that reaches it (a forward dataflow over the function's branches, to a fixpoint).
    `seed`: the registers' values at the function's entry; `loads` gets the function's word
    loads (consttrack.step); `memory(pc, address)`: the word a load from a constant address reads
    when the image says it. `trace`: where the values the code computes come from (markers for
    what a call returns and what a load reads, see Trace). `decoded`: pc -> instruction, kept
    across the calls on one section (the dataflow visits an instruction once per new state)."""
    decoded = {} if decoded is None else decoded
    states: dict[tuple[int, int], dict] = {(start, 0): dict(seed or {})}
    calls: dict[int, dict] = {}
    work, opaque = [(start, 0)], False
    while work:
        key = work.pop()
        pc, it_left = key
        if pc not in decoded:
            decoded[pc] = thumb.at(code, base, pc)
        insn = decoded[pc]
        if insn is None or pc + insn.size > end:
            continue
        regs = dict(states[key])
        before = dict(regs)
        if trace is not None:
            step(regs, insn, word, conditional=it_left > 0, loads=loads, memory=trace.memory(memory),
                 stores=trace.stores)
            if insn.op == "bl":                  # what the callee returns (a BLX's callee is unknown)
                regs[0] = trace.mark(RETURNED, pc, insn.target)
        else:
            step(regs, insn, word, conditional=it_left > 0, loads=loads, memory=memory)
        flow, succ = insn.flow, []
        nxt = (pc + insn.size, max(it_left - 1, 0) if not insn.it else insn.it)
        if flow in (thumb.CALL, thumb.JUMP, thumb.BRANCH) and insn.target in targets:
            calls[pc] = _merge(calls[pc], before) if pc in calls else before
        if flow in (thumb.NEXT, thumb.CALL) or it_left:
            succ.append((nxt, regs))
        if flow in (thumb.JUMP, thumb.BRANCH) and start <= insn.target < end:
            succ.append(((insn.target, 0), regs))
        if flow == thumb.BRANCH and not it_left:
            succ.append((nxt, regs))
        opaque |= flow == thumb.OPAQUE
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
    return [insn.pc for insn in thumb.instructions(code, base, start, end)
            if insn.op == "bl" and insn.target in targets]


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
    _, stubs = callee_targets(image, callee)
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
    seed: str = ""              # the values at the function's entry the call was read with, when
                                # the image tells them (weaklink.bind.zephyrinit)


def _word_reader(code: bytes, base: int):
    def word(addr):
        off = addr - base
        return struct.unpack_from("<I", code, off)[0] if 0 <= off <= len(code) - 4 else None
    return word


def _code_sections(image):
    elf = image.elf
    for i, sh in enumerate(elf.shdrs):
        if sh.sh_type == S.SHT_PROGBITS and sh.sh_flags & S.SHF_EXECINSTR:
            yield elf.section_bytes(i), sh.sh_addr


def read_again(image, function: int, targets: set[int], seed: dict) -> list[ArgValues]:
    """The calls of `targets` in the function that starts at `function`, read again with the
    registers' values at its entry that `seed` gives, loads from read-only words followed (for
    the few functions whose entry values the image tells, weaklink.bind.zephyrinit)."""
    for code, base in _code_sections(image):
        if base <= function < base + len(code):
            end = next((e for s, e in _function_extents(image, base, base + len(code)) if s == function), None)
            if end is None:
                return []
            return _calls_in(code, base, function, end, targets, _word_reader(code, base), seed,
                             memory=lambda pc, address: read_only_word(image, address))
    return []


def branches_to(image, targets: set[int]) -> list[int]:
    """The BLs and branches (tail calls) whose static target is one of `targets`, each checked by
    decoding the instruction there: the direct calls of a function."""
    out = []
    for code, base in _code_sections(image):
        for pc in thumb.branch_sites(code, base, targets):
            insn = thumb.at(code, base, pc)
            if insn is not None and insn.flow in (thumb.CALL, thumb.JUMP, thumb.BRANCH) and insn.target in targets:
                out.append(pc)
    return out


def calls_to(image, targets: set[int]) -> list[CodeCall]:
    """Every BL (or tail call) to one of `targets` in the image's code, with the constants in
    r0-r3, the registers that still hold the calling function's own arguments, and the word
    loads of the calling function whose base is a constant or one of its arguments."""
    out = []

    def memory(pc, address):
        return read_only_word(image, address)
    for code, base in _code_sections(image):
        word = _word_reader(code, base)
        sites, decoded = thumb.branch_sites(code, base, targets), {}
        for start, end in _function_extents(image, base, base + len(code)):
            k = bisect.bisect_left(sites, start)
            if k == len(sites) or sites[k] >= end:
                continue
            plain_loads, seeded_loads, trace = {}, {}, Trace()
            plain = _calls_in(code, base, start, end, targets, word, loads=plain_loads,
                              memory=memory, decoded=decoded)
            seeded = {c.call_site: c for c in _calls_in(
                code, base, start, end, targets, word,
                {r: ARGUMENT_MARK + r for r in range(4)}, seeded_loads, memory, trace, decoded)}
            loads = {pc: v for pc, (v, off) in plain_loads.items() if v is not None and not off}
            loads.update({pc: ("argument", v - ARGUMENT_MARK, off)
                          for pc, (v, off) in seeded_loads.items()
                          if v is not None and 0 <= v - ARGUMENT_MARK < 4 and pc not in loads})
            for c in plain:
                insn = decoded.get(c.call_site) or thumb.at(code, base, c.call_site, end)
                target = insn.target if insn else None
                s = seeded.get(c.call_site)
                passed = {r: v - ARGUMENT_MARK for r, v in (s.values.items() if s else ())
                          if 0 <= v - ARGUMENT_MARK < 4}
                origins = {r: trace.origin(v) for r, v in (s.values.items() if s else ())
                           if r not in c.values and trace.origin(v)}
                read_only = {r: trace.constants[v] for r, v in c.values.items() if v in trace.constants}
                out.append(CodeCall(c.call_site, target, start, c.values, passed, loads, c.note,
                                    origins, read_only))
    return out

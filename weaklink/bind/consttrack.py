"""Constant tracking over Thumb code: which core registers hold a known 32-bit value, one
decoded instruction (weaklink.read.thumb) at a time.

`step(regs, insn, word, conditional)` updates `regs` (register number -> known value) for one
instruction. The rule is never to guess: an instruction writes a register either with a value
computed from known constants (MOVS/MOV.W/MOVW/MOVT, LDR from the literal pool, ADR, MOV
between registers, add/subtract/shift of known values) or the register becomes unknown; what
the decoder does not decode makes every register unknown. A call (BL, BLX) leaves r0-r3, r12
and lr unknown (AAPCS: they do not survive a call), a supervisor call r0-r3 and r12 (the
handler may return values in them).
"""
from __future__ import annotations

from typing import Callable

from weaklink.read.thumb import LR, MASK, PC, SP, Insn
from weaklink.read.thumb.insn import signed

CALL_CLOBBERS = (0, 1, 2, 3, 12, LR)
SVC_CLOBBERS = (0, 1, 2, 3, 12)


class State:
    """A register file of known constants; `conditional` (inside an IT block) keeps a written
    register only when the new value equals the old, since the write may not happen."""

    def __init__(self, regs: dict, conditional: bool, loads: dict | None = None,
                 memory=None, stores: dict | None = None):
        self.regs, self.conditional, self.loads = regs, conditional, loads
        self.memory, self.stores = memory, stores

    def load(self, pc: int, rn: int, offset: int) -> int | None:
        """Note a word load from [Rn, #offset]; the word `memory(address)` says it holds, or None."""
        base = self.regs.get(rn)
        if self.loads is not None:
            self.loads[pc] = (base, offset)
        if self.memory is None or base is None:
            return None
        return self.memory(pc, (base + offset) & MASK)

    def store(self, pc: int, rt: int, rn: int, offset: int) -> None:
        """Note a word store of Rt to [Rn, #offset]: address -> the value, None when two
        stores disagree or the value is not known."""
        base = self.regs.get(rn)
        if self.stores is None or base is None:
            return
        address, value = (base + offset) & MASK, self.regs.get(rt)
        self.stores[address] = value if self.stores.get(address, value) == value else None

    def set(self, r: int, value: int | None) -> None:
        # sp is never a constant the code shows: every push, pop and stack adjustment moves it
        if value is None or r == SP or (self.conditional and self.regs.get(r) != value & MASK):
            self.regs.pop(r, None)
        else:
            self.regs[r] = value & MASK


def step(regs: dict, insn: Insn, word: Callable[[int], int | None],
         conditional: bool = False, loads: dict | None = None, memory=None,
         stores: dict | None = None) -> Insn:
    """Apply one instruction to `regs`; `word(address)` reads a literal (None: unknown).
    `loads` (optional) gets, per LDR (immediate) of a word, pc -> (base register's value or
    None, offset): where the code reads memory. `memory(pc, address)` (optional) gives the word
    a load from a known address reads (a constant of the image), or None; `stores` gets, per
    STR of a word to a known address, address -> the value stored (None: not known)."""
    st = State(regs, conditional, loads, memory, stores)
    values = _values(st, insn, word)            # from the registers before the instruction
    writes = insn.writes
    if insn.op in ("bl", "blx"):
        writes = CALL_CLOBBERS
    elif insn.op == "svc":
        writes = SVC_CLOBBERS
    for r in writes:
        st.set(r, values.get(r))
    return insn


def _values(st: State, insn: Insn, word) -> dict:
    """The registers the instruction sets to a value known from the constants before it."""
    op, rd, regs = insn.op, insn.rd, st.regs
    other = insn.imm if insn.rm is None else (insn.pc + 4 if insn.rm == PC else regs.get(insn.rm))
    if op in ("mov", "movw"):
        return {rd: other}
    if op == "mvn":
        return {rd: ~insn.imm}
    if op == "movt":                                       # keeps the low half
        low = regs.get(rd)
        return {rd: None if low is None else (low & 0xFFFF) | insn.imm << 16}
    if op in ("add", "sub"):
        return {rd: arith(regs.get(insn.rn), other, op == "sub")}
    if op == "adr":
        return {rd: insn.address}
    if op in ("lsl", "lsr", "asr"):
        return {rd: shift(other, ("lsl", "lsr", "asr").index(op), insn.imm)}
    a = insn.access
    if a is None or a.size != 4 or a.multiple:
        return {}
    if insn.address is not None:                           # LDR/LDRD from the literal pool
        return {r: word(insn.address + 4 * k) for k, r in enumerate(a.registers)}
    if len(a.registers) == 1 and a.index is None and a.add and a.pre and not a.writeback:
        if a.load and rd != PC:                            # LDR Rt, [Rn, #imm]
            return {rd: st.load(insn.pc, a.base, a.offset)}
        if not a.load:                                     # STR Rt, [Rn, #imm]
            st.store(insn.pc, rd, a.base, a.offset)
    return {}


def arith(a: int | None, b: int | None, sub: bool) -> int | None:
    if a is None or b is None:
        return None
    return (a - b if sub else a + b) & MASK


def shift(value: int | None, kind: int, amount: int) -> int | None:
    """LSL/LSR/ASR by an immediate (kind 0/1/2; amount 0 means 32 for LSR and ASR)."""
    if value is None:
        return None
    if kind == 0:
        return (value << amount) & MASK
    amount = amount or 32
    if kind == 1:
        return value >> amount if amount < 32 else 0
    return (signed(value, 32) >> min(amount, 31)) & MASK

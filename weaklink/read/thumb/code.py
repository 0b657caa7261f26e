"""Thumb code as a sequence of instructions: the instruction at an address, a linear decode of
a span, where instructions start, and the branch sites of a whole section at once."""
from __future__ import annotations

from typing import Iterator

import numpy as np

from weaklink.read.thumb.insn import Insn, is_wide
from weaklink.read.thumb.narrow import narrow
from weaklink.read.thumb.wide import wide


def decode(hw1: int, hw2: int, pc: int) -> Insn:
    """The instruction at `pc` whose first halfword is `hw1` (`hw2`, the next one, is read only
    when `hw1` starts a 32-bit encoding)."""
    return wide(hw1, hw2, pc) if is_wide(hw1) else narrow(hw1, pc)


def at(code: bytes, base: int, pc: int, end: int | None = None) -> Insn | None:
    """The instruction at `pc` in `code` (which starts at `base`); None when it does not fit
    below `end` (default: the end of `code`)."""
    off = pc - base
    limit = len(code) if end is None else min(len(code), end - base)
    if off < 0 or off + 2 > limit:
        return None
    hw1 = code[off] | code[off + 1] << 8
    if not is_wide(hw1):
        return narrow(hw1, pc)
    if off + 4 > limit:
        return None
    return wide(hw1, code[off + 2] | code[off + 3] << 8, pc)


def instructions(code: bytes, base: int, start: int, end: int) -> Iterator[Insn]:
    """A linear decode of [start, end): each instruction follows the one before it (the same
    instructions as `at`, one after the other, read without its checks)."""
    off, limit = start - base, min(len(code), end - base)
    if off < 0:
        return
    while off + 2 <= limit:
        hw1 = code[off] | code[off + 1] << 8
        if not is_wide(hw1):
            insn = narrow(hw1, base + off)
        elif off + 4 <= limit:
            insn = wide(hw1, code[off + 2] | code[off + 3] << 8, base + off)
        else:
            return
        yield insn
        off += insn.size


def starts_instruction(code: bytes, lo: int, at: int) -> bool:
    """Whether a linear decode of `code` from offset `lo` reaches offset `at` as an instruction
    start. A halfword that is not a 32-bit encoding's first is followed by an instruction start
    whatever it is itself (an instruction, or a 32-bit one's second half); so counting back
    over the run of first-halfword-looking ones before `at`: an even count is a start."""
    run = 0
    while at - 2 * (run + 1) >= lo and is_wide(code[at - 2 * run - 2] | code[at - 2 * run - 1] << 8):
        run += 1
    return run % 2 == 0


def branch_sites(code: bytes, base: int, targets: set[int]) -> list[int]:
    """Every halfword position whose bytes encode a branch or call with a static target in
    `targets` (BL, B.W, B<c>.W, B, B<c>, CBZ/CBNZ): a superset of the real ones, since a
    position inside another instruction may match too; the targets are the decoder's
    (weaklink.read.thumb.insn.branch24 / branch20, narrow's B and CBZ), computed for the
    whole section at once with numpy."""
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
    found = [(pc, np.select([h2 & 0x9000 == 0x9000, (h2 & 0xD000 == 0x8000) & ((h >> 6) & 0xF < 0xE)],
                            [t4, t3], -1))]
    k = np.flatnonzero(top == 0b11100)                     # B (T2)
    imm, pc = raw[k].astype(np.int64) & 0x7FF, base + 2 * k.astype(np.int64)
    found.append((pc, pc + 4 + 2 * (imm - ((imm >> 10) << 11))))
    k = np.flatnonzero((raw >> 12 == 0xD) & ((raw >> 8) & 0xF < 0xE))   # B<c> (T1), not UDF/SVC
    imm, pc = raw[k].astype(np.int64) & 0xFF, base + 2 * k.astype(np.int64)
    found.append((pc, pc + 4 + 2 * (imm - ((imm >> 7) << 8))))
    k = np.flatnonzero(raw & 0xF500 == 0xB100)            # CBZ, CBNZ
    h, pc = raw[k].astype(np.int64), base + 2 * k.astype(np.int64)
    found.append((pc, pc + 4 + (((h >> 9) & 1) << 6 | ((h >> 3) & 0x1F) << 1)))
    want = np.sort(np.fromiter(targets, np.int64))

    def member(t):              # t in want, without sorting t
        t = np.where(t == -1, -1, t & 0xFFFFFFFF)
        return want[np.minimum(np.searchsorted(want, t), len(want) - 1)] == t
    hits = [pc[member(t)] for pc, t in found]
    return sorted(np.concatenate(hits).tolist())

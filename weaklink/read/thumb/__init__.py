"""The Thumb decoder (Armv7-M, Armv8-M mainline and Armv8.1-M: what GCC emits for Cortex-M0 to
M55): every 16- and 32-bit encoding to one `Insn` record (its class, registers and immediate,
the registers it writes, where control goes, a PC-relative address, a load or store's
`Access`). Its users: the constant tracking of weaklink.bind.consttrack, the code references
of weaklink.bind.coderefs, the call sites of weaklink.bind.callsite, the stopped load/store
of weaklink.run.loadstore, the WFE/WFI and spin discovery of weaklink.run.irq and run.spin.
Tested against arm-none-eabi-objdump (tests/read/test_thumb_objdump.py)."""
from __future__ import annotations

from weaklink.read.thumb.code import at, branch_sites, decode, instructions, starts_instruction
from weaklink.read.thumb.encode import movw_movt
from weaklink.read.thumb.insn import (ALL, BRANCH, CALL, JUMP, LR, MASK, NEXT, OPAQUE, PC, RETURN,
                                      SP, STOP, Access, Insn, is_wide)

__all__ = ["at", "branch_sites", "decode", "instructions", "starts_instruction", "movw_movt",
           "ALL", "BRANCH", "CALL", "JUMP", "LR", "MASK", "NEXT", "OPAQUE", "PC", "RETURN", "SP",
           "STOP", "Access", "Insn", "is_wide"]

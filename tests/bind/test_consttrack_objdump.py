"""The constant tracking (weaklink.bind.consttrack) against objdump on real code: newlib's C
library for Cortex-M55 (tens of thousands of instructions gcc and hand-written assembly
produced), linked into one image.

For every instruction objdump disassembles, with every register holding a known value before
it, the registers the tracking changes or forgets are the ones the instruction writes by
objdump's operands (widths and targets are the decoder's, tests/read): a store, compare or
branch none (a store's base with writeback, and a call's r0-r3/r12/lr, excepted); a load,
move or data-processing instruction its destination(s). sp is never tracked, so its writes are
not compared; an instruction whose result equals its input (`movs r0, r0`) keeps its value."""
from __future__ import annotations

import re

import pytest

from weaklink import toolchain
from weaklink.bind.consttrack import step
from weaklink.read import thumb
from weaklink.read.elf import ElfFile

REG = {f"r{i}": i for i in range(13)} | {"sb": 9, "sl": 10, "fp": 11, "ip": 12, "sp": 13,
                                          "lr": 14, "pc": 15}
LINE = re.compile(r"^[ \t]*([0-9a-f]+):\t([0-9a-f]{4})(?: ([0-9a-f]{4}))?[ \t]*\t(\S+)[ \t]*(.*)$", re.M)
COND = r"(?:eq|ne|cs|cc|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|hs|lo|al)?"
# instructions that write no core register (besides a base with writeback and sp), any condition
NO_WRITE = re.compile(r"^(?:str|strb|strh|strd|strt|strbt|strht|push|stm|stmia|stmdb|stmea|cmp|"
                      r"cmn|tst|teq|b|bx|cbz|cbnz|it[te]*|nop|vstr|vpush|vstmia|vstmdb|vpop|"
                      r"vldmia|vldr|dmb|dsb|isb|pld|pli|msr|cpsid|cpsie|sev|wfe|wfi|yield|udf|"
                      r"vcmp|vcmpe|vmsr|lctp|tbb|tbh|vmov|vadd|vsub|vmul|vdiv|vneg|vabs|vsqrt|"
                      rf"vfm[as]|vfnm[as]|vml[as]|vnml[as]|vnmul|vcvt[a-z]*|vsel[a-z]*|vmaxnm|vminnm|vrint[a-z]*)"
                      rf"{COND}$")
SEED = {r: 0x5A000000 + r * 0x1111 for r in range(16)}


@pytest.fixture(scope="module")
def libc(cross_toolchain, tmp_path_factory):
    d = tmp_path_factory.mktemp("libc")
    archive = toolchain.run("gcc", [*toolchain.CPU_FLAGS, "-print-file-name=libc.a"]).stdout.strip()
    done = toolchain.run("ld", ["-r", "--whole-archive", archive, "-o", "libc.o"], cwd=d)
    assert done.returncode == 0, done.stderr
    done = toolchain.run("ld", ["--unresolved-symbols=ignore-all", "-e", "0", "-Ttext=0x10000000",
                                "libc.o", "-o", "libc.elf"], cwd=d)
    assert done.returncode == 0, done.stderr
    listing = toolchain.run("objdump", ["-d", "libc.elf"], cwd=d).stdout
    return ElfFile.from_path(d / "libc.elf"), listing


def _writes(mnem: str, ops: str) -> set[int] | None:
    """The core registers objdump's operands say the instruction writes (None: not judged)."""
    stem = mnem.split(".")[0]
    toks = [t.strip() for t in re.split(r",(?![^{]*})", ops)] if ops else []
    base = re.search(r"\[(\w+)", ops)
    writeback = "!" in ops or re.search(r"\], #", ops)
    out = set()
    if writeback and base and base.group(1) in REG:
        out.add(REG[base.group(1)])
    if re.match(rf"^(?:ldm|ldmia|ldmdb|ldmfd|pop){COND}$", stem):
        for part in re.search(r"\{([^}]*)\}", ops).group(1).split(","):
            first, _, last = part.strip().partition("-")
            out |= set(range(REG[first], REG[last or first] + 1))
        if toks[0].endswith("!"):
            out.add(REG[toks[0].rstrip("!")])
        return out
    if re.match(rf"^blx?{COND}$", stem):
        return out | {0, 1, 2, 3, 12, 14}
    if re.match(rf"^svc{COND}$", stem):
        return {0, 1, 2, 3, 12}
    if re.match(r"^(stm|stmia|stmdb|vstm|vldm)", stem) and toks and toks[0].endswith("!"):
        out.add(REG[toks[0].rstrip("!")])
    if re.match(rf"^strex[bhd]?{COND}$", stem):
        out.add(REG[toks[0]])
    if stem in ("dls", "wls", "le", "letp", "dlstp", "wlstp"):
        return {14}
    if re.match(rf"^vmov{COND}$", stem) and len(toks) >= 2 and toks[0] in REG:
        return out | {REG[t] for t in toks[:2] if t in REG}
    if NO_WRITE.match(stem):
        return out
    if re.match(rf"^(?:ldrd|ldrexd|umull|smull|umlal|smlal){COND}$", stem):
        return out | {REG[toks[0]], REG[toks[1]]}
    if toks and toks[0].rstrip("!") in REG:
        return out | {REG[toks[0].rstrip("!")]}
    return None


def test_written_registers_agree_with_objdump(libc):
    elf, listing = libc
    names = {elf.section_name(i): i for i in range(len(elf.shdrs))}
    count, wrong = 0, []
    for part in listing.split("\nDisassembly of section ")[1:]:
        i = names[part.split(":", 1)[0]]
        code, base = elf.section_bytes(i), elf.shdrs[i].sh_addr
        for m in LINE.finditer(part):
            address, mnem = int(m.group(1), 16), m.group(4)
            ops = m.group(5).split("\t@")[0].split(";")[0].strip()
            if mnem.startswith("."):
                continue
            insn = thumb.at(code, base, address)
            count += 1
            regs = dict(SEED)
            step(regs, insn, lambda a: None)
            writes = _writes(mnem, ops)
            if writes is None:
                continue
            changed = {r for r in range(16) if regs.get(r) != SEED[r]} - {13, 15}
            identity = re.match(r"^(\w+), \1$", ops) or ops.endswith(", #0") or ops.endswith("#0")
            if changed - writes or (writes - {13, 15} - changed and not identity):
                wrong.append((hex(address), mnem, ops, sorted(changed), sorted(writes)))
    assert count > 50000
    assert not wrong, wrong[:10]

"""The Thumb decoder (weaklink.read.thumb) against arm-none-eabi-objdump -d, on real code:
newlib's C library for Cortex-M0 (Armv6-M), M4 (Armv7E-M with FP), M55 (its Armv8-M mainline
multilib, with double-precision FP) and Armv8.1-M with MVE, each linked whole into one image
(tens of thousands of instructions gcc and hand-written assembly produced); and, when they are
on this machine, the real firmware images under $WEAKLINK_REAL_FW (its zephyr/out/zephyr.elf,
himax/out/*/*.elf and alif/out/*/*.elf: Zephyr, Himax WE2, Alif Ensemble builds; CI does not
have them).

For every instruction objdump disassembles: the same width; for every branch, the same target;
for every PC-relative load and ADR, the same address; for IT, the same number of conditional
instructions; for every load and store of core registers, the same transfer (direction, size,
sign, registers, base, offset or index, indexing, writeback, block direction)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from weaklink import toolchain
from weaklink.read import thumb
from weaklink.read.elf import ElfFile
from weaklink.run.irq import WAITS
from weaklink.fvp.semihost import BKPT_SEMIHOSTING

NEWLIB = {"cortex-m0": ["-mcpu=cortex-m0"],
          "cortex-m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard"],
          "cortex-m55": ["-mcpu=cortex-m55", "-mfloat-abi=hard"],
          "armv8.1-m.main+mve": ["-march=armv8.1-m.main+mve", "-mfloat-abi=hard"]}
REAL_FW = Path(os.environ.get("WEAKLINK_REAL_FW", ""))
REAL = sorted(p for pattern in ("zephyr/out/zephyr.elf", "himax/out/*/*.elf", "alif/out/*/*.elf")
              for p in REAL_FW.glob(pattern)) if os.environ.get("WEAKLINK_REAL_FW") else []

LINE = re.compile(r"^[ \t]*([0-9a-f]+):\t([0-9a-f]{4})(?: ([0-9a-f]{4}))?[ \t]*\t(\S+)[ \t]*(.*)$", re.M)
COND = r"(?:eq|ne|cs|cc|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|hs|lo|al)?"
BRANCH = re.compile(rf"^(?:b{COND}|bl|cbz|cbnz|le|letp|wls|wlstp)$")
REG = {f"r{i}": i for i in range(13)} | {"sb": 9, "sl": 10, "fp": 11, "ip": 12, "sp": 13,
                                          "lr": 14, "pc": 15}
SINGLE = re.compile(rf"^(ld|st)r(s?[bh]|d)?t?{COND}$")
MULTIPLE = re.compile(rf"^(ldm|stm|push|pop)(ia|db|fd|ea)?{COND}$")
ADDRESS = re.compile(r"\[(\w+)(?:, (#-?\d+|\w+)(?:, lsl #(\d))?)?\](!)?(?:, #(-?\d+))?$")


def _listing(elf: Path) -> str:
    return subprocess.run([toolchain.tool("objdump"), "-d", str(elf)], capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module", params=sorted(NEWLIB))
def newlib(request, cross_toolchain, tmp_path_factory):
    flags = ["-mthumb", *NEWLIB[request.param]]
    d = tmp_path_factory.mktemp(request.param)
    archive = toolchain.run("gcc", [*flags, "-print-file-name=libc.a"]).stdout.strip()
    done = toolchain.run("ld", ["-r", "--whole-archive", archive, "-o", "libc.o"], cwd=d)
    assert done.returncode == 0, done.stderr
    done = toolchain.run("ld", ["--unresolved-symbols=ignore-all", "-e", "0", "-Ttext=0x10000000",
                                "libc.o", "-o", "libc.elf"], cwd=d)
    assert done.returncode == 0, done.stderr
    return ElfFile.from_path(d / "libc.elf"), _listing(d / "libc.elf")


def _lines(elf: ElfFile, listing: str):
    """(code, base, address, width, mnemonic, operands, comment) of every instruction listed."""
    names = {name: i for i, name in enumerate(elf.section_names)}
    for part in listing.split("\nDisassembly of section ")[1:]:
        i = names[part.split(":", 1)[0]]
        code, base = elf.section_bytes(i), elf.shdrs[i].sh_addr
        for m in LINE.finditer(part):
            if not m.group(4).startswith("."):
                ops, _, comment = m.group(5).partition("\t@")
                yield (code, base, int(m.group(1), 16), 4 if m.group(3) else 2, m.group(4),
                       ops.split(";")[0].strip(), comment)


def _registers(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        out += range(REG[first], REG[last or first] + 1)
    return tuple(out)


def _transfer(stem: str, ops: str) -> tuple | None:
    """What objdump's operands say a load or store of core registers transfers: (load, size,
    signed, registers, base, offset, index, shift, add, pre, writeback, multiple, decrement)."""
    if m := MULTIPLE.match(stem):
        if m.group(1) in ("push", "pop"):
            regs = _registers(re.search(r"\{([^}]*)\}", ops).group(1))
            push = m.group(1) == "push"
            return not push, 4, False, regs, 13, 0, None, 0, True, False, True, True, push
        b = re.match(r"(\w+)(!)?, \{([^}]*)\}", ops)
        return (m.group(1) == "ldm", 4, False, _registers(b.group(3)), REG[b.group(1)], 0, None, 0,
                True, False, bool(b.group(2)), True, m.group(2) in ("db", "ea"))
    if not (m := SINGLE.match(stem)):
        return None
    dual = m.group(2) == "d"
    toks = [t.strip() for t in ops.split(",", 2 if dual else 1)]
    regs = (REG[toks[0]], REG[toks[1]]) if dual else (REG[toks[0]],)
    base, off, lsl, bang, post = ADDRESS.search(ops).groups()
    offset, index, shift, add, pre = 0, None, 0, True, True
    if off and off.startswith("#"):
        offset, add = abs(int(off[1:])), not off[1:].startswith("-")
    elif off:
        index, shift = REG[off], int(lsl or 0)
    if post is not None:
        offset, add, pre = abs(int(post)), not post.startswith("-"), False
    size = {None: 4, "d": 4, "b": 1, "h": 2, "sb": 1, "sh": 2}[m.group(2)]
    return (m.group(1) == "ld", size, "s" in (m.group(2) or ""), regs, REG[base], offset, index,
            shift, add, pre, bool(bang) or post is not None, False, False)


def disagreements(elf: ElfFile, listing: str) -> tuple[int, list]:
    """(instructions compared, those where the decoder and objdump disagree)."""
    count, wrong = 0, []
    for code, base, address, width, mnem, ops, comment in _lines(elf, listing):
        insn = thumb.at(code, base, address)
        count += 1
        stem = mnem.split(".")[0]
        if insn is None or insn.size != width:
            wrong.append((hex(address), mnem, ops, "width"))
            continue
        target = re.search(r"([0-9a-f]+) <[^>]*>$", ops)
        if BRANCH.match(stem) and target and insn.target != int(target.group(1), 16):
            wrong.append((hex(address), mnem, ops, f"target {insn.target}"))
        pc_relative = re.search(r"\[pc|\bpc, #", ops)
        if stem in ("addw", "subw") and pc_relative:       # objdump notes the immediate
            if (insn.op, insn.imm) != ("adr", int(comment.strip(), 16)):
                wrong.append((hex(address), mnem, ops, f"adr {insn.op} {insn.imm}"))
        elif pc_relative and (noted := re.search(r"\(?(?:adr \w+, )?([0-9a-f]+) <", comment)):
            if insn.address != int(noted.group(1), 16):
                wrong.append((hex(address), mnem, ops, f"address {insn.address}"))
        elif insn.address is not None:
            wrong.append((hex(address), mnem, ops, f"address {insn.address} not PC-relative"))
        if re.match(r"^it[te]{0,3}$", stem) and insn.it != len(stem) - 1:
            wrong.append((hex(address), mnem, ops, f"it {insn.it}"))
        want, a = _transfer(stem, ops), insn.access
        got = a and (a.load, a.size, a.signed, a.registers, a.base, a.offset, a.index, a.shift,
                     a.add or not a.offset, a.pre, a.writeback, a.multiple, a.decrement)
        if got != want or (a and insn.op != ("load" if a.load else "store")):
            wrong.append((hex(address), mnem, ops, got, want))
    return count, wrong


def test_newlib_agrees_with_objdump(newlib):
    count, wrong = disagreements(*newlib)
    assert count > 50000
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("image", REAL or [None],
                         ids=[str(p.relative_to(REAL_FW)) for p in REAL] or ["absent"])
def test_real_images_agree_with_objdump(cross_toolchain, image):
    if image is None:
        pytest.skip("no real firmware images: WEAKLINK_REAL_FW names no directory holding "
                    "zephyr/out, himax/out or alif/out")
    count, wrong = disagreements(ElfFile.from_path(image), _listing(image))
    assert count > 5000
    assert not wrong, wrong[:10]


FAR = """
    .syntax unified
    .thumb
    .global _start
    .type _start, %function
back:
    nop
    .space 0x90000
_start:
    beq.w back
    bne.w ahead
    b.w back
    bl ahead
    bl back
    .space 0x90000
ahead:
    bx lr
"""


def test_far_branches_agree_with_objdump(cross_toolchain, tmp_path):
    """Branches over more than 256 KB, where the J1 and J2 bits of B<c>.W, B.W and BL count."""
    (tmp_path / "far.s").write_text(FAR)
    done = toolchain.run("gcc", ["-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x10000000",
                                 "far.s", "-o", "far.elf"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    elf, listing = ElfFile.from_path(tmp_path / "far.elf"), _listing(tmp_path / "far.elf")
    count, wrong = disagreements(elf, listing)
    assert count == 7 and not wrong, wrong
    assert unfound_branches(elf, listing) == (5, set())


def unfound_branches(elf: ElfFile, listing: str) -> tuple[int, set]:
    """(branches with a static target, those the vectorised branch scan misses)."""
    sections: dict[int, tuple[bytes, list]] = {}
    for code, base, address, *_ in _lines(elf, listing):
        insn = thumb.at(code, base, address)
        if insn.flow in (thumb.JUMP, thumb.BRANCH, thumb.CALL) and insn.target is not None:
            sections.setdefault(base, (code, []))[1].append(insn)
    count, missed = 0, set()
    for base, (code, found) in sections.items():
        sites = set(thumb.branch_sites(code, base, {i.target for i in found}))
        wanted = {i.pc for i in found if i.op != "loop"}       # the loops are no call sites
        count, missed = count + len(wanted), missed | (wanted - sites)
    return count, missed


def test_branch_sites_hold_every_branch_to_the_targets(newlib):
    """The vectorised branch scan finds every branch the decoder decodes to a static target."""
    count, missed = unfound_branches(*newlib)
    assert count > 5000 and not missed


def test_instruction_starts_are_objdumps(newlib):
    """Counted back from any halfword to the start of its run of code (after data, objdump's
    `.word`), the start of each instruction is one and its second half is not."""
    elf, listing = newlib
    names = {name: i for i, name in enumerate(elf.section_names)}
    count = 0
    for part in listing.split("\nDisassembly of section ")[1:]:
        i = names[part.split(":", 1)[0]]
        code, base, lo, end = elf.section_bytes(i), elf.shdrs[i].sh_addr, None, None
        for m in LINE.finditer(part):
            address = int(m.group(1), 16)
            if m.group(4).startswith("."):
                lo = None
                continue
            if lo is None or address != end:
                lo = address - base
            end = address + (4 if m.group(3) else 2)
            assert thumb.starts_instruction(code, lo, address - base), hex(address)
            if m.group(3):
                assert not thumb.starts_instruction(code, lo, address - base + 2), hex(address)
            count += 1
    assert count > 50000


def test_encodings_named_elsewhere_decode_to_their_names():
    """The byte patterns run.irq and fvp.semihost search for are the instructions they name."""
    for pattern, kind in {**WAITS, **BKPT_SEMIHOSTING}.items():
        insn = thumb.at(pattern, 0, 0)
        assert insn.size == len(pattern) and f"{insn.op} {insn.imm:#x}".startswith(kind)


def test_movw_movt_decode_to_the_value():
    for rd, value in ((0, 0xE000E204), (1, 0x01000000), (12, 0xFFFF0001)):
        code = thumb.movw_movt(rd, value)
        movw, movt = thumb.at(code, 0, 0), thumb.at(code, 0, 4)
        assert (movw.op, movw.rd, movt.op, movt.rd) == ("movw", rd, "movt", rd)
        assert movt.imm << 16 | movw.imm == value

"""The real ld.lld as the oracle for the lld model: run it, read what it said and what it
linked, and list every way the model differs.

Compared: exit status; errors as (kind, symbol) (lld's wording is parsed back into the kinds
the model uses); the --why-extract file, in order; --warn-backrefs warnings; and the defining
file of every global symbol, read back from the linked image: the model names the file and
the place (section, offset) of the winning definition, and the bytes there must be the bytes
the image holds at the symbol (a symbol in .bss or COMMON is checked by size, an absolute one
by value). Scenarios that give every definition distinct contents make this exact.
"""
from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from weaklink.demangle import demangle
from weaklink.errors import ToolchainMissing
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile
from weaklink.resolve.lld import rules as R
from weaklink.resolve.lld.diagnostics import relocation_sites
from weaklink.toolchain import which
from weaklink.resolve.result import (LINKER_SYMBOL_REDEFINED, MULTIPLE_DEFINITION,
                                     UNDEFINED_REFERENCE, LinkResult)

LLD_NAMES = ("ld.lld-16", "ld.lld", "/usr/lib/llvm-16/bin/ld.lld")
_HEAD = re.compile(r"^(?:\S*ld\.lld(?:-\d+)?|ld\.lld): (error|warning): (.*)$")
_KINDS = ((re.compile(r"^undefined symbol: (.+)$"), UNDEFINED_REFERENCE),
          (re.compile(r"^relocation refers to a symbol in a discarded section: (.+)$"),
           UNDEFINED_REFERENCE),
          (re.compile(r"^duplicate symbol: (.+)$"), MULTIPLE_DEFINITION),
          (re.compile(r"^.+ cannot redefine linker defined symbol '(.+)'$"),
           LINKER_SYMBOL_REDEFINED))
_BACKREF = re.compile(r"^backward reference detected: (\S+) in (.+) refers to (.+)$")
_ENTRY = re.compile(r"^cannot find entry symbol (\S+); not setting start address$")


def lld_path() -> str:
    return which(*LLD_NAMES, install="apt-get install lld-16")


def available() -> bool:
    try:
        lld_path()
        return True
    except ToolchainMissing:
        return False


@dataclass(frozen=True)
class LldDiag:
    severity: str       # error | warning
    kind: str           # undefined-reference | multiple-definition | backward-reference | ...
    symbol: str
    message: str        # the whole message with its ">>>" lines, without the program prefix


@dataclass
class LldRun:
    """What ld.lld did."""
    returncode: int
    stderr: str
    diags: tuple[LldDiag, ...]
    why_extract: list | None          # [(reference, member, symbol)], None when not written
    image: Path | None

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def errors(self) -> list[LldDiag]:
        return [d for d in self.diags if d.severity == "error"]

    @property
    def warnings(self) -> list[LldDiag]:
        return [d for d in self.diags if d.severity == "warning"]

    @cached_property
    def elf(self) -> ElfFile | None:
        linked = self.image is not None and self.image.exists()
        return ElfFile.from_path(self.image) if linked else None


def parse_stderr(text: str) -> tuple[LldDiag, ...]:
    blocks: list[list] = []
    for line in text.splitlines():
        m = _HEAD.match(line)
        if m:
            blocks.append([m.group(1), m.group(2)])
        elif line.startswith(">>>") and blocks:
            blocks[-1][1] += "\n" + line
    out = []
    for severity, msg in blocks:
        first = msg.split("\n", 1)[0]
        kind, sym = "other", ""
        for rx, k in _KINDS:
            if m := rx.match(first):
                kind, sym = k, m.group(1)
                break
        else:
            if m := _BACKREF.match(first):
                kind, sym = "backward-reference", m.group(1)
            elif m := _ENTRY.match(first):
                kind, sym = "entry-not-found", m.group(1)
        out.append(LldDiag(severity, kind, sym, msg))
    return tuple(out)


def parse_why_extract(text: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in text.splitlines()[1:]:
        if line:
            ref, member, sym = line.split("\t")
            rows.append((ref, member, sym))
    return rows


def run_lld(args: list[str], cwd: str | Path, extra: tuple[str, ...] = ()) -> LldRun:
    """Link with ld.lld --why-extract --error-limit=0 --threads=1 (diagnostics in a fixed
    order); the image is out.elf in `cwd`. Compare with differences(demangled=True) unless
    ARGS say --no-demangle."""
    cwd = Path(cwd)
    why, out = cwd / "why.txt", cwd / "out.elf"
    why.unlink(missing_ok=True)
    out.unlink(missing_ok=True)
    argv = [lld_path(), f"--why-extract={why.name}", "--error-limit=0", "--threads=1",
            "-o", out.name, *extra, *args]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    rows = parse_why_extract(why.read_text()) if why.exists() else None
    return LldRun(proc.returncode, proc.stderr, parse_stderr(proc.stderr), rows,
                  out if proc.returncode == 0 else None)


# -- comparison --------------------------------------------------------------------------------
def _image_symbols(elf: ElfFile) -> dict[str, tuple[int, int, int, int]]:
    """Global and weak symbols of the image: name -> (binding, value, size, shndx)."""
    return {elf.symbol_name(k): (info >> 4, value, size, shndx)
            for k, (_, value, size, info, _, shndx) in enumerate(elf.symbol_entries)
            if info >> 4 != S.STB_LOCAL}


def _image_bytes(elf: ElfFile, address: int, n: int) -> bytes | None:
    for i, sh in enumerate(elf.shdrs):
        if sh.sh_flags & S.SHF_ALLOC and sh.sh_addr <= address < sh.sh_addr + sh.sh_size:
            if sh.sh_type == S.SHT_NOBITS:
                return None
            off = sh.sh_offset + address - sh.sh_addr
            return elf.data[off:off + n]
    return None


def _relocated(obj, shndx: int, start: int, n: int) -> set[int]:
    """Byte positions in [start, start + n) that a relocation patches (4 bytes each on ARM:
    data words, BL/B.W pairs, MOVW/MOVT): the linker rewrites them, so they are not compared."""
    out = set()
    for target, offsets, _ in relocation_sites(obj):
        if target == shndx:
            out.update(k - start for off in offsets for k in range(off, off + 4)
                       if start <= k < start + n)
    return out


def definition_mismatches(model: LinkResult, state, elf: ElfFile) -> list[str]:
    """Every global the image defines, checked against the model's winner (see module doc)."""
    image = _image_symbols(elf)
    out = []
    for name, (bind, value, size, shndx) in image.items():
        if shndx == S.SHN_UNDEF:
            info = model.symbols.get(name)
            if info is None or not info.binding.startswith("undefined"):
                out.append(f"{name}: image undefined, model {info}")
            continue
        sym = state.table.syms.get(name)
        if sym is None or sym.kind not in (R.DEFINED, R.COMMON) or \
                model.symbols[name].binding == "undefined":
            out.append(f"{name}: image defines it, model {model.symbols.get(name)}")
            continue
        if (bind == S.STB_WEAK) != (sym.kind == R.DEFINED and sym.weak):
            out.append(f"{name}: image binding {bind}, model weak={sym.weak}")
        if sym.kind == R.DEFINED and not (sym.absolute or sym.script) and size != sym.size:
            out.append(f"{name}: image size {size}, model {sym.size} from "
                       f"{model.symbols[name].file}")
        if sym.script == R.SCRIPT_EXPR:          # a script expression: value not modelled
            continue
        if sym.kind == R.COMMON or shndx == S.SHN_ABS or sym.absolute or sym.script:
            want = (sym.size,) if sym.kind == R.COMMON else (sym.value,)
            got = (size,) if sym.kind == R.COMMON else (value,)
            if want != got:
                out.append(f"{name}: image {got}, model {want} from {model.symbols[name].file}")
            continue
        obj = state.files[sym.file].obj
        n = min(int(sym.size) or 4, 16)
        if obj.elf.shdrs[sym.shndx].sh_type == S.SHT_NOBITS:
            continue
        start = sym.value & ~1
        want = obj.elf.section_bytes(sym.shndx)[start:start + n]
        got = _image_bytes(elf, value & ~1, n)
        patched = _relocated(obj, sym.shndx, start, n)
        if got is not None and any(a != b for k, (a, b) in enumerate(zip(got, want))
                                   if k not in patched):
            out.append(f"{name}: image bytes {got.hex()} are not {model.symbols[name].file}'s "
                       f"{want.hex()}")
    return out


def recorded_run(returncode: int, stderr: str, why_extract: str | Path | None,
                 image: str | Path | None) -> LldRun:
    """An LldRun from a link that already happened (exit status, stderr, its files)."""
    why = Path(why_extract) if why_extract else None
    rows = parse_why_extract(why.read_text()) if why is not None and why.exists() else None
    return LldRun(returncode, stderr, parse_stderr(stderr), rows,
                  Path(image) if image and returncode == 0 else None)


def differences(model: LinkResult, run: LldRun, state=None, *, messages: bool = False,
                demangled: bool = True, ordered: bool = True) -> list[str]:
    """Differences between the model and ld.lld; [] when they agree. `messages` compares the
    whole error texts too, in order unless `ordered=False` (lld ran with its default parallel
    scan). `demangled`: lld ran without --no-demangle (C++ names in messages demangled)."""
    name = demangle if demangled else (lambda n: n)
    diffs = []
    if model.ok != run.ok:
        diffs.append(f"ok: model {model.ok}, lld {run.ok}")
    mine = Counter((e.kind, name(e.symbol)) for e in model.errors)
    theirs = Counter((e.kind, e.symbol) for e in run.errors)
    if mine != theirs:
        diffs.append(f"errors: model {sorted(mine.elements())}, lld {sorted(theirs.elements())}")
    elif messages:
        a = [e.message for e in model.errors]
        b = [e.message for e in run.errors]
        if not ordered:
            a, b = sorted(a), sorted(b)
        if a != b:
            diffs.append(f"messages: model {a}, lld {b}")
    if run.why_extract is not None:
        got = [(x.file or "<internal>", x.member, x.symbol) for x in model.extracted]
        if got != run.why_extract:
            diffs.append(f"extracted: model {got}, lld {run.why_extract}")
    w_mine = sorted(w.message for w in model.warnings if w.kind == "backward-reference")
    w_lld = sorted(w.message for w in run.warnings if w.kind == "backward-reference")
    if w_mine != w_lld:
        diffs.append(f"backrefs: model {w_mine}, lld {w_lld}")
    if run.ok and state is not None and run.elf is not None:
        diffs += definition_mismatches(model, state, run.elf)
    return diffs

"""The real arm-none-eabi-ld as the oracle: how a modelled link is compared with a real one.

`differences(model, ld)` lists every way the model's LinkResult differs from what ld did:
exit status, errors (kind, symbol, file), extracted members in order, commons, the --cref
table and the defining file of every symbol. The differential tests and `weaklink demo` both
use it. ld demangles C++ names in its messages and its map unless given --no-demangle;
`demangled=True` compares the model's raw names in that form.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from weaklink.demangle import demangle_many
from weaklink.read.ldmap import parse_map
from weaklink.read.linkmap import LinkMap
from weaklink.resolve.result import (DISCARDED_SECTION, MULTIPLE_DEFINITION, REQUIRED_UNDEFINED,
                                     UNDEFINED_REFERENCE, LinkResult)

_PREFIX = r"^(?:\S*ld(?:\.bfd)?: )?"
_IN_FUNCTION = re.compile(_PREFIX + r"(.+?): in function `.*':$")
_MORE = re.compile(_PREFIX + r"(?:(.+?):\(.*\): )?more undefined references to `([^']+)' follow")
_REQUIRED = re.compile(_PREFIX + r"required symbol `([^']+)' not defined")
_TRACE = re.compile(_PREFIX + r"(.+): (reference to|definition of) (\S+)$")
# ld names a site by its source file (STT_FILE or line info) after "OBJ: in function" lines
_SOURCE = re.compile(r"\.(?:c|cc|cpp|cxx|C|s|S|asm)$")
_DISCARDED = re.compile(_PREFIX + r"`(.+)' referenced in section `.*' of (.+): defined in "
                        r"discarded section `.*' of .+$")
_GC = re.compile(_PREFIX + r"removing unused section '(.*)' in file '(.*)'$")


@dataclass(frozen=True)
class LdRun:
    """What the real ld did: exit status, diagnostics as (kind, symbol, file), map, -y lines."""
    returncode: int
    stderr: str
    errors: frozenset[tuple[str, str, str | None]]
    map: LinkMap
    trace: tuple[str, ...]
    # (symbol, file) of "more undefined references to `x' follow": ld stops listing a symbol's
    # sites after 5 in a row (ldmain.c MAX_ERRORS_IN_A_ROW), so later files go unnamed
    more: frozenset[tuple[str, str | None]] = frozenset()
    collected: tuple[tuple[str, str], ...] = ()     # --print-gc-sections: (file, section)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def parse_ld_stderr(text: str) -> tuple[frozenset, tuple[str, ...], frozenset]:
    """ld's error lines → {(kind, symbol, file)}; -y lines → ("FILE: reference to SYM", ...);
    and the (symbol, file) pairs of "more undefined references to `x' follow"."""
    errors, trace, more, pending = set(), [], set(), None
    for line in text.splitlines():
        if m := _IN_FUNCTION.match(line):
            pending = m.group(1)
            continue
        if m := _MORE.match(line):
            more.add((m.group(2), m.group(1)))
        elif m := _REQUIRED.match(line):
            errors.add((REQUIRED_UNDEFINED, m.group(1), None))
        elif m := _DISCARDED.match(line):
            errors.add((DISCARDED_SECTION, m.group(1), m.group(2)))
        elif ": warning: undefined reference to `" in line:
            continue                 # --warn-unresolved-symbols: a warning, not an error
        elif "undefined reference to `" in line or "multiple definition of `" in line:
            kind = UNDEFINED_REFERENCE if "undefined reference" in line else MULTIPLE_DEFINITION
            sym = re.search(r"(?:undefined reference to|multiple definition of) `([^']+)'",
                            line).group(1)
            head = re.sub(_PREFIX, "", line.split(": undefined reference")[0]
                          .split(": multiple definition")[0])
            file = re.match(r"(.+?):\(", head)
            if file and not (pending and _SOURCE.search(file.group(1))):
                pending = file.group(1)  # later sites in the same function omit the file
            errors.add((kind, sym, pending))
        elif m := _TRACE.match(line):
            trace.append(f"{m.group(1)}: {m.group(2)} {m.group(3)}")
    return frozenset(errors), tuple(trace), frozenset(more)


def parse_gc_lines(text: str) -> tuple[tuple[str, str], ...]:
    """--print-gc-sections lines → ((file, section), ...) in ld's order."""
    return tuple((m.group(2), m.group(1)) for line in text.splitlines()
                 if (m := _GC.match(line)))


def recorded_run(returncode: int, stderr: str, map_path: str | Path | None):
    """An LdRun from a link that already happened (its exit status, stderr and map file)."""
    errors, trace, more = parse_ld_stderr(stderr)
    path = Path(map_path) if map_path else None
    lmap = parse_map(path) if path is not None and path.exists() and path.stat().st_size else LinkMap()
    return LdRun(returncode, stderr, errors, lmap, trace, more, parse_gc_lines(stderr))


def differences(model: LinkResult, ld, *, demangled: bool = False, args: list[str] = ()) -> list[str]:
    """Differences between the model and the real ld; [] when they agree."""
    name = lambda s: s  # noqa: E731
    if demangled:
        name = demangle_many([*(e.symbol for e in model.errors), *(x.symbol for x in model.extracted),
                              *model.symbols, *model.cref]).__getitem__
    diffs = []
    if model.ok != ld.ok:
        diffs.append(f"ok: model {model.ok}, ld {ld.ok}")
    mine = {(e.kind, name(e.symbol), e.file) for e in model.errors}
    cut = {sym for sym, _ in ld.more}           # ld lists only the first 5 sites in a row
    exact_mine = {e for e in mine if not (e[0] == UNDEFINED_REFERENCE and e[1] in cut)}
    exact_ld = {e for e in ld.errors if not (e[0] == UNDEFINED_REFERENCE and e[1] in cut)}
    shown = {e for e in ld.errors if e not in exact_ld} | \
        {(UNDEFINED_REFERENCE, sym, f) for sym, f in ld.more}
    if exact_mine != exact_ld or not shown <= mine:
        diffs.append(f"errors: model {sorted(mine, key=str)}, ld {sorted(ld.errors, key=str)}"
                     f" (+ more follow: {sorted(ld.more, key=str)})")
    got = [(x.member, x.file, name(x.symbol)) for x in model.extracted]
    want = [(x.member, x.file, x.symbol) for x in ld.map.archive_members]
    if got != want:
        diffs.append(f"extracted: model {got}, ld {want}")
    commons = {c.symbol: (c.file, c.size) for c in ld.map.commons}
    mine_c = {name(n): (s.file, s.size) for n, s in model.symbols.items() if s.binding == "common"}
    if mine_c != commons:
        diffs.append(f"commons: model {mine_c}, ld {commons}")
    mine_gc = tuple((c.file, c.section) for c in model.collected)
    if mine_gc != ld.collected:
        diffs.append(f"collected: model {list(mine_gc)}, ld {list(ld.collected)}")
    if model.trace != ld.trace:
        diffs.append(f"-y trace: model {model.trace}, ld {ld.trace}")
    cref = {name(k): v for k, v in model.cref.items()}
    if cref != ld.map.cref:
        diffs.append(f"cref: model {cref}, ld {ld.map.cref}")
    muldef = {e.symbol for e in model.errors if e.kind == "multiple-definition"}
    for sym, info in model.symbols.items():
        if info.binding in ("global", "weak", "absolute") and sym not in muldef \
                and "-z" not in args:
            first = ld.map.cref.get(name(sym), (None,))[0]
            if first != info.file and info.file is not None:
                diffs.append(f"definition of {sym}: model {info.file}, ld {first}")
    return diffs

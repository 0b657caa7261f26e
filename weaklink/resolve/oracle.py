"""The real arm-none-eabi-ld as the oracle: how a modelled link is compared with a real one.

`differences(model, ld)` lists every way the model's LinkResult differs from what ld did:
exit status, errors (kind, symbol, file), extracted members in order, commons, the --cref
table and the defining file of every symbol. The differential tests and `weaklink demo` both
use it. ld demangles C++ names in its messages and its map unless given --no-demangle;
`demangled=True` compares the model's raw names in that form.
"""
from __future__ import annotations

from pathlib import Path

from weaklink.demangle import demangle
from weaklink.read.ldmap import LinkMap, parse_map
from weaklink.resolve.result import UNDEFINED_REFERENCE, LinkResult


def recorded_run(returncode: int, stderr: str, map_path: str | Path | None):
    """An LdRun from a link that already happened (its exit status, stderr and map file)."""
    from weaklink.scenario import LdRun, parse_ld_stderr

    errors, trace, more = parse_ld_stderr(stderr)
    path = Path(map_path) if map_path else None
    lmap = parse_map(path) if path is not None and path.exists() and path.stat().st_size else LinkMap()
    return LdRun(returncode, stderr, errors, lmap, trace, more)


def differences(model: LinkResult, ld, *, demangled: bool = False, args: list[str] = ()) -> list[str]:
    """Differences between the model and the real ld; [] when they agree."""
    name = demangle if demangled else (lambda s: s)
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

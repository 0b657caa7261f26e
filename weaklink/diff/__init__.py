"""`weaklink diff`: what changed in the resolution and placement of symbols between two linked
firmware images, and a CI gate on it.

`diff(old, new, ...)` returns one DiffReport. The passes, in order:

1. analyze both images (weaklink.analyze: symbol table, regions, findings);
2. match their defined globals by name and compare the columns (weaklink.diff.columns);
3. compare the defining compilation unit (DWARF, else map) of every symbol in small images
   (up to DEFINER_ALL_BELOW globals); in bigger ones, of the first MAX_ATTRIBUTED symbols
   that changed in some other way or were named with --symbol (one DWARF/map lookup each);
4. the analyze fields before and after, for each changed symbol only;
5. findings of NEW that OLD did not have (`new_findings`) and the reverse (`fixed_findings`);
6. with check options: both NPU checks, the base-address tables and the verdicts;
7. gates (--fail-on).

What "changed" means. Binding, definer, section, region, size, value and pointer target are
compared for every symbol and always reported. A pure address move is not: code that grows
shifts every symbol placed after it, and listing each would drown the change that matters. Moves
are counted (`moved`, with the most common shift) and listed only for the symbols named with
--symbol (kind `address-changed`). A pointer whose value changed only because its target moved
(same symbol, same offset) is a move too, not a value change.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from weaklink.analyze import analyze_image, query
from weaklink.analyze.attribution import Attribution
from weaklink.check import check_image
from weaklink.analyze.findings import weak_finding
from weaklink.diff.columns import Columns, columns, compare
from weaklink.diff.sides import Sides
from weaklink.diff.comparison import (GATES, KINDS, BaseChange, Change, DiffReport, Moved,
                                  failed_gates)
from weaklink.errors import UsageError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.rules import WEAK_DEFAULT_SURVIVED, Finding
from weaklink.read.ldmap import parse_map

DEFINER_ALL_BELOW = 4096   # images up to this many globals: compare every symbol's definer
MAX_ATTRIBUTED = 64        # bigger images: symbols per side given a defining unit (DWARF/map)


def _side(path, map_path, board):
    """One image and its map, each read once: the analysis and its compared columns."""
    link_map = parse_map(map_path) if map_path else None
    report = analyze_image(Image.from_path(str(path)), link_map, board=board)
    return report, columns(report), link_map


def diff(old_path: str, new_path: str, *, map_old: str | None = None, map_new: str | None = None,
         board: str | None = None, symbols: Sequence[str] = (), check_options: dict | None = None,
         fail_on: Sequence[str] = ()) -> DiffReport:
    fail_on = _gates(fail_on, check_options)
    # OLD first: a bad OLD input is reported before a bad NEW one
    old, a, map_a = _side(old_path, map_old, board)
    new, b, map_b = _side(new_path, map_new, board)
    cmp = compare(a, b)
    att_old, att_new = Attribution(old.table.image, map_a), Attribution(new.table.image, map_b)

    asked = set(symbols)
    kinds = dict(cmp.kinds)
    kinds["definer-changed"] = _definers(old, new, a, b, cmp, att_old, att_new, asked)
    kinds["address-changed"] = cmp.moved & _asked(a, cmp.old_rows, asked)

    big = len(a) > DEFINER_ALL_BELOW or len(b) > DEFINER_ALL_BELOW
    one = Sides(old, a, att_old, MAX_ATTRIBUTED if big else len(a))
    two = Sides(new, b, att_new, MAX_ATTRIBUTED if big else len(b))
    changes = [Change(_name(b, j), "added", ("added",), None, two.query(j)) for j in cmp.added]
    changes += [Change(_name(a, i), "removed", ("removed",), one.query(i), None)
                for i in cmp.removed]
    changes += _changed(kinds, cmp, a, one, two)
    changes.sort(key=lambda c: (KINDS.index(c.kind), c.symbol))

    new_found, fixed = _findings(old, new, cmp)
    notes = []
    if big:
        notes.append(f"images of more than {DEFINER_ALL_BELOW} globals: definer-changed "
                     f"compared for at most {MAX_ATTRIBUTED} symbols with another change")
    if one.unattributed or two.unattributed:
        notes.append(f"defined_in left null for {one.unattributed + two.unattributed} "
                     f"before/after sides (at most {MAX_ATTRIBUTED} attributed per image)")
    report = DiffReport(old.file, new.file, tuple(changes), _moved(a, b, cmp), new_found, fixed,
                        queried={n: (query(old, n, att_old), query(new, n, att_new))
                                 for n in symbols}, notes=tuple(notes),
                        images={old.file: old.table.image, new.file: new.table.image})
    if check_options is not None:
        report = _with_check(report, old, new, map_a, map_b, board, check_options)
    return replace(report, fail_on=fail_on, failed=tuple(failed_gates(report, fail_on)))


def _gates(fail_on: Sequence[str], check_options) -> tuple[str, ...]:
    wanted = tuple(dict.fromkeys(g.strip() for item in fail_on for g in item.split(",")
                                 if g.strip()))
    unknown = [g for g in wanted if g not in GATES]
    if unknown:
        raise UsageError(f"--fail-on: unknown gate {', '.join(unknown)} "
                         f"(gates: {', '.join(GATES)})")
    if "verdict" in wanted and check_options is None:
        raise UsageError("--fail-on verdict needs --check with --accelerator, --system-config "
                         "and --memory-mode")
    return wanted


def _name(cols: Columns, row: int) -> str:
    return cols.name(row).decode("utf-8", "replace")


def _asked(cols: Columns, rows: np.ndarray, asked: set[str]) -> np.ndarray:
    if not asked:
        return np.zeros(len(rows), bool)
    wanted = {n.encode() for n in asked}
    return np.array([cols.name(i) in wanted for i in rows.tolist()], bool)


def _definers(old, new, a: Columns, b: Columns, cmp, att_old, att_new, asked) -> np.ndarray:
    """definer-changed over the matched pairs: both units known and different. Checked for
    every pair in small images, else for the pairs with another change or asked for, at most
    MAX_ATTRIBUTED of them (attribution reads DWARF or the map per symbol)."""
    n = len(cmp.old_rows)
    out = np.zeros(n, bool)
    if n <= DEFINER_ALL_BELOW:
        todo = np.arange(n)
    else:
        some = np.zeros(n, bool)
        for v in cmp.kinds.values():
            some |= v
        some |= _asked(a, cmp.old_rows, asked)
        todo = np.flatnonzero(some)[:MAX_ATTRIBUTED]
    oc = old.table.cols
    io, jn = np.asarray(oc.index), np.asarray(new.table.cols.index)
    # Linker-script symbols (__bss_start: NOTYPE, size 0) have no defining unit, only a place.
    size, stype = np.asarray(oc.size), np.asarray(oc.type)
    real = (size[cmp.old_rows[todo]] > 0) & (stype[cmp.old_rows[todo]] != S.STT_NOTYPE)
    for k in todo[real].tolist():
        one = att_old.defined_in(old.table.image.symbol(int(io[cmp.old_rows[k]])))
        two = att_new.defined_in(new.table.image.symbol(int(jn[cmp.new_rows[k]])))
        out[k] = one is not None and two is not None and one != two
    return out


def _changed(kinds, cmp, a: Columns, one: Sides, two: Sides) -> list[Change]:
    order = [k for k in KINDS if k in kinds]
    hit = np.zeros(len(cmp.old_rows), bool)
    for k in order:
        hit |= kinds[k]
    out = []
    for p in np.flatnonzero(hit).tolist():
        name = _name(a, int(cmp.old_rows[p]))
        which = tuple(k for k in order if kinds[k][p])
        out.append(Change(name, which[0], which, one.query(int(cmp.old_rows[p])),
                          two.query(int(cmp.new_rows[p]))))
    return out


def _moved(a: Columns, b: Columns, cmp) -> Moved:
    shift = b.address[cmp.new_rows] - a.address[cmp.old_rows]
    moved = shift[shift != 0]
    if not len(moved):
        return Moved(0, None)
    values, counts = np.unique(moved, return_counts=True)
    return Moved(len(moved), int(values[np.argmax(counts)]))


def _findings(old, new, cmp) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """Findings are the same when rule and symbol are (messages hold addresses that move).
    The bulk weak-default-survived infos are compared through the name matching: a weak row
    whose partner is weak too carries the same info on both sides."""
    one = {(f.rule, f.symbol): f for f in old.findings}
    two = {(f.rule, f.symbol): f for f in new.findings}
    for report, other, partner, into in (
            (old, new, _partners(len(old.table), cmp.old_rows, cmp.new_rows), one),
            (new, old, _partners(len(new.table), cmp.new_rows, cmp.old_rows), two)):
        rows = np.asarray(report.weak_rows, np.int64)
        if not len(rows):
            continue
        weak_there = np.zeros(len(other.table) + 1, bool)      # last slot: no partner
        weak_there[np.asarray(other.weak_rows, np.int64)] = True
        only = rows[~weak_there[partner[rows]]]
        for n in report.table.names(only):
            into.setdefault((WEAK_DEFAULT_SURVIVED.id, n), weak_finding(n))
    return (tuple(f for k, f in two.items() if k not in one),
            tuple(f for k, f in one.items() if k not in two))


def _partners(n: int, mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Row → partner row on the other side, -1 (the extra last slot) when unpaired."""
    out = np.full(n, -1, np.int64)
    out[mine] = theirs
    return out


def _with_check(report: DiffReport, old, new, map_old, map_new, board, options) -> DiffReport:
    """Both NPU checks, on the images and maps the analyses read."""
    soc = options.get("soc") or board
    rest = {k: v for k, v in options.items() if k != "soc"}
    before = check_image(old.table.image, map_old, soc=soc, **rest)
    after = check_image(new.table.image, map_new, soc=soc, **rest)
    one = {(f.rule, f.symbol): f for f in before.findings}
    two = {(f.rule, f.symbol): f for f in after.findings}
    seen_new = {(f.rule, f.symbol) for f in report.new_findings}
    seen_fixed = {(f.rule, f.symbol) for f in report.fixed_findings}
    new_found = report.new_findings + tuple(f for k, f in two.items()
                                            if k not in one and k not in seen_new)
    fixed = report.fixed_findings + tuple(f for k, f in one.items()
                                          if k not in two and k not in seen_fixed)
    return replace(report, checked=True, check_before=before, check_after=after,
                   bases_changed=_bases(before, after), new_findings=new_found, fixed_findings=fixed)


def _bases(before, after) -> tuple[BaseChange, ...]:
    one = {b.region: b for b in before.table.bases}
    two = {b.region: b for b in after.table.bases}
    out = []
    for region in sorted(set(one) | set(two)):
        x, y = one.get(region), two.get(region)
        if x is None or y is None or BaseChange.facts(x) != BaseChange.facts(y):
            out.append(BaseChange(region, (x or y).name, x, y, before.fast_scratch
                                  if region == 2 else None, after.fast_scratch
                                  if region == 2 else None))
    return tuple(out)


"""Findings: what an engineer should know about an image, each under one of analyze's rules
(weaklink.rules: their ids, severities and help texts). weak-default-survived (weak_defaults),
near-miss-override (near_misses), and the --expect-* ones (pointer_outside, missing) are raised
here; override-not-extracted by weaklink.analyze.extraction. What counts as vague linkage or a
class member is weaklink.analyze.cxxlinkage's.
"""
from __future__ import annotations

from weaklink.analyze.cxxlinkage import CxxFacts
from weaklink.demangle import demangle
from weaklink.read import elfstructs as S
from weaklink.rules import (EXPECTED_SYMBOL_MISSING, NEAR_MISS_OVERRIDE, POINTER_OUTSIDE_REGION,
                            WEAK_DEFAULT_SURVIVED, Finding)


def weak_message(name: str) -> str:
    return (f"weak definition of {demangle(name)} is in the image (nm V/W): "
            "no strong definition replaced it")


def weak_finding(name: str) -> Finding:
    """The weak-default-survived info of one symbol (the bulk ones are JSON rows:
    weaklink.analyze.analysis)."""
    return WEAK_DEFAULT_SURVIVED.finding(name, weak_message(name))


def weak_defaults(table, expect_override: frozenset[str], facts: CxxFacts
                  ) -> tuple[list[int], list[Finding], dict[int, str]]:
    """(rows, warnings, vague): rows of every surviving WEAK definition that is a weak default
    (info, rendered in bulk), warnings for the ones the user said must be overridden, and the
    C++ vague-linkage rows left out (row -> reason). A weak definition keeps STB_WEAK in the
    linked .symtab, while a strong override replaces it outright. A symbol named by
    --expect-override is always checked, vague linkage or not."""
    rows = table.rows_with_binding(S.STB_WEAK)
    warnings = []
    if expect_override and rows:
        names = table.names(rows)
        hit = {k for k, n in enumerate(names) if n in expect_override}
        for k in sorted(hit):
            warnings.append(WEAK_DEFAULT_SURVIVED.finding(
                names[k], weak_message(names[k]) + ", but it must be overridden", "warning",
                expectation=True))
        rows = [r for k, r in enumerate(rows) if k not in hit]
    vague: dict[int, str] = {}
    mangled = set(table.mangled_rows) if rows else set()
    candidates = [r for r in rows if r in mangled]
    facts.prefetch(candidates)
    for r in candidates:
        if (why := facts.vague_linkage(r)) is not None:
            vague[r] = why
    if vague:
        rows = [r for r in rows if r not in vague]
    return rows, warnings, vague


def _same_kind(type_a: int, type_b: int) -> bool:
    return type_a == type_b or S.STT_NOTYPE in (type_a, type_b)


def near_misses(table, facts: CxxFacts) -> list[Finding]:
    """WEAK vs GLOBAL definitions whose demangled unqualified names match while the raw
    names differ: an `extern "C"` weak default and a namespaced C++ override are two
    different symbols to ld, so the override silently replaces nothing. Both must be of the
    same kind (object, function) or one untyped, and the pair must be a plausible override
    (CxxFacts.override_mismatch: not a class member, vague linkage, a template, or two
    functions of different signatures)."""
    c = table.cols
    if not table.rows_with_binding(S.STB_WEAK):
        return []
    weak_plain = table.rows_where(S.STB_WEAK, mangled=False)
    strong_rows = table.rows_where(S.STB_GLOBAL, mangled=True)
    pairs = []
    if weak_plain and strong_rows:
        strong_tails = table.mangled_tails_of(strong_rows)
        common = set(table.raw_names(weak_plain)).intersection(strong_tails)   # C-speed filter
        if common:
            by_weak_name = dict(zip(table.raw_names(weak_plain), weak_plain))
            pairs = [(by_weak_name[t], g) for t, g in zip(strong_tails, strong_rows) if t in common]
    weak = table.rows_where(S.STB_WEAK, mangled=True)
    if weak:
        plain = table.rows_where(S.STB_GLOBAL, mangled=False)
        mangled = strong_rows
        by_name = dict(zip(table.raw_names(plain), plain))
        weak_tails = table.mangled_tails_of(weak)
        by_tail = _pairable_by_tail(table, facts, mangled, set(weak_tails))
        for w, t in zip(weak, weak_tails):
            if (g := by_name.get(t)) is not None:
                pairs.append((w, g))
            if t in by_tail and facts.pairable(w, weak=True):
                pairs += [(w, g) for g in by_tail[t].get(facts.signature(w), ())]
    out = []
    for w, g in pairs:
        if _same_kind(c.type[w], c.type[g]) and (why := facts.override_mismatch(w, g)):
            out.append(_near_miss(table, w, g, why))
    return out


def _pairable_by_tail(table, facts: CxxFacts, rows, tails: set[bytes]
                      ) -> dict[bytes, dict[tuple, list[int]]]:
    """Strong C++ rows whose unqualified name is one of `tails` and that can be a near
    miss's strong side (CxxFacts.pairable), by unqualified name and signature. Filtering
    before pairing keeps the pairs linear: a hundred classes' `reset` methods against a
    hundred others' would otherwise make ten thousand."""
    keep = [(t, g) for t, g in zip(table.mangled_tails_of(rows), rows) if t in tails]
    facts.prefetch([g for _, g in keep])
    out: dict[bytes, dict[tuple, list[int]]] = {}
    for t, g in keep:
        if facts.pairable(g, weak=False):
            out.setdefault(t, {}).setdefault(facts.signature(g), []).append(g)
    return out


def _both(name: str) -> str:
    pretty = demangle(name)
    return name if pretty == name else f"{pretty} ({name})"


def _near_miss(table, weak_row: int, strong_row: int, why: str) -> Finding:
    weak, strong = table.names([weak_row, strong_row])
    return NEAR_MISS_OVERRIDE.finding(weak, f"weak {_both(weak)} and strong {_both(strong)} "
                                      "share an unqualified name but are different symbols to "
                                      f"ld: the strong one overrides nothing ({why})")


def pointer_outside(query, region: str) -> Finding | None:
    """--expect-region SYM=R: a pointer-sized object is checked by its value's target, any
    other symbol by its own address."""
    if query.value is not None and query.size == 4 and query.type != "func":
        target, where = query.value, (query.points_to.region if query.points_to else None)
        what = f"points to {target:#x}" + (" (null)" if target == 0 else "")
    else:
        target, where, what = query.address, query.region, f"is at {query.address:#x}"
    if where == region:
        return None
    return POINTER_OUTSIDE_REGION.finding(query.name, f"{query.name} {what}, in "
                                          f"{where or 'no known region'}, expected {region}",
                                          expectation=True)


def missing(name: str, option: str) -> Finding:
    return EXPECTED_SYMBOL_MISSING.finding(
        name, f"{name} is not defined in the image ({option} names it)", expectation=True)

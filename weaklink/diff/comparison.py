"""The diff report: one object, rendered as JSON (the diff contract, schema_version 1) and as
a table. Compute once, format many.

JSON: `changes` holds `{symbol, kind, before, after}` per changed symbol, `before`/`after` the
analyze fields (binding, defined_in, section, region, address, size, value, points_to; null for
an added or removed side); `new_findings` / `fixed_findings`; with --check `bases_changed`,
`verdict_before`, `verdict_after`; `gates`. Additions: `kinds` (every kind that applies, `kind`
is the first in KINDS order), `demangled`, `moved`, `queried`, `fast_scratch_before/after`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from npu.records import Record, to_json
from weaklink.analyze.analysis import Query
from weaklink.demangle import demangle
from weaklink.plaintext import size_text
from weaklink.rules import CHANGES, Finding

SCHEMA_VERSION = 1
# The order a symbol's kinds are listed in, most telling first (weaklink.rules). `section-changed`
# (the section changed, the region did not) and `address-changed` (--symbol only) are additions.
KINDS = tuple(r.id for r in CHANGES)
# What `before` and `after` hold of a side's Query.
SIDE = ("binding", "defined_in", "section", "region", "address", "size", "value", "points_to",
        "type")
GATES = ("new-findings", "binding-changed", "region-changed", "verdict")
GATING_SEVERITIES = ("error", "warning")     # new infos are listed, they do not fail a gate


@dataclass(frozen=True)
class Change(Record):
    symbol: str
    kind: str
    kinds: tuple[str, ...]
    before: Query | None
    after: Query | None

    JSON = ("symbol", "kind", "before=before_side", "after=after_side", "kinds", "demangled")

    @property
    def before_side(self) -> dict | None:
        return _side(self.before)

    @property
    def after_side(self) -> dict | None:
        return _side(self.after)

    @property
    def demangled(self) -> str | None:
        side = self.after or self.before
        return side.demangled if side else None


def _side(q: Query | None) -> dict | None:
    if q is None or not q.found:
        return None
    doc = to_json(q)
    return {k: doc[k] for k in SIDE}


@dataclass(frozen=True)
class Moved(Record):
    count: int               # matched symbols whose address changed
    shift: int | None        # the most common address shift among them

    JSON = ("count", "most_common_shift=shift")


@dataclass(frozen=True)
class BaseChange(Record):
    """One NPU region whose base-address table entry differs (weaklink.bind BoundBase)."""

    region: int
    name: str
    before: object | None
    after: object | None
    fast_before: object | None = None
    fast_after: object | None = None

    JSON = ("region", "name", "before=before_side", "after=after_side")

    @staticmethod
    def facts(b) -> tuple:
        sym = b.symbol
        return (b.address, b.size, sym.name if sym else None, sym.binding if sym else None)

    @property
    def before_side(self) -> dict | None:
        return _base_side(self.before, self.fast_before)

    @property
    def after_side(self) -> dict | None:
        return _base_side(self.after, self.fast_after)

    def describe(self, b, fast) -> str:
        if b is None:
            return "-"
        if b.address == 0 and b.size == 0:
            return "0/0"
        where = f" in {fast.region}" if fast is not None and fast.region else ""
        who = f" ({b.symbol.binding} {demangle(b.symbol.name)})" if b.symbol else ""
        return f"{b.address:#x}/{size_text(b.size)}{where}{who}"


def _base_side(b, fast) -> dict | None:
    """A BoundBase as the diff shows it, with the memory its fast scratch is in."""
    if b is None:
        return None
    sym = b.symbol
    return {"address": b.address, "size": b.size, "symbol": sym.name if sym else None,
            "binding": sym.binding if sym else None,
            "defined_in": sym.defined_in if sym else None,
            "memory": fast.region if fast else None, "note": b.note}


@dataclass(frozen=True)
class DiffReport(Record):
    old: str
    new: str
    changes: tuple[Change, ...]
    moved: Moved
    new_findings: tuple[Finding, ...]
    fixed_findings: tuple[Finding, ...]
    queried: dict[str, tuple[Query, Query]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()               # comparisons that were bounded, and how
    checked: bool = False
    check_before: object | None = None        # weaklink.check CheckReport
    check_after: object | None = None
    bases_changed: tuple[BaseChange, ...] = ()
    fail_on: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    images: dict = field(default_factory=dict, repr=False, compare=False)  # path -> Image read

    schema_version = SCHEMA_VERSION
    JSON = ("schema_version", "old", "new", "changes", "new_findings", "fixed_findings",
            "bases_changed=bases_json", "verdict_before", "verdict_after", "gates",
            # additions to the contract:
            "counts", "moved", "queried=queried_sides", "fast_scratch_before=check_before.fast_scratch",
            "fast_scratch_after=check_after.fast_scratch", "notes", "assumptions")

    @property
    def verdict_before(self) -> str | None:
        return self.check_before.verdict if self.check_before else None

    @property
    def verdict_after(self) -> str | None:
        return self.check_after.verdict if self.check_after else None

    @property
    def verdict_worse(self) -> bool:
        """The NPU verdict changed and NEW's is not ok (ok → hang, hang → error, ...)."""
        return (self.checked and self.verdict_before != self.verdict_after
                and self.verdict_after != "ok")

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for c in self.changes:
            for k in c.kinds:
                out[k] += 1
        return out

    @property
    def assumptions(self) -> list[str]:
        """What the verdicts before and after rest on (each check's assumptions, once)."""
        reports = (self.check_before, self.check_after) if self.checked else ()
        return list(dict.fromkeys(a for r in reports if r for a in r.assumptions))

    @property
    def bases_json(self) -> tuple[BaseChange, ...] | None:
        return self.bases_changed if self.checked else None

    @property
    def gates(self) -> dict:
        return {"fail_on": self.fail_on, "failed": self.failed}

    @property
    def queried_sides(self) -> dict:
        return {n: {"before": _side(x), "after": _side(y)} for n, (x, y) in self.queried.items()}

    def dumps(self) -> str:
        return json.dumps(to_json(self))   # compact: the C encoder (indent is pure Python)


def failed_gates(report: DiffReport, fail_on) -> list[str]:
    kinds = {k for c in report.changes for k in c.kinds}
    hit = {
        "new-findings": any(f.severity in GATING_SEVERITIES for f in report.new_findings),
        "binding-changed": "binding-changed" in kinds,
        "region-changed": "region-changed" in kinds,
        "verdict": report.verdict_worse,
    }
    return [g for g in fail_on if hit[g]]

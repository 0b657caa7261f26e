"""The analysis report: one object, rendered as JSON (issue 4 contract, schema_version 1) and
as a table (weaklink.analyze.render). Compute once, format many.

The bulk parts (every defined symbol, every surviving weak definition) stay as numpy columns
and are encoded by weaklink.analyze.jsonrows; everything else is small immutable records.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from weaklink.analyze.demangling import Merged
from weaklink.analyze.findings import SEVERITIES, WEAK_DEFAULT_SURVIVED, Finding, weak_message
from weaklink.analyze.jsonrows import Const
from weaklink.analyze.regions import RegionMap
from weaklink.analyze.symtable import SymbolTable
from weaklink.analyze.values import PointsTo

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Query:
    """One --symbol NAME: which definition won, where it lives, what it holds at reset."""

    name: str                       # as asked: raw, or demangled (`ns::x`)
    found: bool
    raw_name: str | None = None     # the .symtab name that answered
    demangled: str | None = None
    binding: str | None = None
    type: str | None = None
    address: int | None = None
    size: int | None = None
    section: str | None = None
    region: str | None = None
    value: int | None = None
    points_to: PointsTo | None = None
    defined_in: str | None = None
    segment: int | None = None      # program header index of the PT_LOAD holding it

    def to_json(self) -> dict:
        return {"found": self.found, "binding": self.binding, "address": self.address,
                "size": self.size, "section": self.section, "region": self.region,
                "value": self.value,
                "points_to": self.points_to.to_json() if self.points_to else None,
                # additions to the contract's fields:
                "type": self.type, "name": self.raw_name, "demangled": self.demangled,
                "defined_in": self.defined_in, "segment": self.segment}


@dataclass(frozen=True, slots=True)
class RegionUse:
    """Allocated sections placed in a region (like ld --print-memory-usage)."""
    used: int
    sections: tuple[tuple[str, int, int], ...]     # (name, address, size), largest first


@dataclass(frozen=True)
class AnalysisReport:
    file: str
    machine: str
    entry: int
    regions: RegionMap
    usage: dict[str, RegionUse]
    table: SymbolTable
    queried: dict[str, Query]
    findings: tuple[Finding, ...]           # errors and warnings, and infos not in weak_rows
    weak_rows: np.ndarray                   # table rows with a bulk weak-default-survived info
    defined_in: dict[int, str] = field(default_factory=dict)   # .symtab index → unit
    demangling: Merged | None = None
    notes: tuple[str, ...] = ()             # checks that could not run, and why

    @property
    def exit_code(self) -> int:
        """1 when an --expect-* expectation failed, else 0 (bad input exits 2 earlier)."""
        return 1 if any(f.expectation for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(SEVERITIES, 0)
        for f in self.findings:
            out[f.severity] += 1
        out["info"] += len(self.weak_rows)
        return out

    def weak_findings(self) -> list[Finding]:
        """The bulk weak-default-survived infos as records (for the table: call sparingly)."""
        names = self.table.names(self.weak_rows)
        return [Finding(WEAK_DEFAULT_SURVIVED, "info", n, weak_message(n)) for n in names]

    # -- JSON -----------------------------------------------------------------------------------
    def to_json(self) -> bytes:
        return b"".join(self.json_chunks())

    def json_chunks(self) -> list[bytes]:
        """The JSON document as chunks, to write without one more copy of the whole."""
        head = {
            "schema_version": SCHEMA_VERSION,
            "file": self.file, "machine": self.machine, "entry": self.entry,
            "regions": [r.to_json() for r in self.regions.regions],
            "region_source": self.regions.source,
            "notes": list(self.notes),
        }
        queried = {k: q.to_json() for k, q in self.queried.items()}
        findings = b", ".join(json.dumps(f.to_json()).encode() for f in self.findings)
        weak = self.table.json_rows(self.weak_rows, self.demangling, _weak_pieces) \
            if len(self.weak_rows) else []
        return [json.dumps(head)[:-1].encode(),
                b', "symbols": ', *self.table.json_array(self.demangling, self.defined_in),
                b', "queried": ', json.dumps(queried).encode(),
                b', "findings": [', findings, b", " if findings and weak else b"", *weak,
                b"]}\n"]


def _weak_pieces(name, demangled):
    # The same text as findings.weak_message, column by column.
    return [Const(b'{"rule": "' + WEAK_DEFAULT_SURVIVED.encode() + b'", "severity": "info", '
                  b'"symbol": "'), name, Const(b'", "message": "weak definition of '), demangled,
            Const(b' is in the image (nm V/W): no strong definition replaced it"}')]

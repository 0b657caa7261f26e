"""The analysis report: one object, rendered as JSON (the analyze contract, schema_version 1) and
as a table (weaklink.analyze.render). Compute once, format many.

The bulk parts (every defined symbol, every surviving weak definition) stay as columns and
are encoded by weaklink.analyze.jsonrows; everything else is small immutable records.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain

from npu.records import Record, to_json
from weaklink.analyze.findings import weak_finding
from weaklink.analyze.regions import RegionMap
from weaklink.analyze.symtable import GlobalSymbols
from weaklink.analyze.values import PointsTo
from weaklink.rules import SEVERITIES, WEAK_DEFAULT_SURVIVED, Finding

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Query(Record):
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

    JSON = ("found", "binding", "address", "size", "section", "region", "value", "points_to",
            # additions to the contract's fields:
            "type", "name=raw_name", "demangled", "defined_in", "segment")


@dataclass(frozen=True, slots=True)
class RegionUse:
    """Allocated sections placed in a region (like ld --print-memory-usage): bytes used, and
    the (name, address, size) of each section, largest first."""
    used: int
    sections: tuple[tuple[str, int, int], ...]


class AnalysisReport:
    def __init__(self, file: str, machine: str, entry: int, regions: RegionMap,
                 usage: dict[str, RegionUse], table: GlobalSymbols, queried: dict[str, Query],
                 findings: tuple[Finding, ...], weak_rows: list[int],
                 defined_in: dict[int, str] | None = None,
                 notes: tuple[str, ...] = (), vague: dict[int, str] | None = None):
        self.file, self.machine, self.entry = file, machine, entry
        self.regions, self.usage, self.table, self.queried = regions, usage, table, queried
        self.findings = findings            # errors and warnings, and infos not in weak_rows
        self.weak_rows = weak_rows          # table rows with a bulk weak-default-survived info
        self.defined_in = defined_in or {}  # .symtab index → unit
        self.notes = notes                  # checks that could not run, and why
        self.vague = vague or {}            # weak C++ vague-linkage rows left out -> reason

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
        return [weak_finding(n) for n in names]

    # -- JSON -----------------------------------------------------------------------------------
    def to_json(self) -> bytes:
        return b"".join(self.json_chunks())

    def json_chunks(self):
        """The JSON document as an iterator of bytes-like chunks, to write as they come: the
        `symbols` array and the weak-default findings of a large image are encoded block by
        block while earlier blocks are written. Everything that could fail is done before
        the first chunk."""
        head = {
            "schema_version": SCHEMA_VERSION,
            "file": self.file, "machine": self.machine, "entry": self.entry,
            "regions": to_json(self.regions.regions),
            "region_source": self.regions.source,
            "notes": list(self.notes),
        }
        first = json.dumps(head)[:-1].encode() + b', "symbols": '
        symbols = self.table.json_array(self.defined_in)
        queried = json.dumps(to_json(self.queried)).encode()
        findings = b", ".join(json.dumps(to_json(f)).encode() for f in self.findings)
        weak = self.table.json_rows(self.weak_rows, _WEAK_ROW) if self.weak_rows else ()
        between = b", " if findings and self.weak_rows else b""
        return chain([first], symbols,
                     [b', "queried": ', queried, b', "findings": [', findings, between],
                     weak, [b'], "vague_linkage": ', self._vague_json(), b"}\n"])

    def _vague_json(self) -> bytes:
        """The weak definitions weak-default-survived leaves out: C++ vague linkage, with
        the evidence (weaklink.analyze.cxxlinkage)."""
        rows = list(self.vague)
        names = self.table.names(rows)
        return json.dumps([{"symbol": n, "reason": self.vague[r]}
                           for n, r in zip(names, rows)]).encode()


# The same text as findings.weak_message, with the name and the demangled name filled in.
_WEAK_ROW = (b'{"rule": "' + WEAK_DEFAULT_SURVIVED.id.encode() + b'", "severity": "'
             + WEAK_DEFAULT_SURVIVED.severity.encode() + b'", '
             b'"symbol": "%s", "message": "weak definition of %s is in the image (nm V/W): '
             b'no strong definition replaced it"}')

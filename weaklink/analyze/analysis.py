"""The analysis report: one object, rendered as JSON (the analyze contract, schema_version 1) and
as a table (weaklink.analyze.render). Compute once, format many.

The bulk parts (every defined symbol, every surviving weak definition) stay as columns and
are encoded by weaklink.analyze.jsonrows; everything else is small immutable records.
"""
from __future__ import annotations

import json
from collections import namedtuple
from itertools import chain

from weaklink.analyze.findings import SEVERITIES, WEAK_DEFAULT_SURVIVED, Finding, weak_message
from weaklink.analyze.regions import RegionMap
from weaklink.analyze.symtable import GlobalSymbols

SCHEMA_VERSION = 1


_QUERY_FIELDS = (
    "name",         # as asked: raw, or demangled (`ns::x`)
    "found",
    "raw_name",     # the .symtab name that answered
    "demangled", "binding", "type", "address", "size", "section", "region", "value",
    "points_to",    # PointsTo or None
    "defined_in",
    "segment",      # program header index of the PT_LOAD holding it
)


class Query(namedtuple("Query", _QUERY_FIELDS, defaults=(None,) * (len(_QUERY_FIELDS) - 2))):
    """One --symbol NAME: which definition won, where it lives, what it holds at reset.
    (Records on the analyze path are named tuples: importing dataclasses costs more than
    analysing a small image.)"""

    __slots__ = ()

    def to_json(self) -> dict:
        return {"found": self.found, "binding": self.binding, "address": self.address,
                "size": self.size, "section": self.section, "region": self.region,
                "value": self.value,
                "points_to": self.points_to.to_json() if self.points_to else None,
                # additions to the contract's fields:
                "type": self.type, "name": self.raw_name, "demangled": self.demangled,
                "defined_in": self.defined_in, "segment": self.segment}


class RegionUse(namedtuple("RegionUse", "used sections")):
    """Allocated sections placed in a region (like ld --print-memory-usage): bytes used, and
    the (name, address, size) of each section, largest first."""

    __slots__ = ()


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
        return [Finding(WEAK_DEFAULT_SURVIVED, "info", n, weak_message(n)) for n in names]

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
            "regions": [r.to_json() for r in self.regions.regions],
            "region_source": self.regions.source,
            "notes": list(self.notes),
        }
        first = json.dumps(head)[:-1].encode() + b', "symbols": '
        symbols = self.table.json_array(self.defined_in)
        queried = json.dumps({k: q.to_json() for k, q in self.queried.items()}).encode()
        findings = b", ".join(json.dumps(f.to_json()).encode() for f in self.findings)
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
_WEAK_ROW = (b'{"rule": "' + WEAK_DEFAULT_SURVIVED.encode() + b'", "severity": "info", '
             b'"symbol": "%s", "message": "weak definition of %s is in the image (nm V/W): '
             b'no strong definition replaced it"}')

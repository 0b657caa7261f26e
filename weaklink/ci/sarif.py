"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) for weaklink's results.

One run per invocation; `tool.driver.rules` lists one rule per finding kind the command can
report, each with a help text; every result names its rule by id and index (SARIF 2.1.0,
sections 3.27.5 and 3.27.6).
A result is located at the source line that defines its symbol when DWARF tells it, else at
the ELF image; the symbol is also a logical location. Paths under the working directory are
relative to the `%SRCROOT%` base id (what code-scanning services resolve against the
repository root); others are absolute file URIs.
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from weaklink.rules import RULES

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
SRCROOT = "%SRCROOT%"


def artifact_location(path: str, root: str) -> dict:
    full = os.path.abspath(path)
    rel = os.path.relpath(full, root)
    if not rel.startswith(".."):
        return {"uri": quote(Path(rel).as_posix()), "uriBaseId": SRCROOT}
    return {"uri": Path(full).as_uri()}


def sarif_log(results, rules: dict, locations: dict, version: str) -> dict:
    """`rules`: id → Rule (weaklink.rules), the command's; `locations`: (image, symbol) →
    SourceLocation for the results that have one."""
    rules = dict(rules)
    for r in results:            # a rule of another command's still gets its entry
        rules.setdefault(r.rule, RULES[r.rule])
    ids = list(rules)
    root = os.path.abspath(os.getcwd())
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "weaklink", "version": version,
                "rules": [_rule(rules[i]) for i in ids]}},
            "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri() + "/"}},
            "results": [_result(r, ids, locations.get((r.image, r.symbol)), root)
                        for r in results],
        }],
    }


def _rule(rule) -> dict:
    return {"id": rule.id, "name": "".join(w.capitalize() for w in rule.id.split("-")),
            "shortDescription": {"text": rule.short},
            "fullDescription": {"text": rule.help},
            "help": {"text": rule.help},
            "defaultConfiguration": {"level": rule.level}}


def _result(r, ids: list[str], where, root: str) -> dict:
    if where is not None:
        physical = {"artifactLocation": artifact_location(where.file, root),
                    "region": {"startLine": max(where.line, 1)}}
    else:
        physical = {"artifactLocation": artifact_location(r.image, root)}
    location = {"physicalLocation": physical}
    if r.symbol:
        location["logicalLocations"] = [{"name": r.symbol}]
    out = {"ruleId": r.rule, "ruleIndex": ids.index(r.rule), "level": r.level,
           "message": {"text": r.message}, "locations": [location]}
    if r.symbol:
        out["partialFingerprints"] = {"weaklinkSymbol/v1": f"{r.rule}:{r.symbol}"}
    return out

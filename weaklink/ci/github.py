"""GitHub Actions workflow commands for weaklink's results: `::error file=F,line=L,title=T::M`.

Escaping follows the runner's workflow-command rules: in the message `%`, `\r` and `\n` become
`%25`, `%0D`, `%0A`; in a property value `:` and `,` also become `%3A` and `%2C` (they separate
properties). Errors and warnings are annotated; notes (infos) are not, GitHub shows only a few
annotations per step and they would bury the ones that matter.
"""
from __future__ import annotations

import os

COMMANDS = {"error": "error", "warning": "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(results, locations: dict, root: str | None = None) -> list[str]:
    root = os.path.abspath(root or os.getcwd())
    out = []
    for r in results:
        command = COMMANDS.get(r.level)
        if command is None:
            continue
        where = locations.get((r.image, r.symbol))
        props = {"file": _path(where.file if where else r.image, root)}
        if where is not None:
            props["line"] = str(max(where.line, 1))
        props["title"] = f"weaklink {r.rule}" + (f" ({r.symbol})" if r.symbol else "")
        head = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
        out.append(f"::{command} {head}::{escape_data(r.message)}")
    return out


def _path(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel.startswith("..") else rel

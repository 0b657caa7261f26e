"""ld.lld 16 symbol resolution, modelled: `link(args)` predicts what ld.lld decides for ELF32
ARM, in the same LinkResult (flavor "lld") as the GNU ld model.

read (archive, objfile) → lld.cmdline → lld.driver (lld.rules) → lld.outcome → LinkResult.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence

from weaklink.resolve.lld import cmdline
from weaklink.resolve.lld.driver import LldLinker, LldState
from weaklink.resolve.lld.outcome import build, why_extract_text
from weaklink.resolve.nogc import no_gc
from weaklink.resolve.result import LinkResult

# An extraction parses its member at once, and that member's references extract in turn:
# chains through many archives recurse that deep.
RECURSION = 20000


def link(args: Sequence[str], *, cwd: str | None = None) -> LinkResult:
    """Model `ld.lld ARGS`. Relative paths are opened from `cwd` and named as given.

    Raises UsageError for an unknown option, InputError for a missing or corrupt input."""
    return resolve(args, cwd=cwd)[1]


def resolve(args: Sequence[str], *, cwd: str | None = None) -> tuple[LldState, LinkResult]:
    """link(), also returning the driver's state (for the oracle and explanations)."""
    opts = cmdline.parse(list(map(str, args)), cwd=None if cwd is None else str(cwd))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION))
    try:
        with no_gc():
            state = LldLinker(opts, cwd=None if cwd is None else str(cwd)).run()
            return state, build(state)
    finally:
        sys.setrecursionlimit(limit)


__all__ = ["link", "resolve", "why_extract_text"]

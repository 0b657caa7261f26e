"""ld.lld 16 symbol resolution, modelled: `link(args)` predicts what ld.lld decides for ELF32
ARM, in the same LinkResult (flavor "lld") as the GNU ld model.

read (archive, objfile) → lld.cmdline → lld.driver (lld.rules) → lld.outcome → LinkResult.
"""
from __future__ import annotations

from collections.abc import Sequence

from weaklink.resolve.lld import cmdline
from weaklink.resolve.lld.driver import LldLinker, LldState
from weaklink.resolve.lld.outcome import build, why_extract_text
from weaklink.resolve.result import LinkResult

def link(args: Sequence[str], *, cwd: str | None = None) -> LinkResult:
    """Model `ld.lld ARGS`. Relative paths are opened from `cwd` and named as given.

    Raises UsageError for an unknown option, InputError for a missing or corrupt input."""
    return resolve(args, cwd=cwd)[1]


def resolve(args: Sequence[str], *, cwd: str | None = None) -> tuple[LldState, LinkResult]:
    """link(), also returning the driver's state (for the oracle and explanations)."""
    opts = cmdline.parse(list(map(str, args)), cwd=None if cwd is None else str(cwd))
    state = LldLinker(opts, cwd=None if cwd is None else str(cwd)).run()
    return state, build(state)


__all__ = ["link", "resolve", "why_extract_text"]

"""GNU ld 2.40 symbol resolution, modelled: `link(args)` predicts what arm-none-eabi-ld decides.

read (archive, objfile) → cmdline → driver (rules) → report / explain → LinkResult.
"""
from __future__ import annotations

from collections.abc import Sequence

from weaklink.resolve import cmdline, explain, report
from weaklink.resolve.driver import Linker
from weaklink.resolve.result import LinkResult


def link(args: Sequence[str], *, cref: bool = False, trace: Sequence[str] = (),
         why_not: Sequence[str] = (), cwd: str | None = None, flavor: str = "gnu") -> LinkResult:
    """Model `arm-none-eabi-ld ARGS`. `trace` adds -y lines (also taken from -y in ARGS),
    `why_not` explains every losing definition of those symbols, `cref` fills the --cref table.
    Relative paths are opened from `cwd` (default: the process's) and named as given.
    `flavor="lld"` models ld.lld 16 instead (weaklink.resolve.lld; cref/trace/why_not are
    GNU-only).

    Raises UsageError for an unknown option, InputError for a missing or corrupt input."""
    if flavor == "lld":
        from weaklink.resolve import lld
        return lld.link(args, cwd=cwd)
    if flavor != "gnu":
        from weaklink.errors import UsageError
        raise UsageError(f"flavor {flavor!r}: expected 'gnu' or 'lld'")
    opts = cmdline.parse(list(map(str, args)))
    traced = tuple(dict.fromkeys([*opts.trace, *trace]))
    with report.no_gc():
        state = Linker(opts, watch=frozenset(why_not), cwd=None if cwd is None else str(cwd)).run()
        reasons = [w for name in why_not for w in explain.why_not(state, name)]
        return report.build(state, cref=cref, trace=traced, why_not=reasons)

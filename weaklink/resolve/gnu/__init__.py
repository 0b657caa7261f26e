"""GNU ld 2.40 symbol resolution, modelled: `link(args)` predicts what arm-none-eabi-ld decides.

read (archive, objfile, ldscript) → cmdline → driver (rules, wrap, script, default_script,
linker_defined) → gc (gcgraph) with --gc-sections → outcome / explain → LinkResult.
"""
from __future__ import annotations

from collections.abc import Sequence

from weaklink.resolve import cmdline
from weaklink.resolve.gnu import explain, gc, outcome
from weaklink.resolve.gnu.driver import Linker
from weaklink.resolve.result import LinkResult


def link(args: Sequence[str], *, cref: bool = False, trace: Sequence[str] = (),
         why_not: Sequence[str] = (), cwd: str | None = None,
         plugin: bool = False) -> LinkResult:
    """Model `arm-none-eabi-ld ARGS`. `trace` adds -y lines (also taken from -y in ARGS),
    `why_not` explains every losing definition of those symbols, `cref` fills the --cref table.
    Relative paths are opened from `cwd` (default: the process's) and named as given.

    Raises UsageError for an unknown option, InputError for a missing or corrupt input."""
    opts = cmdline.parse(list(map(str, args)), cwd=None if cwd is None else str(cwd))
    # plugin: collect2 loads the LTO plugin (compiler_driver)
    opts = opts._replace(cref=opts.cref or cref, plugin=opts.plugin or plugin)
    traced = tuple(dict.fromkeys([*opts.trace, *trace]))
    state = Linker(opts, watch=frozenset(why_not), cwd=None if cwd is None else str(cwd)).run()
    if opts.gc_sections:
        gc.collect(state)
    reasons = [w for name in why_not for w in explain.why_not(state, name)]
    return outcome.build(state, cref=cref, trace=traced, why_not=reasons)

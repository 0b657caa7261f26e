"""GNU ld 2.40 symbol resolution, modelled: `link(args)` predicts what arm-none-eabi-ld decides.

read (archive, objfile, ldscript) → cmdline (or compiler_driver for a gcc line) → driver
(rules, wrap, script, default_script) → gc (gcgraph) with --gc-sections → report / explain →
LinkResult.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from weaklink.resolve import cmdline, explain, report
from weaklink.resolve.driver import Linker
from weaklink.resolve.result import LinkResult


def link(args: Sequence[str], *, cref: bool = False, trace: Sequence[str] = (),
         why_not: Sequence[str] = (), cwd: str | None = None, plugin: bool = False,
         flavor: str = "gnu") -> LinkResult:
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
    if cref and not opts.cref:
        opts = dataclasses.replace(opts, cref=True)
    if plugin and not opts.plugin:           # collect2 loads the LTO plugin (compiler_driver)
        opts = dataclasses.replace(opts, plugin=True)
    traced = tuple(dict.fromkeys([*opts.trace, *trace]))
    with report.no_gc():
        state = Linker(opts, watch=frozenset(why_not), cwd=None if cwd is None else str(cwd)).run()
        if opts.gc_sections:
            from weaklink.resolve import gc
            gc.collect(state)
        reasons = [w for name in why_not for w in explain.why_not(state, name)]
        return report.build(state, cref=cref, trace=traced, why_not=reasons)


def link_driver(argv: Sequence[str], *, cwd: str | None = None, **kw) -> LinkResult:
    """Model the link a compiler-driver command (`arm-none-eabi-gcc ARGS…`) would run: the ld
    arguments come from `ARGS -###` (compiler_driver.py); the result's `ld_args` holds them."""
    from weaklink.resolve.compiler_driver import ld_command

    args, plugin = ld_command([str(a) for a in argv], cwd=None if cwd is None else str(cwd))
    result = link(args, cwd=cwd, plugin=plugin, **kw)
    return dataclasses.replace(result, ld_args=tuple(args))

"""Symbol resolution, modelled: `link(args, flavor=)` predicts what GNU ld 2.40 ("gnu",
weaklink.resolve.gnu) or ld.lld 16 ("lld", weaklink.resolve.lld) decides for a link.

This package holds what both linkers share: the command line (cmdline), the compiler driver's
ld line (compiler_driver), opening inputs and the archive cache (inputs), COMDAT groups
(comdat), linker scripts (script), --wrap (wrap), the --gc-sections graph (gcgraph), the
names linkers define (linker_defined) and the LinkResult (result); each linker's rules,
driver, gc, outcome and oracle live in its own package.
"""
from __future__ import annotations

from collections.abc import Sequence

from weaklink.errors import UsageError
from weaklink.resolve import gnu
from weaklink.resolve.compiler_driver import ld_command
from weaklink.resolve.result import LinkResult

__all__ = ["LinkResult", "link", "link_driver"]


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
        # imported here: the lld model's diagnostics read DWARF with numpy, which a GNU link
        # (the command's default) never needs at start-up
        from weaklink.resolve import lld
        return lld.link(args, cwd=cwd)
    if flavor != "gnu":
        raise UsageError(f"flavor {flavor!r}: expected 'gnu' or 'lld'")
    return gnu.link(args, cref=cref, trace=trace, why_not=why_not, cwd=cwd, plugin=plugin)


def link_driver(argv: Sequence[str], *, cwd: str | None = None, **kw) -> LinkResult:
    """Model the link a compiler-driver command (`arm-none-eabi-gcc ARGS…`) would run: the ld
    arguments come from `ARGS -###` (compiler_driver.py); the result's `ld_args` holds them."""
    args, plugin = ld_command([str(a) for a in argv], cwd=None if cwd is None else str(cwd))
    result = link(args, cwd=cwd, plugin=plugin, **kw)
    result.ld_args = tuple(args)
    return result

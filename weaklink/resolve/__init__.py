"""Symbol resolution, modelled: `link(args)` predicts what GNU ld 2.40 decides for a link
(weaklink.resolve.gnu), `lld.link(args)` what ld.lld 16 decides (weaklink.resolve.lld).

This package holds what both linkers share: the command line (cmdline), the compiler driver's
ld line (compiler_driver), opening inputs and the archive cache (inputs), COMDAT groups
(comdat), linker scripts (script), --wrap (wrap), the --gc-sections graph (gcgraph), the
names linkers define (linker_defined) and the LinkResult (result); each linker's rules,
driver, gc, outcome and oracle live in its own package.
"""
from __future__ import annotations

from collections.abc import Sequence

from weaklink.resolve.compiler_driver import ld_command
from weaklink.resolve.gnu import link
from weaklink.resolve.result import LinkResult

__all__ = ["LinkResult", "link", "link_driver"]


def link_driver(argv: Sequence[str], *, cwd: str | None = None, **kw) -> LinkResult:
    """Model the link a compiler-driver command (`arm-none-eabi-gcc ARGS…`) would run: the ld
    arguments come from `ARGS -###` (compiler_driver.py); the result's `ld_args` holds them."""
    args, plugin = ld_command([str(a) for a in argv], cwd=None if cwd is None else str(cwd))
    result = link(args, cwd=cwd, plugin=plugin, **kw)
    result.ld_args = tuple(args)
    return result

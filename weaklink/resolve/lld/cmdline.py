"""ld.lld's command line: the GNU-compatible part is parsed by resolve/cmdline.py (GNU ld's
option table, with --start-lib/--end-lib); the options only lld has are taken out here first.
GNU ld's options that the GNU model follows for reporting (--warn-unresolved-symbols, -w,
--noinhibit-exec, ...) are not modelled for lld and are refused."""
from __future__ import annotations

from dataclasses import dataclass

from weaklink.errors import UsageError
from weaklink.resolve import cmdline
from weaklink.resolve.cmdline import LinkOptions

DEFAULT_ERROR_LIMIT = 20        # lld: "too many errors emitted, stopping now"

# lld-only flags that change nothing the model decides.
IGNORED = frozenset({"--no-warn-backrefs", "--no-fortran-common", "--no-threads",
                     "--color-diagnostics", "--no-color-diagnostics",
                     "--color-diagnostics=never", "--color-diagnostics=always",
                     "--color-diagnostics=auto", "--no-lto-legacy-pass-manager",
                     "--apply-dynamic-relocs", "--no-apply-dynamic-relocs"})
IGNORED_VALUED = ("--threads", "--print-archive-stats", "--time-trace-file", "--image-base")
# lld 16 rejects these (GNU ld accepts them); say so rather than predict a link lld refuses.
UNKNOWN_TO_LLD = ("--require-defined",)


@dataclass(frozen=True)
class LldOptions:
    ld: LinkOptions
    why_extract: str | None = None
    warn_backrefs: bool = False
    backrefs_exclude: tuple[str, ...] = ()
    error_limit: int = DEFAULT_ERROR_LIMIT
    wrap: tuple[str, ...] = ()      # --wrap=SYM, in order, without repeats


def parse(args: list[str], cwd: str | None = None) -> LldOptions:
    args = cmdline.expand_response_files(list(map(str, args)), cwd)
    rest: list[str] = []
    why, backrefs, exclude, limit, fortran = None, False, [], DEFAULT_ERROR_LIMIT, False
    wrap: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        key = arg.split("=", 1)[0]
        if key in UNKNOWN_TO_LLD:
            raise UsageError(f"ld.lld 16 has no option '{key}' (GNU ld only)")
        if arg in IGNORED:
            i += 1
            continue
        if arg == "--warn-backrefs":
            backrefs, i = True, i + 1
            continue
        if arg == "--fortran-common":
            fortran, i = True, i + 1
            continue
        for name in ("--why-extract", "--warn-backrefs-exclude", "--error-limit", "--wrap",
                     *IGNORED_VALUED):
            value, j = cmdline.option_value(arg, args, i, (name,))
            if value is None:
                continue
            if name == "--why-extract":
                why = value
            elif name == "--warn-backrefs-exclude":
                exclude.append(value)
            elif name == "--wrap":
                wrap.append(value)
            elif name == "--error-limit":
                try:
                    limit = int(value)
                except ValueError:
                    raise UsageError(f"--error-limit: number expected, not {value!r}") from None
            i = j
            break
        else:
            rest.append(arg)
            i += 1
    if fortran:
        raise UsageError("--fortran-common is not modelled (LLVM 16 defaults to "
                         "--no-fortran-common)")
    ld = cmdline.parse(rest, lld=True, cwd=cwd)
    if ld.unresolved != "error" or ld.ignore_unresolved or ld.no_warnings or ld.noinhibit \
            or ld.fatal_warnings:
        raise UsageError("options that change how ld.lld reports unresolved symbols and "
                         "warnings (--warn-unresolved-symbols, --unresolved-symbols, -z undefs, "
                         "--ignore-unresolved-symbol, -w, --noinhibit-exec, --fatal-warnings) "
                         "are modelled for GNU ld only")
    return LldOptions(ld, why, backrefs, tuple(exclude), limit, tuple(dict.fromkeys(wrap)))

"""Predict what arm-none-eabi-ld (GNU ld 2.40) decides for a link, without linking.

`weaklink link [--json] [--symbols] [--why-extract] [--trace-symbol SYM] [--why-not SYM]
 [--] LD-ARGS…` or `… -- CC ARGS…` (a compiler-driver line: gcc, g++ or any gcc-compatible
driver; weaklink runs `CC ARGS -###` and models the ld line it prints).
Exit status: 0 the link would succeed, 1 it would fail, 2 bad input or usage.
"""
from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from weaklink.errors import UsageError
from weaklink.resolve import link, link_driver
from weaklink.resolve.compiler_driver import is_driver

EPILOG = """Exit status: 0 the link would succeed, 1 it would fail, 2 bad input or usage.
Everything after the options above is ld's own command line, or, after --, a compiler-driver
line, e.g.
  weaklink link --json -T app.ld main.o -L lib -lfoo --start-group liba.a libb.a --end-group
  weaklink link --why-not ethosu_flush_dcache -- arm-none-eabi-gcc -specs=nosys.specs \\
      -Wl,--gc-sections main.o libdrv.a -o app.elf
"loaded" lists objects and archive members in load order; "extracted" is the map's
"Archive member included to satisfy reference by file (symbol)" table (--whole-archive
members appear there as symbol "--whole-archive" with file null, as ld prints them);
"collected" lists the sections --gc-sections removes, as --print-gc-sections does; "ld_args"
is the ld line modelled for a driver line; "options_without_effect" lists the ld options
accepted as changing nothing the model decides (ld 2.40's option table:
weaklink/data/gnu_ld_options.txt; an option that changes the link in a way the model does
not follow is refused, exit 2). @FILE arguments are read as ld and gcc read them. Without -T, ld's built-in script (ld --verbose)
is used. Not modelled: shared libraries, LTO IR objects, symbol versions.
--flavor lld models ld.lld 16 (same JSON, "flavor": "lld"): "extracted" is lld's
--why-extract list in its order (file null for lld's <internal>, "--entry"/"--undefined" for
those options); lld's own options (--why-extract=FILE, --warn-backrefs, --start-lib ...) go
after --. --compare gnu,lld lists "differences": [{kind, symbol, gnu, lld, reason}]."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "link", help="predict GNU ld symbol resolution and archive extraction",
        description=__doc__.splitlines()[0], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    p.add_argument("--json", action="store_true", help="print the JSON report (schema 1)")
    p.add_argument("--symbols", action="store_true",
                   help="print the full symbol table (one row per global symbol)")
    p.add_argument("--why-extract", action="store_true",
                   help="list each extracted member, the referencing file and the symbol")
    p.add_argument("--trace-symbol", action="append", default=[], metavar="SYM",
                   help="print ld -y lines for SYM (repeatable)")
    p.add_argument("--why-not", action="append", default=[], metavar="SYM",
                   help="explain every definition of SYM that did not win (repeatable)")
    p.add_argument("--flavor", choices=("gnu", "lld"), default="gnu",
                   help="which linker to model: GNU ld 2.40 (default) or ld.lld 16; lld's own "
                   "--why-extract=FILE, --warn-backrefs go after `--` with the link's arguments")
    p.add_argument("--compare", metavar="gnu,lld",
                   help="run both models and list every difference with its reason "
                   "(exit 1 when they differ)")
    p.set_defaults(run=run, accepts_extra=True)


def _ld_args(args) -> list[str]:
    """The command line after the options, without a leading --."""
    extra = list(args.extra)
    return extra[1:] if extra[:1] == ["--"] else extra


def _model(args):
    """The LinkResult for the command line after the options: ld's, or a driver's after --."""
    rest = _ld_args(args)
    kw = {"trace": args.trace_symbol, "why_not": args.why_not}
    if args.extra[:1] == ["--"] and rest and is_driver(rest[0]):
        return link_driver(rest, **kw)
    return link(rest, **kw)


def _verdict_lines(result) -> list[str]:
    lines = [f"ld: removing unused section '{c.section}' in file '{c.file}'"
             for c in result.collected] if result.print_gc_sections else []
    lines += [f"ld: {d.file + ': ' if d.file else ''}{d.message}"
              for d in (*result.warnings, *result.errors)]
    lines.append("link would " + ("succeed" if result.ok else "FAIL"))
    return lines


def _answers(args, result) -> list[str]:
    """The answers to the questions asked, in the order of the options."""
    out = []
    if args.why_extract:
        out += ["Archive member included to satisfy reference by file (symbol)", "",
                *result.why_extract_lines(), ""]
    out += [f"ld: {line}" for line in result.trace]
    for w in result.why_not:
        out.append(f"why not {w.symbol} from {w.file}: {w.detail} [{w.reason}]")
    for name in args.why_not:
        info = result.symbols.get(name)
        if info is None:
            out.append(f"{name}: no input mentions it")
            continue
        where = f" in {info.file}" if info.file else ""
        state = "" if info.kept else ", but --gc-sections removes its section: not in the image"
        out.append(f"{name} resolves to the {info.binding} definition{where}"
                   f"{' (' + info.section + ')' if info.section else ''}{state}")
    return out


def run(args) -> int:
    """The command, with the cyclic collector paused until it is done: the model's records
    (hundreds of thousands on a large link) hold no cycles, so reference counting frees them,
    and the collector's passes over them cost a 2,000-object link a quarter of its time
    (benchmarks/bench_link.py)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if was_enabled:
            gc.enable()


def _run(args) -> int:
    if args.compare is not None:
        return _run_compare(args)
    if args.flavor == "lld":
        return _run_lld(args)
    result = _model(args)
    if args.json:
        print(result.dumps(extras=bool(args.trace_symbol or args.why_not)))
        return 0 if result.ok else 1
    asked = args.why_extract or args.trace_symbol or args.why_not
    lines = _answers(args, result) if asked else []
    if args.symbols:
        lines.append(result.table())
    elif not asked:
        lines.append(result.summary())
    if not asked and result.no_effect:
        lines.append(result.no_effect_line())
    if result.ld_args is not None and not asked:
        lines.insert(0, "ld " + " ".join(result.ld_args))
    print("\n".join([*lines, *_verdict_lines(result)]))
    return 0 if result.ok else 1


def _run_compare(args) -> int:
    from weaklink.resolve import compare, lld       # --compare: both models

    if sorted(args.compare.split(",")) != ["gnu", "lld"]:
        raise UsageError(f"--compare {args.compare!r}: only 'gnu,lld' is supported")
    ld_args = _ld_args(args)
    result = compare.compare(link(ld_args), lld.link(ld_args), ld_args)
    print(result.dumps() if args.json else result.table())
    return 0 if result.same else 1


def _run_lld(args) -> int:
    from weaklink.resolve import lld                # --flavor lld: ld.lld's model
    from weaklink.resolve.lld.cmdline import parse as parse_lld

    ld_args = _ld_args(args)
    result = lld.link(ld_args)
    why_file = parse_lld(ld_args).why_extract
    stopped = any(e.kind == "multiple-definition" for e in result.errors)
    if why_file and why_file != "-" and not stopped:       # lld writes it unless duplicates
        Path(why_file).write_text(lld.why_extract_text(result))
    if args.json:
        print(result.dumps())
        return 0 if result.ok else 1
    if args.why_extract or why_file == "-":
        sys.stdout.write(lld.why_extract_text(result))
    elif not args.trace_symbol:
        print(result.table())
    for d in (*result.warnings, *result.errors):
        sev = "warning" if d in result.warnings else "error"
        print(f"ld.lld: {sev}: {d.message}")
    print("link would " + ("succeed" if result.ok else "FAIL"))
    return 0 if result.ok else 1

"""Predict what arm-none-eabi-ld (GNU ld 2.40) decides for an ld command line, without linking.

`weaklink link [--json] [--why-extract] [--trace-symbol SYM] [--why-not SYM] <ld args…>`
Exit status: 0 the link would succeed, 1 it would fail, 2 bad input or usage.
"""
from __future__ import annotations

import argparse
import sys

EPILOG = """Exit status: 0 the link would succeed, 1 it would fail, 2 bad input or usage.
Everything after the options above is passed as ld's own command line, e.g.
  weaklink link --json -T app.ld main.o -L lib -lfoo --start-group liba.a libb.a --end-group
"loaded" lists objects and archive members in load order; "extracted" is the map's
"Archive member included to satisfy reference by file (symbol)" table (--whole-archive
members appear there as symbol "--whole-archive" with file null, as ld prints them).
Not modelled: --gc-sections (undefined references inside collected sections are still
reported), shared libraries, --wrap, LTO, symbol versions."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "link", help="predict GNU ld symbol resolution and archive extraction",
        description=__doc__.splitlines()[0], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    p.add_argument("--json", action="store_true", help="print the JSON report (schema 1)")
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
    extra = list(args.extra)
    return extra[1:] if extra[:1] == ["--"] else extra


def run(args) -> int:
    if args.compare is not None:
        return _run_compare(args)
    if args.flavor == "lld":
        return _run_lld(args)
    from weaklink.resolve import link

    result = link(_ld_args(args), trace=args.trace_symbol, why_not=args.why_not)
    if args.json:
        print(result.dumps(extras=bool(args.trace_symbol or args.why_not)))
        return 0 if result.ok else 1
    out = sys.stdout
    if args.why_extract:
        print("Archive member included to satisfy reference by file (symbol)\n", file=out)
        print("\n".join(result.why_extract_lines()), file=out)
        print(file=out)
    for line in result.trace:
        print(f"ld: {line}", file=out)
    for w in result.why_not:
        print(f"why not {w.symbol} from {w.file}: {w.detail} [{w.reason}]", file=out)
    if not (args.why_extract or args.trace_symbol or args.why_not):
        print(result.table(), file=out)
    for d in (*result.warnings, *result.errors):
        where = f"{d.file}: " if d.file else ""
        print(f"ld: {where}{d.message}", file=out)
    print("link would " + ("succeed" if result.ok else "FAIL"), file=out)
    return 0 if result.ok else 1


def _run_compare(args) -> int:
    from weaklink.errors import UsageError
    from weaklink.resolve import compare, link
    from weaklink.resolve import lld

    if sorted(args.compare.split(",")) != ["gnu", "lld"]:
        raise UsageError(f"--compare {args.compare!r}: only 'gnu,lld' is supported")
    ld_args = _ld_args(args)
    result = compare.compare(link(ld_args), lld.link(ld_args), ld_args)
    print(result.dumps() if args.json else result.table())
    return 0 if result.same else 1


def _run_lld(args) -> int:
    from pathlib import Path

    from weaklink.resolve import lld
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
    out = sys.stdout
    if args.why_extract or why_file == "-":
        out.write(lld.why_extract_text(result))
    elif not args.trace_symbol:
        print(result.table(), file=out)
    for d in (*result.warnings, *result.errors):
        sev = "warning" if d in result.warnings else "error"
        print(f"ld.lld: {sev}: {d.message}", file=out)
    print("link would " + ("succeed" if result.ok else "FAIL"), file=out)
    return 0 if result.ok else 1

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
    p.set_defaults(run=run, accepts_extra=True)


def _ld_args(args) -> list[str]:
    extra = list(args.extra)
    return extra[1:] if extra[:1] == ["--"] else extra


def run(args) -> int:
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

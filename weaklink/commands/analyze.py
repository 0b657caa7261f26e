"""`weaklink analyze`: which definition won, where it lives, what it holds at reset."""
from __future__ import annotations

import argparse
import sys

from weaklink.analyze import analyze
from weaklink.analyze.plot import plot
from weaklink.analyze.render import render
from weaklink.errors import UsageError, require
from weaklink.ci.output import add_options, check_outputs, emit
from weaklink.ci.results import from_analysis


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "analyze", help="analyse a linked firmware ELF",
        description="Report which definition of each symbol won, in which memory region it "
                    "lives and what it holds at reset, with findings about weak defaults. "
                    "Exit 0; 1 when an --expect-* expectation fails; 2 on bad input.")
    p.add_argument("firmware", metavar="FIRMWARE.elf")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    p.add_argument("--map", metavar="FILE", help="GNU ld map (-Map): regions, attribution, LOAD")
    p.add_argument("--board", metavar="NAME|FILE",
                   help="memory regions of a SoC (when no --map): a preset of npu/data/soc.toml "
                        "(corstone-300, corstone-320, himax-we2, alif-e7-he, alif-e7-hp), a FILE.toml "
                        "in its schema, or a Zephyr build's zephyr.dts")
    p.add_argument("--symbol", action="extend", nargs="+", default=[], metavar="NAME",
                   help="report these symbols' binding, place, value and target")
    p.add_argument("--expect-override", action="extend", nargs="+", default=[],
                   metavar="SYM", help="SYM must not be a surviving weak default")
    p.add_argument("--expect-region", action="extend", nargs="+", default=[],
                   metavar="SYM=REGION", help="SYM (or the target of pointer SYM) must be in "
                   "REGION")
    p.add_argument("--plot", metavar="FILE.png", help="draw the memory map with matplotlib")
    p.add_argument("--link-dir", metavar="DIR", help="directory the link ran in (inputs' base)")
    p.add_argument("--link-inputs", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="the ld inputs and options (objects, archives, -T ...); must be last")
    add_options(p)
    p.set_defaults(run=run, accepts_extra=False)


def _expect_region(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        sym, sep, region = item.partition("=")
        if not sep or not sym or not region:
            raise UsageError(f"--expect-region {item!r}: expected SYM=REGION")
        out[sym] = region
    return out


def run(args) -> int:
    if args.plot:
        require("matplotlib", "--plot", "plot")     # before any work: nothing half done
    if args.sarif or args.github:
        check_outputs(args)
    report = analyze(args.firmware, map_path=args.map, board=args.board, symbols=args.symbol,
                     expect_override=args.expect_override,
                     expect_region=_expect_region(args.expect_region),
                     link_inputs=args.link_inputs or None, link_dir=args.link_dir)
    if args.plot:
        plot(report, args.plot)
    out = sys.stdout.buffer
    if args.json:
        out.writelines(report.json_chunks())
    else:
        out.write(render(report).encode())
    out.flush()
    if args.sarif or args.github:
        emit(args, "", lambda: from_analysis(report), {report.file: report.table.image})
    return report.exit_code

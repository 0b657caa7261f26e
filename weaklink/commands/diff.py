"""`weaklink diff`: what changed in symbol resolution and placement between two firmware builds.

Exit 0 when no --fail-on gate tripped (always without --fail-on), 1 when one did, 2 on bad input
or usage.
"""
from __future__ import annotations

from weaklink.diff import diff
from weaklink.diff.render import render
from weaklink.errors import UsageError
from weaklink.ci.output import add_options, check_outputs, emit
from weaklink.ci.results import from_diff

EPILOG = """Gates (--fail-on, a comma list): new-findings (a new warning or error), binding-changed,
region-changed, verdict (with --check: the NPU verdict changed and is not ok).
Address moves are counted, not listed, unless the symbol is named with --symbol."""


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="compare two linked firmware images (a CI regression gate)",
                       description=__doc__.splitlines()[0], epilog=EPILOG)
    p.add_argument("old", metavar="OLD.elf")
    p.add_argument("new", metavar="NEW.elf")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    p.add_argument("--map-old", metavar="FILE", help="GNU ld map of OLD")
    p.add_argument("--map-new", metavar="FILE", help="GNU ld map of NEW")
    p.add_argument("--board", metavar="NAME", help="memory regions of a board preset (when no "
                   "map): corstone-300, corstone-320; also the SoC of --check")
    p.add_argument("--symbol", action="extend", nargs="+", default=[], metavar="NAME",
                   help="report these symbols before and after, address moves included")
    p.add_argument("--check", action="store_true",
                   help="also check both images on the NPU: base tables and verdicts")
    p.add_argument("--accelerator", help="with --check: Vela accelerator, e.g. ethos-u85-256")
    p.add_argument("--system-config", help="with --check: vela.ini system config")
    p.add_argument("--memory-mode", help="with --check: vela.ini memory mode")
    p.add_argument("--binding", default="executorch-arm", help="with --check: binding preset "
                   "or TOML file (default: executorch-arm)")
    p.add_argument("--vela-ini", help="with --check: a vela.ini with the configs")
    p.add_argument("--fail-on", action="append", default=[], metavar="GATES",
                   help="exit 1 when any of these occurs: new-findings, binding-changed, "
                        "region-changed, verdict (comma list)")
    add_options(p)
    p.set_defaults(run=run, accepts_extra=False)


def _check_options(args) -> dict | None:
    acc = (args.accelerator, args.system_config, args.memory_mode)
    if not args.check:
        if any(acc):
            raise UsageError("--accelerator/--system-config/--memory-mode need --check")
        return None
    if not all(acc):
        raise UsageError("--check needs --accelerator, --system-config and --memory-mode")
    return {"accelerator": args.accelerator, "system_config": args.system_config,
            "memory_mode": args.memory_mode, "binding": args.binding, "vela_ini": args.vela_ini}


def run(args) -> int:
    check_outputs(args)
    report = diff(args.old, args.new, map_old=args.map_old, map_new=args.map_new,
                  board=args.board, symbols=args.symbol, check_options=_check_options(args),
                  fail_on=args.fail_on)
    text = report.dumps() + "\n" if args.json else render(report)
    emit(args, text, lambda: from_diff(report), report.images)
    return report.exit_code


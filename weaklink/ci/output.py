"""--sarif FILE and --github for analyze, check and diff: one place that locates the results,
writes the SARIF file (whole, after the report succeeded) and prints the annotations."""
from __future__ import annotations

import json
import os
import sys

from weaklink import __version__
from weaklink.errors import UsageError
from weaklink.ci.github import annotations
from weaklink.ci.sarif import sarif_log
from weaklink.ci.sourceloc import locate
from weaklink import rules as catalogue

MAX_LOCATED = 200       # notes get a source line only in small reports (one DWARF walk each)


def add_options(parser) -> None:
    parser.add_argument("--sarif", metavar="FILE", help="also write the findings as SARIF 2.1.0")
    parser.add_argument("--github", action="store_true",
                        help="print GitHub Actions annotations (::warning/::error) for them")


def check_outputs(args) -> None:
    if getattr(args, "github", False) and getattr(args, "json", False):
        raise UsageError("--github prints workflow commands to standard output: use it without "
                         "--json (write --sarif FILE for machine-readable results)")


def emit(args, text: str, results_of, images: dict) -> None:
    """Write the report text to stdout, then the SARIF file and the annotations, if asked.
    `images`: the weaklink.read.image.Image the command read, by path: the source lines are
    read from them, not from the files again."""
    out = sys.stdout
    out.write(text)
    if not (args.sarif or args.github):
        out.flush()
        return
    results = results_of()
    by_image: dict[str, list[str]] = {}
    for r in results:
        if r.symbol and (r.level != "note" or len(results) <= MAX_LOCATED):
            by_image.setdefault(r.image, []).append(r.symbol)
    locations = {(path, name): where for path, names in by_image.items()
                 for name, where in locate(images[path], names).items()}
    if args.sarif:
        _write_sarif(args.sarif, results, locations, _rules(args))
    if args.github:
        for line in annotations(results, locations):
            out.write(line + "\n")
    out.flush()


def _rules(args) -> dict:
    return {"analyze": catalogue.ANALYZE_RULES, "check": catalogue.CHECK_RULES,
            "diff": catalogue.DIFF_RULES}[args.command]


def _write_sarif(path: str, results, locations, rules) -> None:
    log = sarif_log(results, rules, locations, __version__)
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as fh:
            fh.write(json.dumps(log, indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"--sarif {path}: cannot write: {exc.strerror}") from None

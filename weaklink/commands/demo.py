"""`weaklink demo`: build the fixture firmware, predict every link, check every image.

Exit 0 when the resolution model agreed with the real arm-none-eabi-ld on every link, 1 when
it did not, 2 when the fixtures could not be built (toolchain or Vela missing).
"""
from __future__ import annotations

import json

from weaklink.demo import run_demo
from weaklink.demo.diffs import run_diffs
from weaklink.builders import firmware as fixtures
from weaklink.demo.tflm import run_tflm_demo
from weaklink.errors import require


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="the fast-scratch story from real builds: link model vs ld, NPU verdicts",
                       description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", metavar="DIR", help="write one check picture per linked image into DIR")
    p.add_argument("--diff", action="store_true",
                   help="the story as three firmware diffs (weaklink diff --check) instead")
    p.add_argument("--cache", help="build directory (default $WEAKLINK_CACHE, <repo>/.cache in a "
                                   "checkout, else ~/.cache/weaklink)")
    p.add_argument("--fixtures", metavar="DIR",
                   help="fixture sources (default: the checkout's fixtures/ or the installed copy)")
    p.add_argument("--story", choices=("executorch", "tflm"), default="executorch",
                   help="executorch (default): the fast-scratch weak default; tflm: TensorFlow "
                        "Lite Micro firmware and the driver's fast-memory rule")
    p.add_argument("--linker", choices=("gnu", "lld"), default="gnu",
                   help="link the executorch variants with arm-none-eabi-ld (default) or "
                   "ld.lld-16, and check the matching resolution model")
    p.add_argument("--run", dest="execute", action="store_true",
                   help="also execute every image on QEMU (weaklink run) and add a column with how it "
                        "ended; adds the story's U65 rows (Corstone-300, Dedicated_Sram)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="with --run: seconds before a run is stopped (default 5: the hang rows wait this long)")
    p.set_defaults(run=run, accepts_extra=False)


def run(args) -> int:
    fixtures.use_fixtures(args.fixtures)
    # Vela compiles the fixture networks (its TFLite builders need flatbuffers); nothing is
    # built before both are known to be there.
    require("ethosu.vela", "weaklink demo", "demo", "ethos-u-vela")
    require("flatbuffers", "weaklink demo", "demo")
    if args.plot:
        require("matplotlib", "--plot", "plot")
    if args.diff:
        report = run_diffs(cache=args.cache)
    elif args.story == "tflm":
        report = run_tflm_demo(cache=args.cache)
    else:
        report = run_demo(cache=args.cache, plot_dir=args.plot, linker=args.linker,
                          run=args.execute, timeout=args.timeout)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.to_table())
    return report.exit_code

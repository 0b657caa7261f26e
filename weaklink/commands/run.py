"""`weaklink run`: the firmware executes on QEMU (mps3-an547), the Ethos-U emulated by npu/.

Exit 0 when the firmware exits with 0 and every NPU job completed on bytes, 1 when it exits
otherwise, hangs on an NPU job, or a job ran for timing only because the functional engine
could not compute it; 2 on bad input (not an Arm image for the board, no qemu-system-arm: one
line) and when the firmware faults, crashes or does not exit within the timeout with no NPU
job to explain it: the report (UART, jobs) is printed, and one line on stderr with the program
counter and the UART's last line.
"""
from __future__ import annotations

import json
import sys

from weaklink.commands import add_npu_target
from weaklink.run import DEFAULT_TIMEOUT, run as run_firmware


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="execute the firmware on QEMU with the NPU emulated",
                       description=__doc__.splitlines()[0])
    p.add_argument("firmware", help="linked firmware image (ELF) for Corstone-300, or Corstone-320 without BRAM")
    add_npu_target(p, "SoC memory map preset for the NPU's ports (default: corstone-300 for U55/U65, corstone-320 for U85)")
    p.add_argument("--vela-ini", help="a vela.ini with the system config and memory mode (default: Vela's Arm/vela.ini)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="seconds of wall time before the run is stopped (default 60)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--functional", dest="functional", action="store_true", default=None,
                      help="compute the NPU's outputs on bytes, or fail (default: on bytes where the engine can)")
    mode.add_argument("--timing", dest="functional", action="store_false",
                      help="timing only: the NPU's outputs are not written into guest memory")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run, accepts_extra=False)


def run(args) -> int:
    report = run_firmware(args.firmware, accelerator=args.accelerator, system_config=args.system_config,
                          memory_mode=args.memory_mode, soc=args.soc, functional=args.functional,
                          timeout=args.timeout if args.timeout is not None else DEFAULT_TIMEOUT,
                          vela_ini=args.vela_ini)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.to_table())
    failure = report.failure()
    if failure:
        sys.stdout.flush()
        print(f"weaklink: error: {args.firmware}: {failure}", file=sys.stderr)
        return 2
    return report.status

"""`weaklink fvp`: the Corstone-300 FVP's command line, run on QEMU with the Ethos-U emulated.

Takes what FVP_Corstone_SSE-300_Ethos-U55/-U65 take in the frameworks' test scripts: -C
NAME=VALUE (weaklink fvp --list-params), -a [cpu0=]ELF or the image alone, --data
FILE@ADDRESS, --timelimit S, --stat. A parameter that is not modelled is one line, exit 2.
Exit 0 when the simulation ran to a stop, 1 when QEMU or the debugger failed.
"""
from __future__ import annotations

import json
import os

from weaklink import fvp
from weaklink.errors import UsageError
from weaklink.fvp import params, shims


def add_parser(sub) -> None:
    p = sub.add_parser("fvp", help="the Corstone-300 FVP's command line, run on QEMU with the NPU emulated",
                       description=__doc__.splitlines()[0])
    p.add_argument("image", nargs="?", help="the image to boot (as -a)")
    p.add_argument("-C", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                   help="an FVP parameter (--list-params)")
    p.add_argument("-f", "--config-file", action="append", default=[], metavar="FILE",
                   help="a file of NAME=VALUE lines")
    p.add_argument("-a", "--application", action="append", default=[], metavar="[cpu0=]ELF")
    p.add_argument("--data", action="append", default=[], metavar="[cpu0=]FILE@ADDRESS",
                   help="load FILE's bytes at ADDRESS before the start")
    p.add_argument("--timelimit", type=float, metavar="S", help="stop after S seconds")
    p.add_argument("--stat", action="store_true", help="print the statistics block at the end")
    p.add_argument("-q", "--quiet", action="store_true", help="accepted (weaklink prints no banner)")
    p.add_argument("-l", "--list-params", action="store_true", help="the -C parameters taken, and what each does")
    p.add_argument("--version", action="store_true")
    p.add_argument("--model", default=os.environ.get("WEAKLINK_FVP_MODEL", "FVP_Corstone_SSE-300_Ethos-U55"),
                   help="the FVP stood in for (the shims give it)")
    p.add_argument("--install-shims", metavar="DIR",
                   help="write FVP_Corstone_SSE-300_Ethos-U55 and -U65 into DIR, for scripts that call them")
    p.add_argument("--system-config", default=os.environ.get("WEAKLINK_FVP_SYSTEM_CONFIG"),
                   help="what npu/ times jobs with (default per model, --list-params)")
    p.add_argument("--memory-mode", default=os.environ.get("WEAKLINK_FVP_MEMORY_MODE"))
    p.add_argument("--vela-ini", default=os.environ.get("WEAKLINK_FVP_VELA_INI"))
    p.add_argument("--json", action="store_true", help="--list-params as JSON")
    p.set_defaults(run=run, accepts_extra=False)


def run(args) -> int:
    if args.install_shims:
        for path in shims.install(args.install_shims):
            print(path)
        return 0
    model = params.model(args.model)
    if args.list_params:
        return _list(args, model)
    if args.version:
        print(f"weaklink fvp: {args.model} on qemu-system-arm's mps3-an547, the Ethos-U emulated by npu/")
        return 0
    assignments = [line for f in args.config_file for line in params.config_file(f)] + args.parameter
    settings = params.settings(args.model, assignments)
    images = [fvp.application(a) for a in args.application] + ([args.image] if args.image else [])
    if len(images) != 1:
        raise UsageError("expected one image (-a ELF or the ELF alone)" if not images
                         else f"{len(images)} images given: weaklink fvp boots one, on cpu0")
    if args.timelimit is not None and args.timelimit <= 0:
        raise UsageError(f"--timelimit {args.timelimit:g}: expected a positive number of seconds")
    job = fvp.Job(images[0], tuple(fvp.parse_data(d) for d in args.data), args.timelimit, args.stat,
                  args.system_config or model["system_config"], args.memory_mode or model["memory_mode"],
                  args.vela_ini)
    return fvp.simulate(settings, job)


def _list(args, model: dict) -> int:
    report = {"schema_version": 1, "model": args.model,
              "default_accelerator": f"{model['family']}-{model['num_macs']}",
              "system_config": args.system_config or model["system_config"],
              "memory_mode": args.memory_mode or model["memory_mode"],
              "params": params.listing()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.model}: -C parameters taken by weaklink fvp (any other is refused)")
    print(f"NPU: {report['default_accelerator']} without ethosu.num_macs; jobs timed as "
          f"{report['system_config']} / {report['memory_mode']}")
    width = max(len(p["name"]) for p in report["params"])
    for p in report["params"]:
        print(f"  {p['name']:<{width}}  {p['effect']:<8}  {p['what']}")
    return 0

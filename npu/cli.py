"""``npu decode`` and ``npu run``: exit 0 ok, 1 hang or error, 2 bad input."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from npu.api import run
from npu.driver import Base
from npu.emulate.engine import DEFAULT_BUDGET
from npu.errors import InputError, exit_status, require
from npu.hw import accelerator_names
from npu.plot import plot_timeline
from npu.read.model import load_model, load_models
from npu.soc import NUM_REGIONS
from npu.socfile import soc_names

BASE_RE = re.compile(r"^(\d+)=([0-9a-fA-Fx]+)(?::([0-9a-fA-Fx]+)([KkMm]?)B?)?$")


def parse_base(text: str) -> Base:
    """``R=ADDR[:SIZE]``; ADDR and SIZE in C notation, SIZE may end in K or M."""
    m = BASE_RE.match(text)
    if not m:
        raise InputError(None, f"--base {text!r}: expected R=ADDR[:SIZE], e.g. 2=0x31000000:384K")
    region, addr, size, unit = m.groups()
    try:
        address = int(addr, 0)
        nbytes = int(size, 0) * {"": 1, "k": 1024, "m": 1 << 20}[unit.lower()] if size else 0
    except ValueError:
        raise InputError(None, f"--base {text!r}: not a number") from None
    if int(region) >= NUM_REGIONS:
        raise InputError(None, f"--base {text!r}: region {region} is above {NUM_REGIONS - 1}")
    return Base(int(region), address, nbytes)


def _models(args):
    """The streams to work on: every ethos-u operator, or the one --op names."""
    return load_models(args.model) if args.op is None else [load_model(args.model, op=args.op)]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="npu", description="Decode and emulate Ethos-U command streams.")
    sub = ap.add_subparsers(dest="command", required=True)
    dec = sub.add_parser("decode", help="list the register commands, as Vela's --verbose-register-command-stream")
    r = sub.add_parser("run", help="emulate one inference")
    for p in (dec, r):
        p.add_argument("--json", action="store_true")
        p.add_argument("model")
        p.add_argument("--op", type=int, metavar="N",
                       help="the N-th ethos-u operator of a tflite (0-based; default: every one)")
    r.add_argument("--accelerator", required=True, choices=accelerator_names())
    r.add_argument("--system-config", required=True)
    r.add_argument("--memory-mode", required=True)
    r.add_argument("--soc", metavar="NAME|FILE.toml|zephyr.dts",
                   help=f"the SoC's memory map: a preset ({', '.join(soc_names())}), a TOML file in "
                        f"the schema of npu/data/soc.toml, or a Zephyr build's zephyr.dts "
                        f"(default: the accelerator's Corstone)")
    r.add_argument("--base", action="append", default=None, metavar="R=ADDR[:SIZE]")
    r.add_argument("--stream-address", type=lambda x: int(x, 0), default=0, metavar="ADDR",
                   help="where the COP1 payload lives (checked for alignment and QCONFIG reach)")
    r.add_argument("--fast-memory", metavar="ADDR:SIZE", help="the fast memory ethosu_init was given")
    r.add_argument("--vela-ini", help="a vela.ini to read system configs and memory modes from")
    r.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="cycle budget before a stall is a hang")
    r.add_argument("--plot", metavar="FILE.png")
    r.add_argument("--functional", action="store_true",
                   help="also compute the outputs on bytes (Ethos-U55, U65, U85): needs --input and --outputs")
    r.add_argument("--input", action="append", default=[], metavar="X.npy", help="one per model input, in order")
    r.add_argument("--outputs", metavar="DIR", help="where --functional writes output_<i>.npy")
    return ap


def _decode(args) -> int:
    models = _models(args)
    if args.json:
        listings = [[c.to_json() for c in m.commands] for m in models]
        out = ({"operators": [{"operator": m.operator, "commands": cmds}
                              for m, cmds in zip(models, listings)]}
               if len(models) > 1 else listings[0])
        print(json.dumps(out, indent=1))
        return 0
    for model in models:
        cop1 = model.cop1
        if len(models) > 1:
            print(f"// ethos-u operator {model.operator}")
        print(f"// {model.container}: COP1 config_r 0x{cop1.config_word:08x} (product {cop1.product}, "
              f"{1 << (cop1.config_word & 0xF)} MACs/cc), id_r 0x{cop1.id_word:08x}, "
              f"command stream at payload byte {cop1.stream_offset}")
        print(f"Register command stream: {len(cop1.stream) // 4} words")
        print("  Offset: Payload Param Code - Command                        Param, Fields")
        for c in model.commands:
            print(c.listing())
    return 0


def _load_inputs(paths) -> list:
    out = []
    for p in paths:
        try:
            out.append(np.load(p, allow_pickle=False))
        except (OSError, ValueError) as e:
            raise InputError(p, f"not a readable .npy array: {e}") from None
    return out


def _write_outputs(result, directory: str):
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for i, array in enumerate(result.functional.outputs):
        np.save(out / f"output_{i}.npy", array)


def _run(args) -> int:
    if args.plot:
        require("matplotlib", "--plot", "plot")
    if args.functional and not args.outputs:
        raise InputError(None, "--functional needs --outputs DIR")
    if (args.input or args.outputs) and not args.functional:
        raise InputError(None, "--input and --outputs only apply with --functional")
    inputs = _load_inputs(args.input) if args.functional else None
    bases = [parse_base(b) for b in args.base] if args.base else None
    fast = parse_base(f"2={args.fast_memory}") if args.fast_memory else Base(2, 0, 0)
    models = _models(args)
    if args.functional and len(models) > 1:
        raise InputError(args.model, "--functional runs one ethos-u operator: choose it with --op N")
    results = [run(m, accelerator=args.accelerator, system_config=args.system_config,
                   memory_mode=args.memory_mode, soc=args.soc, bases=bases, vela_ini=args.vela_ini,
                   stream_address=args.stream_address, fast_memory=fast.address,
                   fast_memory_size=fast.size, budget=args.budget,
                   functional=args.functional, inputs=inputs) for m in models]
    if results[0].functional is not None:
        _write_outputs(results[0], args.outputs)
    if args.json and len(models) > 1:
        print(json.dumps({"operators": [{"operator": m.operator, **r.to_json()}
                                        for m, r in zip(models, results)]}, indent=2))
    elif args.json:
        print(results[0].dumps())
    else:
        for m, r in zip(models, results):
            if len(models) > 1:
                print(f"== ethos-u operator {m.operator}")
            print(r.to_table())
    if args.plot:
        plot_timeline(results[0], args.plot)
    return max(r.exit_code for r in results)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    return exit_status("npu", lambda: _decode(args) if args.command == "decode" else _run(args))


if __name__ == "__main__":
    sys.exit(main())

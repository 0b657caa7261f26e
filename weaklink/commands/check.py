"""`weaklink check`: firmware ELF → NPU verdict (ok, hang or error), cycles, and why.

Exit 0 when the emulated inference completes, 1 when the check does not pass: a hang, an error
or wrong outputs, or a check that cannot tell (verdict `unknown`: the image does not say what
the verdict depends on; the report says what), 2 on bad input or usage. `--fail-on` and
`--allow-unknown` choose which verdicts exit 1 (a build gate: weaklink/cmake/).
"""
from __future__ import annotations

import json

from weaklink.check import check_image
from weaklink.check.gate import gate as make_gate
from weaklink.check.plot import plot
from weaklink.commands import add_npu_target
from weaklink.errors import InputError, ToolchainMissing, require
from weaklink.ci.output import add_options, check_outputs, emit
from weaklink.ci.results import from_check
from weaklink.read.image import Image
from weaklink.read.ldmap import parse_map
from weaklink.run import DEFAULT_TIMEOUT, run as run_firmware
from weaklink.run.compare import compare, joint_json, joint_table, not_run_json, not_run_table


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="will the NPU inference in this firmware image work?",
                       description=__doc__.splitlines()[0])
    p.add_argument("firmware", help="linked firmware image (ELF)")
    add_npu_target(p, "the SoC: a preset of npu/data/soc.toml (corstone-300, corstone-320, himax-we2, "
                      "alif-e7-he, alif-e7-hp), a FILE.toml in its schema, or a Zephyr build's zephyr.dts "
                      "(default: the preset whose NPU is at the address the image passes ethosu_init, "
                      "else the accelerator's Corstone, when the image loads inside its map)")
    p.add_argument("--map", help="the GNU ld map file of the link (-Map), for attribution and archive findings")
    p.add_argument("--model", metavar="FILE[@ADDR]",
                   help="the compiled model (npz, tflite, vela_bin_stream blob) instead of the one embedded "
                        "in the image; FILE@ADDR: a .tflite the image reads from ADDR, outside itself")
    p.add_argument("--arena", metavar="SYMBOL|SECTION|ADDR:SIZE",
                   help="TFLM's tensor arena, when the image does not say it (a symbol, an output section, "
                        "an input section of --map, or an address and size)")
    p.add_argument("--binding", default=None,
                   help="binding preset name or TOML file: which symbols feed which NPU region (default: "
                        "detected, executorch-arm for a vela_bin_stream blob, tflm-ethosu for a Vela .tflite)")
    p.add_argument("--vela-ini", help="a vela.ini with the system config and memory mode (default: Vela's Arm/vela.ini)")
    p.add_argument("--link-input", action="append", default=[], metavar="FILE",
                   help="an object or archive of the link (repeatable): its relocations show which "
                        "code reads the fast-scratch pointer")
    p.add_argument("--functional", action="store_true",
                   help="also compute the inference on bytes: NPU writes that corrupt data still needed, "
                        "and `wrong` when the outputs differ from a run with the regions placed apart (U55/U65)")
    p.add_argument("--run", dest="execute", action="store_true",
                   help="also execute the firmware on QEMU (weaklink run) and compare the table it passes "
                        "with the predicted one, field by field")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="with --run: seconds before the run is stopped (default 60)")
    p.add_argument("--fail-on", action="append", default=[], metavar="VERDICTS",
                   help="exit 1 only on these verdicts (comma list of hang, error, wrong, unknown; "
                        "default: all four)")
    p.add_argument("--allow-unknown", action="store_true",
                   help="exit 0 on verdict unknown (the report still says what the image does not say)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", metavar="FILE.png", help="draw the memory map with the regions placed, and the NPU timeline")
    add_options(p)
    p.set_defaults(run=run, accepts_extra=False)


def run(args) -> int:
    if args.plot:
        require("matplotlib", "--plot", "plot")     # before the emulation, not after it
    check_outputs(args)
    gate = make_gate(args.fail_on, args.allow_unknown)
    # the image and the map, each read once: the check, --run and the source lines use them
    image = Image.from_path(args.firmware)
    link_map = parse_map(args.map) if args.map else None
    report = check_image(image, link_map, accelerator=args.accelerator,
                         system_config=args.system_config, memory_mode=args.memory_mode,
                         soc=args.soc, model_path=args.model, binding=args.binding,
                         vela_ini=args.vela_ini, functional=args.functional,
                         link_inputs=args.link_input, arena=args.arena)
    if args.plot:
        plot(report, args.plot)
    status = 1 if gate.failed(report.verdict) else 0
    doc = report.to_json()
    if gate.stated:
        doc["gate"] = {"fail_on": list(gate.fail_on), "failed": gate.failed(report.verdict)}
    if args.execute:
        text, status = _with_run(args, image, report, doc, status)
    else:
        text = json.dumps(doc, indent=2) if args.json else report.to_table()
    if gate.stated and not args.json:
        text += "\n" + gate.line(report.verdict)
    emit(args, text + "\n", lambda: from_check(report), {report.file: image})
    return status


def _with_run(args, image, report, doc: dict, status: int) -> tuple[str, int]:
    """check --run: the firmware runs, and its table is compared with the prediction; the
    joint report and the exit status (1 also when the run disagrees). An image that cannot
    run keeps check's report, with why it did not run (exit 1: the comparison asked for is
    unknown)."""
    if args.timeout is not None and args.timeout <= 0:
        raise InputError(None, f"--timeout {args.timeout:g}: expected a positive number of seconds")
    try:
        ran = run_firmware(image, accelerator=args.accelerator, system_config=args.system_config,
                           memory_mode=args.memory_mode, soc=args.soc, vela_ini=args.vela_ini,
                           timeout=args.timeout if args.timeout is not None else DEFAULT_TIMEOUT)
    except (InputError, ToolchainMissing) as e:
        why = e.what if isinstance(e, InputError) else str(e)
        text = json.dumps(not_run_json(doc, why), indent=2) if args.json \
            else not_run_table(report.to_table(), why)
        return text, 1
    comparison = compare(report, ran)
    text = json.dumps(joint_json(doc, ran, comparison), indent=2) if args.json \
        else joint_table(report.to_table(), ran, comparison)
    return text, 0 if status == 0 and comparison.agree else 1

"""The FVP's `-C name=value` parameters (weaklink/data/fvp.toml), read into the settings of one
run. The FVP takes a value as written after `=`; the frameworks' scripts pass some with a layer
of quotes the shell did not remove (TFLM's `out_file="-"` from an unquoted expansion,
ExecuTorch's runner_utils.py `out_file='-'` as one argv element): one matching pair of quotes
around a value is taken off."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from npu.hw import accelerator_names

from weaklink.errors import UsageError, read_input

DATA = Path(__file__).resolve().parents[1] / "data" / "fvp.toml"
MODELS = ("FVP_Corstone_SSE-300_Ethos-U55", "FVP_Corstone_SSE-300_Ethos-U65")
HEAPINFO = ("cpu0.semihosting-heap_base", "cpu0.semihosting-heap_limit", "cpu0.semihosting-stack_base",
            "cpu0.semihosting-stack_limit")
EXTRA_ARGS = "ethosu.extra_args"
# The UARTs besides UART0 whose out_file the table honours (Zephyr's run_armfvp gives 1 and 2).
MORE_UARTS = (1, 2)


@cache
def table() -> dict:
    return tomllib.loads(DATA.read_text())


def params() -> dict[str, dict]:
    return {p["name"]: p for p in table()["param"]}


def model(name: str) -> dict:
    found = table()["model"].get(name)
    if found is None:
        raise UsageError(f"--model {name}: expected one of {', '.join(MODELS)}")
    return found


@dataclass
class Settings:
    """What one run is given: the accelerator, where the UART goes, the EOT rule, semihosting."""
    model: str
    accelerator: str
    uart_out: str = "-"                  # "-": stdout; "": nowhere; else a file
    more_uarts: dict[int, str] = field(default_factory=dict)     # UART1, UART2: "-" or a file
    eot_ends: bool = False               # the FVP's default: EOT does not end the run
    semihosting: bool = True
    cwd: str | None = None
    cmdline: str | None = None
    heapinfo: tuple[int, int, int, int] | None = None
    pmu_trace: str | None = None
    given: dict[str, str] = field(default_factory=dict)


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _flag(name: str, value: str) -> bool:
    low = value.lower()
    if low in ("1", "true"):
        return True
    if low in ("0", "false"):
        return False
    raise UsageError(f"-C {name}={value}: expected 0, 1, true or false")


def _number(name: str, value: str) -> int:
    try:
        return int(value, 0)
    except ValueError:
        raise UsageError(f"-C {name}={value}: expected a number") from None


def split(assignment: str) -> tuple[str, str]:
    name, eq, value = assignment.partition("=")
    if not eq or not name.strip():
        raise UsageError(f"-C {assignment}: expected NAME=VALUE")
    return name.strip(), unquote(value.strip())


def config_file(path: str) -> list[str]:
    """An FVP configuration file (-f): one NAME=VALUE a line, `#` starts a comment."""
    lines = read_input(path, text=True, what="FVP configuration file").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def settings(model_name: str, assignments: list[str]) -> Settings:
    """Every -C in order (a later one wins); a parameter not modelled is one line, exit 2."""
    known, given = params(), {}
    for assignment in assignments:
        name, value = split(assignment)
        entry = known.get(name)
        if entry is None:
            raise UsageError(f"-C {name}: not modelled by weaklink fvp: it may change what the firmware "
                             "sees (weaklink fvp --list-params lists the parameters it takes)")
        if entry["effect"] == "refused":
            raise UsageError(f"-C {name}: not modelled by weaklink fvp: {entry['what']}")
        given[name] = value
    m = model(model_name)
    s = Settings(model_name, _accelerator(m, given.get("ethosu.num_macs")), given=given)
    if "mps3_board.uart0.out_file" in given:
        s.uart_out = given["mps3_board.uart0.out_file"]
    if "mps3_board.uart0.shutdown_on_eot" in given:
        s.eot_ends = _flag("mps3_board.uart0.shutdown_on_eot", given["mps3_board.uart0.shutdown_on_eot"])
    for n in MORE_UARTS:
        if f"mps3_board.uart{n}.out_file" in given:
            s.more_uarts[n] = given[f"mps3_board.uart{n}.out_file"]
    flags = [f"mps3_board.uart{n}.unbuffered_output" for n in (0, *MORE_UARTS)]
    for name in (*flags, "mps3_board.visualisation.disable-visualisation"):
        if name in given:
            _flag(name, given[name])
    if "cpu0.semihosting-enable" in given:
        s.semihosting = _flag("cpu0.semihosting-enable", given["cpu0.semihosting-enable"])
    if "cpu0.semihosting-cwd" in given:
        cwd = Path(given["cpu0.semihosting-cwd"])
        if not cwd.is_dir():
            raise UsageError(f"-C cpu0.semihosting-cwd={cwd}: not a directory")
        s.cwd = str(cwd.resolve())
    s.cmdline = given.get("cpu0.semihosting-cmd_line")
    if any(n in given for n in HEAPINFO):
        s.heapinfo = tuple(_number(n, given[n]) & 0xFFFFFFFF if n in given else 0 for n in HEAPINFO)
    s.pmu_trace = _extra_args(given.get(EXTRA_ARGS, ""))
    return s


def _accelerator(m: dict, macs: str | None) -> str:
    name = f"{m['family']}-{_number('ethosu.num_macs', macs) if macs is not None else m['num_macs']}"
    if name not in accelerator_names():
        offered = sorted(int(a.rsplit("-", 1)[1]) for a in accelerator_names() if a.startswith(m["family"] + "-"))
        raise UsageError(f"-C ethosu.num_macs={macs}: {m['family']} has {', '.join(map(str, offered))} MACs")
    return name


def _extra_args(text: str) -> str | None:
    """The NPU model's own options (ethosu.extra_args): the PMU trace file asked for, if any."""
    words, trace = unquote(text).split(), None
    while words:
        word = words.pop(0)
        if word in ("--fast", "-F"):
            continue
        if word == "--pmu-trace" and words:
            trace = words.pop(0)
            continue
        raise UsageError(f"-C {EXTRA_ARGS}: {word}: not modelled by weaklink fvp (it takes --fast and --pmu-trace FILE)")
    return trace


def listing() -> list[dict]:
    return [{"name": p["name"], "effect": p["effect"], "what": p["what"]} for p in table()["param"]]

"""`weaklink fvp`: the Corstone-300 FVP's command line (FVP_Corstone_SSE-300_Ethos-U55 and -U65),
run on `weaklink run`'s machinery: QEMU's mps3-an547 with the Ethos-U served by `npu/`.

The modules: `params` (the -C parameters, weaklink/data/fvp.toml), `semihost` (SYS_HEAPINFO as
the FVP's parameters say), `console` (what the FVP prints), `shims` (executables named as the
FVPs, for the frameworks' scripts). `simulate` is the run itself.
"""
from __future__ import annotations

import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from weaklink.errors import InputError, UsageError
from weaklink.fvp import console as out
from weaklink.fvp.params import Settings
from weaklink.fvp.semihost import heapinfo_hooks
from weaklink.run import run
from weaklink.run.qemu import Options


@dataclass(frozen=True)
class Job:
    """One FVP invocation: the image, the bytes loaded before the start, the limits."""
    elf: str
    data: tuple[tuple[str, int], ...] = ()
    timelimit: float | None = None
    stat: bool = False
    system_config: str = ""
    memory_mode: str = ""
    vela_ini: str | None = None


def parse_data(text: str) -> tuple[str, int]:
    """--data [INST=]FILE@[MEMSPACE:]ADDRESS: the FVP loads FILE's bytes at ADDRESS."""
    inst, eq, rest = text.partition("=")
    if not eq or "@" in inst:
        rest = text
    elif not inst.endswith("cpu0"):
        raise UsageError(f"--data {text}: instance {inst}: the Corstone-300 FVP has one CPU, cpu0")
    path, at, address = rest.rpartition("@")
    if not at or not path:
        raise UsageError(f"--data {text}: expected FILE@ADDRESS")
    if ":" in address:
        raise UsageError(f"--data {text}: memory space {address.split(':')[0]}: not modelled "
                         "(the address alone is taken, in the CPU's view)")
    try:
        value = int(address, 0)
    except ValueError:
        raise UsageError(f"--data {text}: {address}: expected an address (0x...)") from None
    if not Path(path).is_file():
        raise InputError(path, "no such file (--data)")
    return path, value


def application(text: str) -> str:
    """-a [INST=]FILE: the image cpu0 boots."""
    inst, eq, path = text.partition("=")
    if eq and not inst.endswith("cpu0"):
        raise UsageError(f"-a {text}: instance {inst}: the Corstone-300 FVP has one CPU, cpu0")
    return path if eq else text


def _more_uarts(given: dict[int, str], work: Path) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """QEMU's files for UART1.. (up to the last one given; "" connects a UART to nothing), and
    those of them that go to stdout, tailed by the console."""
    files, tailed = [], []
    for n in range(1, max(given, default=0) + 1):
        value = given.get(n, "")
        if value == "-":
            value = str(work / f"uart{n}.txt")
            tailed.append(Path(value))
        files.append(str(Path(value).resolve()) if value else "")
    return tuple(files), tuple(tailed)


def simulate(s: Settings, job: Job) -> int:
    """Run the image and print what the FVP prints. 0 when the simulation ran to a stop the FVP
    also has (EOT, semihosting exit, the time limit, the firmware spinning after _exit or in a
    fault handler); 1 when QEMU or the debugger failed."""
    if s.pmu_trace is not None:
        print(f"weaklink fvp: no PMU trace written to {s.pmu_trace}: the emulated NPU's PMU counters "
              "are served to the firmware's reads, its per-event trace is not modelled", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="weaklink-fvp-") as work:
        uarts, tailed = _more_uarts(s.more_uarts, Path(work))
        tee = out.Console(s.uart_out, s.eot_ends, tailed)
        begun = time.monotonic()
        fields = {"qemu_options": Options(s.semihosting, s.cmdline, s.cwd, job.data, uarts),
                  "tee": tee, "eot_ends": s.eot_ends}
        if s.heapinfo is not None and s.semihosting:
            fields["hooks"] = heapinfo_hooks(s.heapinfo)
        try:
            report = run(job.elf, accelerator=s.accelerator, system_config=job.system_config,
                         memory_mode=job.memory_mode, timeout=job.timelimit or math.inf,
                         vela_ini=job.vela_ini, session=fields)
        finally:
            tee(b"", b"")           # the other UARTs' last bytes
            tee.close()
    for line in out.stop_lines(report) + (out.stat_block(report, time.monotonic() - begun) if job.stat else []):
        tee.line(line)
    return 1 if report.end.kind == "qemu" or report.end.ending == "crash" else 0

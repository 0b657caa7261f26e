"""What the FVP prints, as the frameworks' scripts read it: UART0's bytes (stdout or a file) as
they come, semihosting's console on stdout, the stop lines, and the `--stat` block.

The FVP's own lines are quoted from its logs as published: `Info: Simulation is stopping.
Reason: CPU time has been exceeded.` (--timelimit; ExecuTorch's run_fvp.sh counts it as an
error), `Info: /OSCI/SystemC: Simulation stopped by user.` at every stop, and the statistics
block of `--stat` (`--- NAME statistics: ---`, then `Simulated time`, `User time`, `System
time`, `Wall time`, `Performance index` and one line per CPU with its MIPS and instructions).
QEMU keeps no simulated time and counts no instructions: those fields say `unknown`.

weaklink's own lines: a run that ends where the FVP would not have stopped (a fault handler
that spins, a crash the debugger cannot serve) ends with one `Error: weaklink fvp: ...` line,
which ExecuTorch's check (lines starting with `E`) counts as a problem and TFLM's (its pass
string) does not find; the NPU's cycles are a line of the stat block."""
from __future__ import annotations

import resource
import sys
from pathlib import Path

EOT = b"\x04"
TIME_LIMIT = "Info: Simulation is stopping. Reason: CPU time has been exceeded."
STOPPED = "Info: /OSCI/SystemC: Simulation stopped by user."
STAT_NAME = "FVP_MPS3_Corstone_SSE_300"
WIDTH = 79


class Console:
    """The tee a Session calls with the UART's and semihosting's bytes so far: writes what is new."""

    def __init__(self, uart_out: str, eot_ends: bool, tailed: tuple[Path, ...] = ()):
        """tailed: files QEMU writes other UARTs into, whose bytes go to stdout as they come."""
        self.eot_ends = eot_ends
        self.stdout = sys.stdout.buffer
        self.uart = self.stdout if uart_out == "-" else (open(uart_out, "wb") if uart_out else None)
        self.tailed = tailed
        self.seen = [0, 0] + [0] * len(tailed)

    def __call__(self, uart: bytes, semihosting: bytes) -> None:
        more = [(path.read_bytes() if path.exists() else b"", self.stdout) for path in self.tailed]
        for k, (data, out) in enumerate([(uart, self.uart), (semihosting, self.stdout), *more]):
            new, self.seen[k] = data[self.seen[k]:], max(self.seen[k], len(data))
            if k == 0 and self.eot_ends:
                new = new.split(EOT, 1)[0] if EOT in data[:self.seen[k]] else new
            if new and out is not None:
                out.write(new)
                out.flush()

    def close(self) -> None:
        if self.uart is not None and self.uart is not self.stdout:
            self.uart.close()

    def line(self, text: str = "") -> None:
        self.stdout.write(text.encode() + b"\n")
        self.stdout.flush()


def stop_lines(report) -> list[str]:
    """The lines after the firmware's own: why the simulation stopped."""
    end = report.end
    lines = [""]
    if end.kind == "timeout":
        lines += [TIME_LIMIT, ""]
    if report.outcome == "hang":
        lines += [f"Error: weaklink fvp: {report.diagnosis}", ""]
    elif end.kind in ("crash", "qemu"):
        lines += [f"Error: weaklink fvp: {report.failure() or end.detail} (the FVP would run on to "
                  "--timelimit)", ""]
    return lines + [STOPPED]


def stat_block(report, wall: float) -> list[str]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cycles = sum(int(j.completed.cycles["total"]) for j in report.invocations)
    rows = [("Simulated time", "unknown (QEMU keeps no simulated time)"),
            ("User time", f"{own.ru_utime + children.ru_utime:.6f}s"),
            ("System time", f"{own.ru_stime + children.ru_stime:.6f}s"),
            ("Wall time", f"{wall:.6f}s"),
            ("Performance index", "unknown"),
            ("cpu0", "unknown MIPS (QEMU counts no instructions)"),
            ("ethosu", f"{cycles} cycles in {len(report.invocations)} jobs ({report.accelerator}, npu/)")]
    head = f"--- {STAT_NAME} statistics: "
    return (["", head + "-" * (WIDTH - len(head))] + [f"{k:<40}: {v}" for k, v in rows] + ["-" * WIDTH])

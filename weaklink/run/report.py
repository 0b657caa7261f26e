"""The run report: how the firmware ended, what it printed, and each NPU job with the bases it
was given at run time; rendered as a table or as JSON (schema_version 1).

A job the emulator says hangs is the finding of a run that never exits: its cause chain goes
from the base the driver programmed, through the NPU's fault, to the firmware waiting for an
interrupt that never comes. A run that ends otherwise without exiting (a crash, a timeout with
no hung job, QEMU stopping) is reported as one line with the program counter and the UART's
last line (`failure()`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from weaklink.run.image import RunImage
from weaklink.run.job import DriverCall, Invocation
from weaklink.run.session import End

SCHEMA_VERSION = 1
EOT = "\x04"
# What delivered a job's interrupt (weaklink.run.irq), as the table says it.
AT = {"wfe": "when the CPU waited for it (WFE)", "wfi": "when the CPU waited for it (WFI)",
      "status poll": "when the firmware polled STATUS", "register read": "when the firmware read an NPU register",
      "next job": "when the driver started the next job",
      "timeout": "after the job's time, the firmware not waiting for it"}


@dataclass
class RunReport:
    file: str
    accelerator: str
    system_config: str
    memory_mode: str
    soc: str
    board: str
    mode: str                          # functional | timing
    end: End
    uart: str
    semihosting: str
    invocations: list[Invocation]
    calls: list[DriverCall]
    image: RunImage
    timeout: float
    seconds: dict = field(default_factory=dict)     # wall, qemu_start, npu

    @property
    def exit_code(self) -> int | None:
        return self.end.exit_code

    @property
    def hung(self) -> Invocation | None:
        return next((j for j in self.invocations if j.status == "hang"), None)

    @property
    def outcome(self) -> str:
        """exit | hang (a job hung, the firmware waited) | timeout | crash | qemu"""
        if self.end.kind in ("exit", "eot"):
            return "exit"
        if self.end.kind == "timeout" and self.hung is not None:
            return "hang"
        return self.end.kind

    @property
    def status(self) -> int:
        """The command's exit status: 0 when the firmware exited with 0 and every job
        completed, 1 otherwise (non-zero exit, a hung or failing job)."""
        ok = self.outcome == "exit" and self.exit_code == 0
        return 0 if ok and all(j.status == "ok" for j in self.invocations) else 1

    def uart_tail(self, lines: int = 3, width: int = 300) -> str:
        """The last few lines the firmware printed (a failing test says why just before it
        stops), joined by ' / ' and cut to `width` characters from the end."""
        printed = [line.strip() for line in self.uart.replace(EOT, "").splitlines() if line.strip()]
        tail = " / ".join(printed[-lines:])
        return tail if len(tail) <= width else "…" + tail[-width:]

    def failure(self) -> str | None:
        """One line for a run that ended without an exit and without a hung job to explain it."""
        if self.outcome in ("exit", "hang"):
            return None
        tail = self.uart_tail()
        uart = f"; UART tail: {tail!r}" if tail else "; the UART printed nothing"
        jobs = f"; {len(self.invocations)} NPU job(s) ran" if self.invocations else ""
        if self.end.kind == "crash":
            name, _, why = self.end.detail.partition(" (")
            why = f" ({why}" if why else ""
            return f"the firmware crashed: {name} at {self.image.where(self.end.pc)}{why}{jobs}{uart}"
        if self.end.kind == "timeout":
            return f"{self.end.detail}: stopped at {self.image.where(self.end.pc)}{jobs}{uart}"
        return f"{self.end.detail}{jobs}{uart}"

    def diagnosis(self) -> str | None:
        job = self.hung
        if job is None or self.outcome != "hang":
            return None
        region = job.result.fault_region
        base = next((b for b in job.bases if b.region == region), None)
        head = f"region {region} base 0x{base.address:x} (BASEP{region} as the driver programmed it) → " \
            if base is not None else ""
        return (f"{head}NPU {job.result.diagnosis} → no completion interrupt → the firmware waited "
                f"at {self.image.where(self.end.pc)} until the {self.timeout:g} s timeout → hang")

    # -- rendering ---------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "file": self.file,
            "board": self.board,
            "accelerator": self.accelerator, "system_config": self.system_config,
            "memory_mode": self.memory_mode, "soc": self.soc, "mode": self.mode,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "end": {"kind": self.end.kind, "pc": self.end.pc, "where": self.image.where(self.end.pc)
                    if self.end.pc is not None else None, "detail": self.end.detail},
            "uart": self.uart,
            "semihosting": self.semihosting,
            "invocations": [j.to_json() for j in self.invocations],
            "driver_calls": [c.to_json() for c in self.calls],
            "diagnosis": self.diagnosis(),
            "seconds": dict(self.seconds),
            "notes": [],                   # schema_version 1: a run gives none
        }

    def headline(self) -> str:
        ran = f"{len(self.invocations)} NPU job(s)"
        if self.outcome == "exit":
            return f"exit {self.exit_code}, {ran}"
        if self.outcome == "hang":
            return f"HANG (no exit within {self.timeout:g} s), {ran}"
        return f"{self.outcome.upper()}, {ran}"

    def to_table(self) -> str:
        lines = [f"{self.file}: {self.headline()} on QEMU {self.board}",
                 f"{self.accelerator} / {self.system_config} / {self.memory_mode} on {self.soc}, "
                 f"NPU {self.mode}", ""]
        uart = self.uart.replace(EOT, "").rstrip("\n")
        lines += ["UART:"] + [f"  {line}" for line in uart.splitlines()] if uart else ["UART: (nothing)"]
        if self.semihosting.strip():
            lines += ["semihosting:"] + [f"  {line}" for line in self.semihosting.rstrip().splitlines()]
        for job in self.invocations:
            lines += [""] + _job_lines(job, self.image)
        if not self.invocations:
            lines += ["", "no NPU job was started (no store to CMD with transition_to_running_state)"]
        diagnosis = self.diagnosis()
        if diagnosis:
            lines += ["", f"diagnosis: {diagnosis}"]
        s = self.seconds
        lines += ["", f"time: {s.get('wall', 0):.2f} s wall (QEMU start and attach {s.get('qemu_start', 0):.2f} s, "
                      f"NPU emulation {s.get('npu', 0):.2f} s)"]
        return "\n".join(lines)


def _job_lines(job: Invocation, image: RunImage) -> list[str]:
    status = f"ok in {job.cycles} cycles" if job.status == "ok" else job.status.upper()
    out = [f"NPU job {job.index}: {status}, command stream 0x{job.stream_address:08x} "
           f"({job.stream_size} bytes), started at {image.where(job.pc)}"]
    ports = {b.region: b for b in job.result.bases}
    rows = [("region", "base", "size", "memory", "port")]
    for b in job.bases:
        p = ports.get(b.region)
        rows.append((str(b.region), f"0x{b.address:08x}", "-" if b.size is None else str(b.size),
                     (p.memory if p else None) or "-", (p.port if p else None) or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if job.status != "ok" and job.result.diagnosis:
        out.append(f"  NPU: {job.result.diagnosis}")
    if job.written:
        spans = ", ".join(f"0x{a:08x}+{n}" for a, n in job.written)
        out.append(f"  written into guest memory: {spans}")
    if job.interrupt:
        out.append("  completion interrupt raised")
        out.append(f"  delivered {AT.get(job.interrupt_at, job.interrupt_at)}, at {image.where(job.interrupt_pc)}")
    if job.note:
        out.append(f"  {job.note}")
    return out

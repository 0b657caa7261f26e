"""The run report: how the firmware ended, what it printed, and each NPU job with the bases it
was given at run time; rendered as a table or as JSON (schema_version 1).

A job the emulator says hangs is the finding of a run that never exits: its cause chain goes
from the base the driver programmed, through the NPU's fault, to the firmware waiting for an
interrupt that never comes. A run that ends otherwise without exiting (a fault, a crash, a
timeout with no hung job, QEMU stopping) is reported in full too, and `failure()` gives its one
line with the program counter and the UART's last lines.

`ending` says how the run ended: `semihosting` (SYS_EXIT), `exit-line` (the exit line or EOT
Arm's Corstone platform code prints), `exit-spin` (`exit`/`_exit` called, then a loop with no
way out), `fault` (a fault handler's loop), `timeout`, `crash`, `qemu`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from npu.records import Record, to_json
from weaklink.plaintext import aligned
from weaklink.run.fault import FAULT_NUMBERS
from weaklink.run.image import RunImage
from weaklink.run.job import DriverCall, Invocation
from weaklink.run.ending import End, span

SCHEMA_VERSION = 1
EOT = "\x04"
# What delivered a job's interrupt (weaklink.run.irq), as the table says it.
AT = {"wfe": "when the CPU waited for it (WFE)", "wfi": "when the CPU waited for it (WFI)",
      "status poll": "when the firmware polled STATUS", "register read": "when the firmware read an NPU register",
      "next job": "when the driver started the next job",
      "timeout": "after the job's time, the firmware not waiting for it"}


@dataclass
class RunReport(Record):
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

    schema_version = SCHEMA_VERSION
    notes = ()                         # schema_version 1: a run gives none
    JSON = ("schema_version", "file", "board", "accelerator", "system_config", "memory_mode", "soc",
            "mode", "outcome", "exit_code", "end=end_located", "ending=end.ending",
            "exit_call=exit_call_located", "fault=fault_located", "spin=spin_located",
            "timing_only_jobs", "uart", "semihosting", "invocations", "driver_calls=calls",
            "diagnosis", "seconds", "notes")

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
    def timing_only(self) -> list[Invocation]:
        """Jobs the functional engine could not compute, run for timing only in a functional
        run: their outputs never reached guest memory."""
        return [j for j in self.invocations if self.mode == "functional" and j.mode == "timing"]

    @property
    def status(self) -> int:
        """The command's exit status: 0 when the firmware exited with 0 and every job
        completed, on bytes when bytes were asked for; 1 otherwise (non-zero exit, a hung or
        failing job, a job whose outputs were not computed)."""
        ok = self.outcome == "exit" and self.exit_code == 0 and not self.timing_only
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
        if self.end.ending == "fault" and self.end.fault.exception not in FAULT_NUMBERS:
            return f"the firmware crashed: {self.end.detail}{jobs}{uart}"
        if self.end.kind == "crash":
            name, _, why = self.end.detail.partition(" (")
            why = f" ({why}" if why else ""
            return f"the firmware crashed: {name} at {self.image.where(self.end.pc)}{why}{jobs}{uart}"
        if self.end.kind == "timeout":
            spin = f", in a loop it cannot leave ({span(self.end.spin)})" if self.end.spin else ""
            return f"{self.end.detail}: stopped at {self.image.where(self.end.pc)}{spin}{jobs}{uart}"
        return f"{self.end.detail}{jobs}{uart}"

    @property
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

    # -- rendering: the JSON's views of the ending, each place named in the image ---------------
    @property
    def end_located(self) -> dict:
        end = self.end
        return {"kind": end.kind, "pc": end.pc,
                "where": self.image.where(end.pc) if end.pc is not None else None,
                "detail": end.detail}

    @property
    def exit_call_located(self) -> dict | None:
        if self.end.exit_call is None:
            return None
        name, status, pc = self.end.exit_call
        return {"function": name, "status": status, "pc": pc, "where": self.image.where(pc)}

    @property
    def fault_located(self) -> dict | None:
        f = self.end.fault
        if f is None:
            return None
        return {**to_json(f), "where": self.image.where(f.pc) if f.pc is not None else None}

    @property
    def spin_located(self) -> dict | None:
        if not self.end.spin:
            return None
        first, last = self.end.spin
        return {"first": first, "last": last, "where": self.image.where(first)}

    @property
    def timing_only_jobs(self) -> list[int]:
        return [j.index for j in self.timing_only]

    def headline(self) -> str:
        ran = f"{len(self.invocations)} NPU job(s)"
        if self.timing_only:
            ran += f", {len(self.timing_only)} of them timing only (outputs not computed)"
        if self.outcome == "exit":
            how = f" ({self.end.exit_call[0]}, then a loop with no way out)" if self.end.ending == "exit-spin" else ""
            return f"exit {self.exit_code}{how}, {ran}"
        if self.outcome == "hang":
            return f"HANG (no exit within {self.timeout:g} s), {ran}"
        if self.end.ending == "fault":
            f = self.end.fault
            return f"FAULT: {f.name} in {f.handler_text()}, {ran}"
        return f"{self.outcome.upper()}, {ran}"

    def ending_lines(self) -> list[str]:
        """How the run ended, when it was not a plain exit: the fault, the spin, the timeout."""
        end, out = self.end, []
        if end.ending == "fault":
            f = end.fault
            out.append(f"fault: {f.name}" + (f" at {self.image.where(f.pc)} (from the exception frame on the "
                                            f"{f.stack})" if f.pc is not None else ""))
            out.append(f"  handler: {f.handler_text()} at 0x{f.handler:08x}, spinning at {self.image.where(end.spin[0])}")
            if f.registers is not None:
                out.append(f"  {f.status_text}")
        elif end.ending == "exit-spin":
            name, status, pc = end.exit_call
            out.append(f"ended: {name}({status}) called at {self.image.where(pc)}, then the CPU spun at "
                       f"{self.image.where(end.spin[0])} (a loop it cannot leave)")
        elif end.ending in ("timeout", "crash", "qemu") and self.outcome != "hang":
            out.append(f"ended: {end.detail}, at {self.image.where(end.pc)}" if end.pc is not None
                       else f"ended: {end.detail}")
            if end.fault is not None:
                out.append(f"  earlier: {end.fault.name} at {self.image.where(end.fault.pc)}, taken to "
                           f"{end.fault.handler_text()}")
        return out

    def summary_lines(self) -> list[str]:
        jobs = self.timing_only
        if not jobs:
            return []
        which = ", ".join(str(j.index) for j in jobs)
        return [f"warning: NPU job(s) {which} ran for timing only: the functional engine could not compute "
                f"them, so their outputs were never written into guest memory and what the firmware read "
                f"there is not the NPU's result"]

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
        diagnosis = self.diagnosis
        if diagnosis:
            lines += ["", f"diagnosis: {diagnosis}"]
        for part in (self.ending_lines(), self.summary_lines()):
            if part:
                lines += [""] + part
        s = self.seconds
        lines += ["", f"time: {s.get('wall', 0):.2f} s wall (QEMU start and attach {s.get('qemu_start', 0):.2f} s, "
                      f"NPU emulation {s.get('npu', 0):.2f} s)"]
        return "\n".join(lines)


def _job_lines(job: Invocation, image: RunImage) -> list[str]:
    status = f"ok in {job.cycles} cycles" if job.status == "ok" else job.status.upper()
    if job.mode == "timing" and job.note and job.note.startswith("outputs not computed"):
        status += ", TIMING ONLY: its outputs were not written"
    out = [f"NPU job {job.index}: {status}, command stream 0x{job.stream_address:08x} "
           f"({job.stream_size} bytes), started at {image.where(job.pc)}"]
    ports = {b.region: b for b in job.result.bases}
    rows = [("region", "base", "size", "memory", "port")]
    for b in job.bases:
        p = ports.get(b.region)
        rows.append((str(b.region), f"0x{b.address:08x}", "-" if b.size is None else str(b.size),
                     (p.memory if p else None) or "-", (p.port if p else None) or "-"))
    out += aligned(rows, "  ")
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

"""`weaklink demo --run`: each linked fixture image also executes on QEMU (weaklink run), and
the table gains a column with how the firmware ended and whether its run agrees with check.

QEMU's mps3-an547 is a Corstone-300: the U55 rows boot. The U85 rows are Corstone-320 images
laid out as ExecuTorch's script lays them out (code in BRAM at 0x12000000, which the board does
not have) and are reported as not run, with the loader's reason. --run adds the story's rows
built for two targets that run (`RUN_VARIANTS`): U65 in Dedicated_Sram on Corstone-300 (its
stream uses the fast scratch), and `u85tcm`, the U85 target with the CPU's code and data in
the Corstone-320 TCMs (everything the NPU sees placed as on the u85 rows).

For a row whose outputs the demo checks (U85), the cell also says whether the firmware's own
output checksum equals LiteRT's: the fixture runner fills its input with byte i = (i * 37 + 11)
mod 256 and prints the FNV-1a of output 0 as the CPU reads it after the inference
(fixtures/firmware/runners/runner_main.h).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu.records import Record
from weaklink.builders import firmware as fixtures
from weaklink.errors import InputError
from weaklink.builders.firmware import Variant
from weaklink.demo.functional import litert_outputs
from weaklink.run import run
from weaklink.run.compare import compare
from weaklink.run.image import NotOnBoard

# The story on Corstone-300 with an Ethos-U65 in Dedicated_Sram: the weak default left at 0/0
# (hang), the example runner's strong override in SRAM (ok), the backend that passes 0/0, and
# two pitfalls: a 16 KB override (check: out of bounds; the NPU writes on past it) and an
# override in plain .bss, which the Corstone-300 script puts in DTCM, out of the NPU's reach.
RUN_VARIANTS = (Variant("weak", "custom", "u65"), Variant("weak", "example", "u65"),
                Variant("removed", "example", "u65"), Variant("weak", "too-small", "u65"),
                Variant("weak", "wrong-memory", "u65"),
                Variant("weak", "custom", "u85tcm"), Variant("weak", "example", "u85tcm"),
                Variant("removed", "example", "u85tcm"), Variant("weak", "too-small", "u85tcm"))
DEMO_TIMEOUT = 5.0
PRINTED = re.compile(r"output 0: \d+ bytes, fnv1a (0x[0-9a-f]+)")


@dataclass(frozen=True)
class NotRun(Record):
    """A row whose image did not boot on the board, and why."""
    reason: str

    ran = False
    comparison = None
    JSON = ("ran", "reason")

    def cell(self) -> str:
        return f"not run: {self.reason}"


@dataclass(frozen=True)
class RowRun(Record):
    report: object                 # weaklink.run.RunReport
    comparison: object             # weaklink.run.compare.Comparison
    litert: bool | None = None     # the firmware's output checksum = LiteRT's (rows with outputs checked)

    ran = True
    JSON = ("ran", "outcome=report.outcome", "exit_code=report.exit_code", "invocations",
            "cycles", "agrees_with_check=comparison.agree", "differences",
            "output_equals_litert=litert", "wall_s")

    @property
    def invocations(self) -> int:
        return len(self.report.invocations)

    @property
    def cycles(self) -> list[int | None]:
        return [j.cycles for j in self.report.invocations]

    @property
    def differences(self) -> list[str]:
        return [f.message for f in self.comparison.findings]

    @property
    def wall_s(self) -> float:
        return round(self.report.seconds.get("wall", 0.0), 3)

    def cell(self) -> str:
        r = self.report
        if r.outcome == "exit":
            text = f"exit {r.exit_code}"
        elif r.outcome == "hang":
            text = f"hang ({r.timeout:g} s)"
        else:
            text = r.outcome
        if any(j.status == "error" for j in r.invocations):
            # the emulator bounded each region by the size passed; the NPU wrote past it
            text += ", NPU wrote out of bounds"
        if self.litert is not None:
            text += ", output = LiteRT" if self.litert else ", output ≠ LiteRT"
        return text + ("" if self.comparison.agree else ", differs")


def run_row(outcome: fixtures.LinkOutcome, check_report, timeout: float = DEMO_TIMEOUT,
            tflite: Path | None = None) -> RowRun | NotRun | None:
    """`tflite`: the row's network, when the demo checks its outputs against LiteRT."""
    if not outcome.ok or check_report is None:
        return None
    t = outcome.target
    try:
        report = run(outcome.elf, accelerator=t.accelerator, system_config=t.system_config,
                     memory_mode=t.memory_mode, soc=t.board, timeout=timeout)
    except NotOnBoard as e:
        return NotRun(f"{e.kind} at 0x{e.address:08x}, not on {e.machine}")
    except InputError as e:
        return NotRun(e.what.split(" (", 1)[0])
    printed = PRINTED.search(report.uart)
    litert = None
    if printed and tflite is not None and (want := litert_checksum(tflite)) is not None:
        litert = int(printed.group(1), 16) == want
    return RowRun(report, compare(check_report, report), litert=litert)


def fnv1a(data: bytes) -> int:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def litert_checksum(tflite: Path) -> int | None:
    """FNV-1a of LiteRT's output 0 for the runner's input pattern; None without LiteRT."""
    def pattern(details):
        d = details[0]
        n = int(np.prod(d["shape"])) * np.dtype(d["dtype"]).itemsize
        return [np.frombuffer(bytes((i * 37 + 11) & 0xFF for i in range(n)), dtype=d["dtype"])]
    out = litert_outputs(tflite, pattern)
    return None if out is None else fnv1a(out[0].tobytes())


def footnotes(rows) -> list[str]:
    """One line per field that differs, with the rows it differs on and the first row's values."""
    by_field: dict[str, list] = {}
    for r in rows:
        if r.run is not None and r.run.comparison is not None:
            for f in r.run.comparison.findings:
                field = f.message.split(": check predicts", 1)[0]
                by_field.setdefault(field, []).append((f"{r.backend}-{r.runner}-{r.target}", f.message))
    out = []
    for field, hits in by_field.items():
        names = ", ".join(name for name, _ in hits)
        out.append(f"run differs from check in {field} on {len(hits)} row(s) ({names}); "
                   f"{hits[0][0]}: {hits[0][1]}")
    return out

"""`weaklink demo --run`: each linked fixture image also executes on QEMU (weaklink run), and
the table gains a column with how the firmware ended and whether its run agrees with check.

QEMU's mps3-an547 is a Corstone-300: the U55 rows boot; the U85 rows are Corstone-320 images
(code in BRAM at 0x12000000, which the board does not have) and are reported as not run, with
the loader's reason. The story's hang needs a fast scratch the stream uses: on Corstone-300
that is the U65 in Dedicated_Sram, so --run adds the story's rows built for U65
(`RUN_VARIANTS`).
"""
from __future__ import annotations

from dataclasses import dataclass

from weaklink.demo.fixtures import firmware as fixtures
from weaklink.errors import InputError
from weaklink.demo.fixtures.firmware import Variant
from weaklink.run import run
from weaklink.run.compare import compare

# The story on Corstone-300 with an Ethos-U65 in Dedicated_Sram: the weak default left at 0/0
# (hang), the example runner's strong override in SRAM (ok), the backend that passes 0/0, and
# two pitfalls: a 16 KB override (check: out of bounds; the NPU writes on past it) and an
# override in plain .bss, which the Corstone-300 script puts in DTCM, out of the NPU's reach.
RUN_VARIANTS = (Variant("weak", "custom", "u65"), Variant("weak", "example", "u65"),
                Variant("removed", "example", "u65"), Variant("weak", "too-small", "u65"),
                Variant("weak", "wrong-memory", "u65"))
DEMO_TIMEOUT = 5.0


@dataclass(frozen=True)
class RowRun:
    report: object | None          # weaklink.run.RunReport, None when the image did not boot
    comparison: object | None      # weaklink.run.compare.Comparison
    reason: str = ""               # why it was not run

    def cell(self) -> str:
        if self.report is None:
            return f"not run: {self.reason}"
        r = self.report
        if r.outcome == "exit":
            text = f"exit {r.exit_code}"
        elif r.outcome == "hang":
            text = f"hang ({r.timeout:g} s)"
        else:
            text = r.outcome
        return text + ("" if self.comparison.agree else ", differs")

    def to_json(self) -> dict:
        if self.report is None:
            return {"ran": False, "reason": self.reason}
        return {"ran": True, "outcome": self.report.outcome, "exit_code": self.report.exit_code,
                "invocations": len(self.report.invocations),
                "cycles": [j.cycles for j in self.report.invocations],
                "agrees_with_check": self.comparison.agree,
                "differences": [f.message for f in self.comparison.findings],
                "wall_s": round(self.report.seconds.get("wall", 0.0), 3)}


def run_row(outcome: fixtures.LinkOutcome, check_report, timeout: float = DEMO_TIMEOUT) -> RowRun | None:
    if not outcome.ok or check_report is None:
        return None
    t = outcome.target
    try:
        report = run(outcome.elf, accelerator=t.accelerator, system_config=t.system_config,
                     memory_mode=t.memory_mode, soc=t.board, timeout=timeout)
    except InputError as e:
        return RowRun(None, None, _short(e.what))
    return RowRun(report, compare(check_report, report))


def _short(why: str) -> str:
    """The loader's reason, up to the board it names."""
    head = why.split(" (", 1)[0]
    return head.replace("a segment loads ", "code at ").replace("a segment occupies ", "memory at ")


def footnotes(rows) -> list[str]:
    """One line per field that differs, with the rows it differs on and the first row's values."""
    by_field: dict[str, list] = {}
    for r in rows:
        ran = getattr(r, "run", None)
        if ran is not None and ran.comparison is not None:
            for f in ran.comparison.findings:
                field = f.message.split(": check predicts", 1)[0]
                by_field.setdefault(field, []).append((f"{r.backend}-{r.runner}-{r.target}", f.message))
    out = []
    for field, hits in by_field.items():
        names = ", ".join(name for name, _ in hits)
        out.append(f"run differs from check in {field} on {len(hits)} row(s) ({names}); "
                   f"{hits[0][0]}: {hits[0][1]}")
    return out

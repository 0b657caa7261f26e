"""`weaklink demo --story tflm`: TensorFlow Lite Micro firmware and the driver's fast-memory rule.

Every TFLM-shaped fixture (weaklink.builders.tflm) is built with the real toolchain and checked:
the embedded Vela .tflite and its ethos-u operators, the tensor arena, the fast memory
`ethosu_init` receives (and where that was read), what region 2 becomes, and the NPU verdict.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npu.records import Record
from weaklink.builders import tflm as fixtures_tflm
from weaklink.check import check
from weaklink.check.report import CheckReport
from weaklink.demo.report import table_lines
from weaklink.plaintext import size_text

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class TflmRow(Record):
    variant: fixtures_tflm.TflmVariant
    check: CheckReport

    JSON = ("variant=variant.name", "target=variant.target", "build=variant.opt", "operators",
            "fast_memory=check.table.fast_memory", "region2", "npu=check.verdict",
            "cycles=check.cycles", "findings=check.rule_ids", "expected=variant.expected",
            "diagnosis=check.diagnosis")

    @property
    def operators(self) -> int:
        return len(self.check.operators)

    def fast_memory(self) -> str:
        f = self.check.table.fast_memory
        if f is None or f.address is None:
            return "cannot tell (r2 is no constant at the BL)"
        where = "DWARF" if f.source.startswith("DWARF") else "code before the BL"
        if not f.given:
            return f"none (0/0, {where})"
        return f"{f.symbol or hex(f.address)} {size_text(f.size)} ({where})"

    @property
    def region2(self) -> str:
        base = self.check.table.base(2)
        if self.check.verdict == "unknown":
            return "cannot tell"
        port = next((b for b in self.check.run.bases if b.region == 2), None)
        memory = port.memory if port and port.memory else "?"
        what = "arena tensor" if base.arena else "fast memory"
        rules = {f.rule for f in self.check.findings}
        if "fast-memory-too-small" in rules:
            return f"{size_text(base.size)} > fast memory: driver check fails"
        return f"{what} in {memory}" + (", finding" if rules else "")



@dataclass(frozen=True)
class TflmDemoReport(Record):
    rows: tuple[TflmRow, ...]

    schema_version = SCHEMA_VERSION
    story = "tflm"
    JSON = ("schema_version", "story", "rows")

    @property
    def exit_code(self) -> int:
        """1 when a verdict differs from the one the fixture was built to show."""
        return 0 if all(r.check.verdict == r.variant.expected for r in self.rows) else 1

    def to_table(self) -> str:
        head = ("variant", "target", "build", "ethos-u ops", "fast memory to ethosu_init",
                "region 2 (fast scratch)", "NPU", "cycles")
        body = [(r.variant.name, r.variant.target, r.variant.opt + ("" if r.variant.debug else " no -g"),
                 str(len(r.check.operators)),
                 r.fast_memory(), r.region2, r.check.verdict,
                 "-" if r.check.cycles is None else str(r.check.cycles)) for r in self.rows]
        out = [*table_lines(head, body), ""]
        out.append("fast memory read from DWARF call sites (-g) or from the constants in r2/r3 at the BL "
                   "(the code: -O0, and -Os without -g); region 2 is an arena tensor unless fast memory replaces it")
        return "\n".join(out)


def run_tflm_demo(cache: str | Path | None = None) -> TflmDemoReport:
    rows = []
    for im in fixtures_tflm.build(cache=cache):
        t = im.target
        rows.append(TflmRow(im.variant, check(im.elf, accelerator=t.accelerator,
                                              system_config=t.system_config,
                                              memory_mode=t.memory_mode, map_path=im.map)))
    return TflmDemoReport(tuple(rows))

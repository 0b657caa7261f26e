"""The demo table: one row per fixture variant, rendered as a table or as JSON
(docs/json-contract.md)."""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record
from weaklink.check.report import CheckReport, FastScratch
from weaklink.demo.runs import footnotes
from weaklink.plaintext import aligned, size_text

SCHEMA_VERSION = 1
MANGLED_PREFIX = "_Z"


@dataclass(frozen=True)
class DemoRow(Record):
    backend: str
    runner: str
    target: str
    link: str                          # ok | undefined-reference | multiple-definition
    link_errors: tuple[tuple[str, str], ...]   # (kind, symbol) as ld reported them
    model_agrees_with_ld: bool
    disagreements: tuple[str, ...]
    check: CheckReport | None          # None when the link failed
    functional: object | None = None   # weaklink.demo.functional.FunctionalCell (U85 rows that ran)
    run: object | None = None          # weaklink.demo.runs.RowRun (demo --run)

    JSON = ("backend", "runner", "target", "link", "model_agrees_with_ld", "fast_scratch", "npu",
            "cycles", "findings",
            # additions to the contract:
            "variant", "link_errors=link_error_kinds", "seen_by_backend", "diagnosis=check.diagnosis",
            "functional", "disagreements?", "run?")

    @property
    def fast_scratch(self) -> FastScratch | None:
        return self.check.fast_scratch if self.check else None

    @property
    def npu(self) -> str | None:
        return self.check.verdict if self.check else None

    @property
    def cycles(self) -> int | None:
        return self.check.cycles if self.check else None

    @property
    def findings(self) -> list[str]:
        return self.check.rule_ids if self.check else []

    @property
    def variant(self) -> str:
        return f"{self.backend}-{self.runner}-{self.target}"

    @property
    def link_error_kinds(self) -> list[dict]:
        return [{"kind": k, "symbol": s} for k, s in self.link_errors]

    @property
    def seen_by_backend(self) -> str:
        """What the backend passes as region 2, in words."""
        if self.check is None:
            return "-"
        base = self.check.table.base(2)
        rules = set(self.findings)
        if base is None or base.symbol is None:
            text = "0/0, the backend never reads the runner's pointer" if "unit reads it" in (
                base.note if base else "") else "0/0"
        elif base.symbol.binding == "weak":
            text = "weak default 0/0"
            if "override-not-extracted" in rules:
                text = "weak default: override never extracted"
            elif "near-miss-override" in rules:
                text = "weak default: mangled override"
        elif base.address == 0:
            text = "nullptr/0 from the runner"
            if base.symbol.name.startswith(MANGLED_PREFIX):
                text += " (C++-namespaced names)"
        else:
            memory = self.fast_scratch.region or f"{base.address:#x}"
            text = f"strong {size_text(base.size)} array in {memory}"
            if "fast-scratch-too-small" in rules:
                text = f"strong {size_text(base.size)} < model's need ({size_text(self.check.needs[2])})"
        return text + (", finding" if self.findings else "")


def table_lines(head: tuple[str, ...], body: list[tuple[str, ...]]) -> list[str]:
    """Columns as wide as their widest cell, the head underlined with dashes."""
    widths = [max(len(c) for c in col) for col in zip(head, *body)]
    return aligned([head, tuple("-" * w for w in widths), *body])


LINKERS = {"gnu": ("real ld", "arm-none-eabi-ld"), "lld": ("real ld.lld", "ld.lld-16")}


@dataclass(frozen=True)
class DemoReport(Record):
    rows: tuple[DemoRow, ...]
    linker: str = "gnu"             # which real linker linked the rows: gnu | lld
    ran: bool = False               # demo --run: the images executed on QEMU too

    schema_version = SCHEMA_VERSION
    JSON = ("schema_version", "linker", "rows")

    @property
    def exit_code(self) -> int:
        """1 when the model disagreed with the real ld on any row: the demo is also a gate."""
        return 0 if all(r.model_agrees_with_ld for r in self.rows) else 1

    def to_table(self) -> str:
        short, tool = LINKERS[self.linker]
        head = ("backend", "runner", "target", f"link ({short})",
                "model = ld" if self.linker == "gnu" else "model = lld",
                "fast scratch seen by the backend", "NPU", "cycles", "outputs") + (("run on QEMU",) if self.ran else ())
        body = []
        for r in self.rows:
            link = r.link if r.link == "ok" else f"{r.link} x{len(r.link_errors)}"
            npu = "-" if r.npu is None else ("ok*" if r.npu == "ok" and _weak_default(r) else r.npu)
            body.append((r.backend, r.runner, r.target, link,
                         "yes" if r.model_agrees_with_ld else "NO", r.seen_by_backend, npu,
                         "-" if r.cycles is None else str(r.cycles),
                         "-" if r.functional is None else r.functional.text)
                        + (((r.run.cell() if r.run else "-"),) if self.ran else ()))
        out = [*table_lines(head, body), ""]
        agree = sum(r.model_agrees_with_ld for r in self.rows)
        out.append(f"model agrees with {tool} on {agree}/{len(self.rows)} links; "
                   "ok* = ok with the weak default 0/0 (the model never uses the fast scratch)")
        refs = {r.functional.reference for r in self.rows if r.functional is not None}
        if refs:
            against = ("LiteRT's reference kernels on the same input" if refs == {"LiteRT"}
                       else "the same inference with every region placed apart (LiteRT not installed)")
            out.append(f"outputs (U85 rows that ran): the bytes the emulated NPU computed, against {against}")
        for r in self.rows:
            for d in r.disagreements:
                out.append(f"{r.backend}-{r.runner}-{r.target}: model differs from ld: {d}")
        if self.ran:
            out.append("run on QEMU = weaklink run on mps3-an547 (Corstone-300, or the Corstone-320 map "
                       "without BRAM): how the firmware ended; output = LiteRT: the firmware's output "
                       "checksum; \"differs\" = a field of its table differs from check's")
            out += footnotes(self.rows)
        return "\n".join(out)


def _weak_default(row: DemoRow) -> bool:
    fast = row.fast_scratch
    return fast is not None and fast.binding == "weak" and fast.value == 0

"""Results: the findings of analyze, check and diff as one flat record each, for SARIF and for
GitHub annotations. A result names the image it is about and, when there is one, the symbol
whose definition it should be shown at (weaklink.ci.sourceloc finds the source line)."""
from __future__ import annotations

from dataclasses import dataclass

from weaklink.rules import BASE_CHANGED, DIFF_RULES, NPU_VERDICT, SARIF_LEVEL, VERDICT_CHANGED


@dataclass(frozen=True)
class Result:
    rule: str
    level: str              # the SARIF level: error | warning | note
    message: str
    image: str              # the ELF the result is about
    symbol: str | None = None   # its raw .symtab name


def _finding(f, image: str, level: str | None = None) -> Result:
    return Result(f.rule, level or SARIF_LEVEL[f.severity], f.message, image, f.symbol)


MAX_BULK_NOTES = 1000   # more weak-default-survived infos than this are left out (JSON has them)


def from_analysis(report) -> list[Result]:
    # an unmet --expect-* fails the run (exit 1): a gate failure, annotated as an error
    out = [_finding(f, report.file, "error" if f.expectation else None) for f in report.findings]
    if 0 < len(report.weak_rows) <= MAX_BULK_NOTES:
        out += [_finding(f, report.file) for f in report.weak_findings()]
    return out


def from_check(report) -> list[Result]:
    out = [_finding(f, report.file) for f in report.findings]
    if report.verdict != "ok":
        base = report.table.base(report.run.fault_region) \
            if report.run.fault_region is not None and report.verdict != "unknown" else None
        level = "warning" if report.verdict == "unknown" else NPU_VERDICT.level
        out.append(Result(NPU_VERDICT.id, level,
                          f"NPU {report.verdict}: {report.diagnosis or report.run.diagnosis}",
                          report.file, base.symbol.name if base and base.symbol else None))
    return out


def from_diff(report) -> list[Result]:
    gated = set(report.failed)
    out = []
    for f in report.new_findings:
        level = "error" if "new-findings" in gated and f.severity in ("error", "warning") \
            else None
        out.append(_finding(f, report.new, level))
    for c in report.changes:
        level = "error" if gated & set(c.kinds) else DIFF_RULES[c.kind].level
        image = report.old if c.kind == "removed" else report.new
        out.append(Result(c.kind, level, _change_message(c), image, c.symbol))
    if report.checked:
        if report.verdict_before != report.verdict_after:
            sym = _fast_symbol(report.check_after) or _fast_symbol(report.check_before)
            level = "error" if "verdict" in gated else VERDICT_CHANGED.level
            out.append(Result(VERDICT_CHANGED.id, level,
                              f"NPU verdict {report.verdict_before} -> {report.verdict_after}"
                              + (f": {report.check_after.diagnosis}"
                                 if report.check_after.diagnosis else ""), report.new, sym))
        for b in report.bases_changed:
            sym = (b.after or b.before).symbol
            out.append(Result(BASE_CHANGED.id, BASE_CHANGED.level,
                              f"NPU region {b.region} ({b.name}) base "
                              f"{b.describe(b.before, b.fast_before)} -> "
                              f"{b.describe(b.after, b.fast_after)}",
                              report.new, sym.name if sym else None))
    return out


def _fast_symbol(check) -> str | None:
    base = check.table.base(2) if check else None
    return base.symbol.name if base is not None and base.symbol else None


def _change_message(c) -> str:
    name = (c.after or c.before).demangled if (c.after or c.before) else c.symbol
    name = name or c.symbol
    if c.kind == "added":
        return f"{name} is new: {_side(c.after)}"
    if c.kind == "removed":
        return f"{name} is gone (was {_side(c.before)})"
    return f"{name} {', '.join(c.kinds)}: {_side(c.before)} -> {_side(c.after)}"


def _side(q) -> str:
    if q is None or not q.found:
        return "-"
    text = f"{q.binding} {q.section or '-'} in {q.region or 'no region'} at {q.address:#x}, " \
           f"size {q.size}"
    if q.value is not None:
        text += f", value {q.value:#x}"
        if q.points_to is not None and q.points_to.symbol:
            text += f" (-> {q.points_to.symbol}+{q.points_to.offset:#x})"
    if q.defined_in:
        text += f", from {q.defined_in}"
    return text

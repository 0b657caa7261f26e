"""The human rendering of a DiffReport: plain aligned tables with stable headers; --json
carries the same facts."""
from __future__ import annotations

from pathlib import Path

from weaklink.analyze.render import _table
from weaklink.diff.comparison import DiffReport

MAX_CHANGE_ROWS = 200      # more changes than this are counted per kind, not listed


def _place(q) -> str | None:
    if q is None or not q.found:
        return None
    return f"{q.address:#010x} {q.region or '-'} {q.section or '-'}"


def _held(q) -> str | None:
    if q is None or not q.found or q.value is None:
        return None
    p = q.points_to
    if p is not None and p.symbol:
        return f"{q.value:#x} -> {p.symbol}+{p.offset:#x}"
    return f"{q.value:#x}"


def _side(q) -> str:
    if q is None or not q.found:
        return "-"
    parts = [q.binding, f"size {q.size}", _place(q), _held(q) and f"= {_held(q)}",
             q.defined_in and f"from {Path(q.defined_in).name}"]
    return ", ".join(p for p in parts if p)


def _changes(report: DiffReport) -> list[str]:
    if not report.changes:
        return ["", "symbols: no change"]
    rows = [(c.kind if len(c.kinds) == 1 else ", ".join(c.kinds),
             (c.after or c.before).demangled or c.symbol if (c.after or c.before) else c.symbol,
             _side(c.before), _side(c.after))
            for c in report.changes[:MAX_CHANGE_ROWS]]
    out = ["", "symbols", *_table(("CHANGE", "SYMBOL", "BEFORE", "AFTER"), rows)]
    if len(report.changes) > MAX_CHANGE_ROWS:
        counts = ", ".join(f"{k} {n}" for k, n in report.counts.items() if n)
        out.append(f"  ({len(report.changes) - MAX_CHANGE_ROWS} more not listed; {counts}; "
                   "--json lists them)")
    return out


def _findings(title: str, findings) -> list[str]:
    if not findings:
        return []
    rows = [(f.severity, f.rule, f.symbol, f.message) for f in findings[:MAX_CHANGE_ROWS]]
    more = len(findings) - len(rows)
    return ["", title, *_table(("SEVERITY", "RULE", "SYMBOL", "MESSAGE"), rows),
            *([f"  ({more} more; --json lists them)"] if more else [])]


def _npu(report: DiffReport) -> list[str]:
    if not report.checked:
        return []
    b, a = report.check_before, report.check_after
    out = ["", f"NPU ({a.accelerator} / {a.system_config} / {a.memory_mode} on {a.soc})",
           f"  verdict  {report.verdict_before} -> {report.verdict_after}"
           + ("" if report.verdict_before != report.verdict_after else " (unchanged)")]
    if b.cycles is not None or a.cycles is not None:
        out.append(f"  cycles   {b.cycles if b.cycles is not None else '-'} -> "
                   f"{a.cycles if a.cycles is not None else '-'}")
    rows = [(str(x.region), x.name, x.describe(x.before, x.fast_before),
             x.describe(x.after, x.fast_after)) for x in report.bases_changed]
    out += ["  bases changed:", *_table(("REGION", "NAME", "BEFORE", "AFTER"), rows)] \
        if rows else ["  bases: no change"]
    if a.diagnosis:
        out.append(f"  diagnosis after: {a.diagnosis}")
    out += [f"  assumption: {x}" for x in report.assumptions]
    return out


def render(report: DiffReport) -> str:
    m = report.moved
    moved = (f"{m.count} symbols moved (most by {m.shift:+#x}); address moves are listed only "
             "for --symbol" if m.count else "no symbol moved")
    lines = [f"weaklink diff {report.old} -> {report.new}", f"{len(report.changes)} changed "
             f"symbols, {moved}", *_changes(report),
             *_findings("new findings", report.new_findings),
             *_findings("fixed findings", report.fixed_findings), *_npu(report), "",
             *[f"note: {n}" for n in report.notes]]
    if report.fail_on:
        lines.append("gate " + ("FAILED: " + ", ".join(report.failed) if report.failed
                                else "passed") + f" (--fail-on {','.join(report.fail_on)})")
    return "\n".join(lines) + "\n"

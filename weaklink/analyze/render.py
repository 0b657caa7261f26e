"""The human rendering of an AnalysisReport: plain aligned tables with stable headers.
Numbers are exact (hex addresses, decimal sizes); --json carries the same facts."""
from __future__ import annotations

from weaklink.analyze.analysis import AnalysisReport
from weaklink.plaintext import aligned

MAX_INFO_ROWS = 20      # more weak-default infos than this are counted, not listed


def _table(headers: tuple[str, ...], rows: list[tuple]) -> list[str]:
    return aligned([headers, *[tuple("-" if c is None else str(c) for c in r) for r in rows]], "  ")


def _hex(v: int | None) -> str | None:
    return None if v is None else f"{v:#010x}"


def _regions(report: AnalysisReport) -> list[str]:
    rows = []
    for r in report.regions.regions:
        use = report.usage.get(r.name)
        used = use.used if use else 0
        pct = f"{100 * used / r.length:.1f}%" if r.length else "-"
        rows.append((r.name, _hex(r.origin), f"{r.length:#x}", f"{used:#x}", pct))
    return [f"regions (from {report.regions.source})",
            *_table(("NAME", "ORIGIN", "LENGTH", "USED", "USE%"), rows)]


def _target(p) -> str:
    """`symbol+offset (region)`, or `region+offset` when no symbol holds the target; a
    target outside every known region says so."""
    where = p.symbol or p.region
    text = f"{where}+{p.offset:#x}"
    if p.symbol:
        text += f" ({p.region or 'no known region'})"
    return text


def _queried(report: AnalysisReport) -> list[str]:
    if not report.queried:
        return []
    rows = []
    for q in report.queried.values():
        if not q.found:
            rows.append((q.name, "not found", *([None] * 7)))
            continue
        p = q.points_to
        target = None if p is None else _target(p)
        rows.append((q.name, q.binding, _hex(q.address), q.size, q.section, q.region,
                     _hex(q.value) if q.value is not None else None, target, q.defined_in))
    return ["", "queried", *_table(("SYMBOL", "BINDING", "ADDRESS", "SIZE", "SECTION", "REGION",
                                    "VALUE", "POINTS TO", "DEFINED IN"), rows)]


def _findings(report: AnalysisReport) -> list[str]:
    infos = report.weak_findings() if len(report.weak_rows) <= MAX_INFO_ROWS else []
    shown = [*report.findings, *infos]
    rows = [(f.severity, f.rule, f.symbol, f.message) for f in shown]
    hidden = len(report.weak_rows) - len(infos)
    out = ["", "findings"] + (_table(("SEVERITY", "RULE", "SYMBOL", "MESSAGE"), rows)
                              if rows else [] if hidden else ["  none"])
    if hidden:
        out.append(f"  ({hidden} weak-default-survived infos not listed; --json lists them)")
    if report.vague:
        out.append(f"  ({len(report.vague)} weak C++ vague-linkage definitions left out: "
                   "inline functions and methods, vtables, typeinfo, template instantiations, "
                   "guard variables; --json lists them under vague_linkage)")
    return out


def render(report: AnalysisReport) -> str:
    weak = len(report.weak_rows) + sum(f.rule == "weak-default-survived"
                                       for f in report.findings)
    c = report.counts()
    lines = [f"{report.file}: {report.machine} executable, entry {report.entry:#x}, "
             f"{len(report.table)} defined global symbols ({weak} weak)", "",
             *_regions(report), *_queried(report), *_findings(report), "",
             *[f"note: {n}" for n in report.notes],
             f"{c['error']} errors, {c['warning']} warnings, {c['info']} infos"]
    return "\n".join(lines) + "\n"

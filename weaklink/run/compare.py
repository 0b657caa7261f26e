"""`check --run`: the table `check` predicts from the image, against the one the firmware passed
when it ran. Field by field, per NPU job: each region's base (check's table against the BASEP
register the driver programmed), each region's size (against what the firmware passed to
`ethosu_invoke_v3`, when that call could be watched), the job's status and cycles, and the
verdict against how the run ended. A difference is a `run-mismatch` finding that names both
values and where each comes from; a run that crashed or stopped without an explanation is a
`run-failed` finding.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from npu.records import Record, to_json
from weaklink.rules import RUN_FAILED, RUN_MISMATCH, Finding
from weaklink.plaintext import aligned

# check's verdict against how the run ended: ok/wrong complete (the firmware exits), a hang
# never returns, an error makes the driver or the firmware fail.
EXPECTED_OUTCOME = {"ok": "exit", "wrong": "exit", "hang": "hang", "error": "exit"}
# How far QBASE may lie past the stream address check found: the COP1 header before the
# command stream (magic, OPTIMIZER_CONFIG and its words, NOPs; 32 bytes in Vela's blobs).
COP1_HEADER = 256


@dataclass(frozen=True)
class Row(Record):
    job: int
    field: str
    check: str
    run: str
    agree: bool | None        # None: the run cannot see this field


@dataclass
class Comparison(Record):
    rows: list[Row] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    cannot_compare: str | None = None     # why check has nothing to hold against the run

    JSON = ("agree", "rows", "cannot_compare?")

    @property
    def agree(self) -> bool:
        return not self.findings and not self.cannot_compare

    def _add(self, job, name, check, run, agree, why=""):
        self.rows.append(Row(job, name, check, run, agree))
        if agree is False:
            self.findings.append(RUN_MISMATCH.finding(None, f"job {job} {name}: check predicts "
                                                      f"{check}, the firmware {why or 'gave'} {run}"))


def compare(check_report, run_report) -> Comparison:
    out = Comparison()
    ops = list(check_report.operators)
    jobs = run_report.invocations
    if any(op.table.missing for op in ops):
        # no model in the image: check has no table to hold against the run's (unknown)
        out.rows.append(Row("-", "model", "not in the image (give --model FILE@ADDR)",
                            f"{len(jobs)} job(s), {run_report.outcome}", None))
        out.cannot_compare = "the image holds no model, so check has no table to compare"
        return out
    models = assign(ops, jobs)
    _counts(out, ops, jobs, models, run_report.outcome == "hang")
    for job, m in zip(jobs, models):
        k = job.index
        if m is None:
            continue
        op = ops[m]
        if len(ops) > 1 or len(jobs) > 1:
            out.rows.append(Row(k, "model", f"operator {m} (stream at 0x{op.table.stream_address:x})",
                                f"QBASE 0x{job.stream_address:x}", True))
        _bases(out, k, op.table, job)
        status = "ok" if op.verdict == "wrong" else op.verdict
        out._add(k, "status", op.verdict, job.status, status == job.status, "ran to")
        if op.run.status == "ok" and job.status == "ok":
            check_cycles = int(op.run.cycles["total"])
            out._add(k, "cycles", str(check_cycles), str(job.cycles), check_cycles == job.cycles, "took")
        if job in run_report.timing_only:
            why = (job.note or "").removeprefix("outputs not computed, timing only: ")
            out.rows.append(Row(k, "outputs", "written by the NPU", f"not computed, timing only: {why}", None))
    expected = EXPECTED_OUTCOME.get(check_report.verdict)
    outcome = run_report.outcome
    if outcome in ("crash", "timeout", "qemu"):
        out.findings.append(RUN_FAILED.finding(None, run_report.failure()))
        out.rows.append(Row("-", "outcome", check_report.verdict, outcome, False))
    else:
        out._add("-", "outcome", f"{check_report.verdict} (the firmware {'hangs' if expected == 'hang' else 'returns'})",
                 _outcome_text(run_report), expected == outcome, "")
    return out


def assign(ops, jobs) -> list[int | None]:
    """Which of check's operators each job runs. A job's QBASE lies in its model's COP1 data,
    a header after the stream address check found (the driver skips the header); when check
    does not know every operator's stream address, the n-th distinct QBASE is operator n.
    None: a stream check did not find."""
    if ops and all(op.table.stream_address for op in ops):
        out = []
        for job in jobs:
            near = [i for i, op in enumerate(ops)
                    if 0 <= job.stream_address - op.table.stream_address < COP1_HEADER]
            out.append(max(near, key=lambda i: ops[i].table.stream_address) if near else None)
        return out
    distinct = list(dict.fromkeys(j.stream_address for j in jobs))
    return [n if (n := distinct.index(j.stream_address)) < len(ops) else None for j in jobs]


def _counts(out: Comparison, ops, jobs, models, hung: bool) -> None:
    """Each operator check found runs at least once (a firmware may run a model many times:
    Zephyr's tflm_ethosu sample runs one model 4 times), and every job runs one of them. A run
    that hung stops before the later operators."""
    ran = [models.count(m) for m in range(len(ops))]
    stray = [j.index for j, m in zip(jobs, models) if m is None]
    run_text = ", ".join(f"operator {m} ×{n}" for m, n in enumerate(ran)) or "no job"
    if stray:
        run_text += f"; job(s) {', '.join(map(str, stray))} ran a stream check did not find"
    agree = not stray and (all(ran) or hung)
    out._add("-", "NPU jobs", f"{len(ops)} operator(s), each run at least once",
             f"{len(jobs)} job(s): {run_text}", agree, "started")


def _outcome_text(run_report) -> str:
    if run_report.outcome == "exit":
        return f"exit {run_report.exit_code}"
    return f"{run_report.outcome} (no exit within {run_report.timeout:g} s)"


def _bases(out: Comparison, k: int, table, job) -> None:
    given = {b.region: b for b in job.bases}
    for b in table.bases:
        r = given.get(b.region)
        if r is None:
            out._add(k, f"region {b.region} base", f"0x{b.address:x}", "not programmed", False,
                     "left BASEP as")
            continue
        out._add(k, f"region {b.region} base", f"0x{b.address:x} ({b.note})",
                 f"0x{r.address:x} (BASEP{b.region})", b.address == r.address, "programmed")
        if r.size is None:
            out.rows.append(Row(k, f"region {b.region} size", str(b.size), "unknown: " + r.size_source, None))
        else:
            out._add(k, f"region {b.region} size", f"{b.size} ({b.note})",
                     f"{r.size} (ethosu_invoke_v3's base_addr_size[{b.region}])", b.size == r.size, "passed")


def table(comparison: Comparison) -> list[str]:
    rows = [("job", "field", "check", "run", "")]
    for r in comparison.rows:
        mark = "=" if r.agree else ("?" if r.agree is None else "DIFFERS")
        rows.append((str(r.job), r.field, r.check, r.run, mark))
    return aligned(rows)


def joint_json(check_json: dict, run_report, comparison: Comparison) -> dict:
    """check's JSON with the run and the comparison added (no field renamed or removed)."""
    data = dict(check_json)
    data["findings"] = list(dict.fromkeys(list(data.get("findings", []))
                                          + [f.rule for f in comparison.findings]))
    data["finding_details"] = list(data.get("finding_details", [])) + to_json(comparison.findings)
    data["run"] = to_json(run_report)
    data["comparison"] = to_json(comparison)
    return data


def not_run_json(check_json: dict, why: str) -> dict:
    """check's JSON when the image could not run: `run` null and `not_run` saying why."""
    return {**check_json, "run": None, "not_run": why, "comparison": None}


def not_run_table(check_text: str, why: str) -> str:
    return "\n".join([check_text, "", f"run: not run: {why}", "", "check's verdict stands; nothing was compared"])


def joint_table(check_text: str, run_report, comparison: Comparison) -> str:
    lines = [check_text, "", f"run: {run_report.headline()} on QEMU {run_report.board} "
             f"({run_report.seconds.get('wall', 0):.2f} s)"]
    uart = run_report.uart.replace("\x04", "").rstrip("\n")
    lines += [f"  uart: {line}" for line in uart.splitlines()]
    lines += [f"  NPU job {j.index}: {j.note}" for j in run_report.invocations if j.note]
    lines += [""] + table(comparison)
    if comparison.findings:
        lines.append("")
        lines += [f"{f.severity}: [{f.rule}] {f.message}" for f in comparison.findings]
    if run_report.diagnosis:
        lines += ["", f"run diagnosis: {run_report.diagnosis}"]
    lines += ["", f"check and run cannot be compared: {comparison.cannot_compare}" if comparison.cannot_compare
              else "check and run agree" if comparison.agree
              else f"check and run differ in {len(comparison.findings)} field(s)"]
    return "\n".join(lines)

"""`weaklink demo`: the ExecuTorch fast-scratch story, from real builds to NPU verdicts.

For every fixture variant, in order:
1. build it with the real toolchain (weaklink.builders.firmware: objects, archives, ELF, map);
2. predict the link with the resolution model, from the same ld command line, and compare the
   prediction with what arm-none-eabi-ld did (exit status, errors, extracted members, the
   defining file of every symbol);
3. check each linked image: bind the base-address table and run the NPU emulator; U85 images
   also compute their outputs on bytes (`check --functional`), compared with LiteRT's;
4. with `run=True`, execute each image on QEMU as well (weaklink.demo.runs).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from weaklink.builders import firmware as fixtures
from weaklink.check import check
from weaklink.check.plot import plot
from weaklink.demo.functional import functional_cell
from weaklink.demo import runs
from weaklink.demo.report import DemoReport, DemoRow
from weaklink.resolve import link
from weaklink.resolve.lld import oracle as lld_oracle, resolve as lld_resolve
from weaklink.resolve.gnu.oracle import differences, recorded_run


def run_demo(cache: str | Path | None = None, plot_dir: str | Path | None = None,
             linker: str = "gnu", run: bool = False, timeout: float | None = None) -> DemoReport:
    """`linker="lld"`: the same variants linked by ld.lld-16, checked against the lld model.
    `run`: each image also executes on QEMU, and the story's rows built for the targets that
    run there (runs.RUN_VARIANTS) are added."""
    rows = []
    extra = tuple(v for v in runs.RUN_VARIANTS if v not in fixtures.VARIANTS) if run else ()
    variants = fixtures.VARIANTS + extra
    for outcome in fixtures.build(variants, cache=cache, linker=linker):
        row = _row(outcome, Path(plot_dir) if plot_dir else None, cache)
        if run:
            tflite = fixtures.cache_dir(cache) / "models" / f"{outcome.target.network}.tflite"
            row = replace(row, run=runs.run_row(outcome, row.check, timeout or runs.DEMO_TIMEOUT,
                                                tflite if row.functional is not None else None))
        rows.append(row)
    return DemoReport(tuple(rows), linker, ran=run)


def _compare_gnu(outcome: fixtures.LinkOutcome):
    real = recorded_run(outcome.returncode, outcome.stderr, outcome.map)
    model = link(outcome.ld_args, cwd=str(outcome.cwd), cref=True)
    return differences(model, real, demangled=True), {(k, s) for k, s, _ in real.errors}


def _compare_lld(outcome: fixtures.LinkOutcome):
    real = lld_oracle.recorded_run(outcome.returncode, outcome.stderr, outcome.why_extract,
                               outcome.elf)
    state, model = lld_resolve(outcome.ld_args, cwd=str(outcome.cwd))
    diffs = lld_oracle.differences(model, real, state, demangled=True, messages=True, ordered=False)
    return diffs, {(e.kind, e.symbol) for e in real.errors}


def _row(outcome: fixtures.LinkOutcome, plot_dir: Path | None, cache) -> DemoRow:
    v, t = outcome.variant, outcome.target
    compare = _compare_lld if outcome.linker == "lld" else _compare_gnu
    diffs, real_errors = compare(outcome)
    errors = tuple(sorted(real_errors))
    kind = "ok" if outcome.ok else (errors[0][0] if errors else "failed")
    report = cell = None
    computed = t.accelerator.startswith("ethos-u85")        # the functional column: U85 rows
    if outcome.ok:
        report = check(outcome.elf, accelerator=t.accelerator, system_config=t.system_config,
                       memory_mode=t.memory_mode, soc=t.board, map_path=outcome.map, functional=computed)
        if computed:
            cell = functional_cell(report, fixtures.cache_dir(cache) / "models" / f"{t.network}.tflite")
        if plot_dir is not None:
            plot_dir.mkdir(parents=True, exist_ok=True)
            suffix = ".lld" if outcome.linker == "lld" else ""
            plot(report, plot_dir / f"{v.name}{suffix}.png")
    return DemoRow(v.backend, v.runner, v.target, kind, errors, not diffs, tuple(diffs), report, cell)

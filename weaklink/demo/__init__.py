"""`weaklink demo`: the ExecuTorch fast-scratch story, from real builds to NPU verdicts.

For every fixture variant, in order:
1. build it with the real toolchain (weaklink.fixtures: objects, archives, ELF, map);
2. predict the link with the resolution model, from the same ld command line, and compare the
   prediction with what arm-none-eabi-ld did (exit status, errors, extracted members, the
   defining file of every symbol);
3. check each linked image: bind the base-address table and run the NPU emulator.
"""
from __future__ import annotations

from pathlib import Path

from weaklink import fixtures
from weaklink.check import check
from weaklink.demo.report import DemoReport, DemoRow
from weaklink.resolve import link
from weaklink.resolve.oracle import differences, recorded_run


def run_demo(cache: str | Path | None = None, plot_dir: str | Path | None = None) -> DemoReport:
    rows = []
    for outcome in fixtures.build(cache=cache):
        rows.append(_row(outcome, Path(plot_dir) if plot_dir else None))
    return DemoReport(tuple(rows))


def _row(outcome: fixtures.LinkOutcome, plot_dir: Path | None) -> DemoRow:
    v, t = outcome.variant, outcome.target
    real = recorded_run(outcome.returncode, outcome.stderr, outcome.map)
    model = link(outcome.ld_args, cwd=str(outcome.cwd), cref=True)
    diffs = differences(model, real, demangled=True)
    errors = tuple(sorted({(kind, sym) for kind, sym, _ in real.errors}))
    kind = "ok" if real.ok else (errors[0][0] if errors else "failed")
    report = None
    if outcome.ok:
        report = check(outcome.elf, accelerator=t.accelerator, system_config=t.system_config,
                       memory_mode=t.memory_mode, soc=t.board, map_path=outcome.map)
        if plot_dir is not None:
            from weaklink.check.plot import plot

            plot_dir.mkdir(parents=True, exist_ok=True)
            plot(report, plot_dir / f"{v.name}.png")
    return DemoRow(v.backend, v.runner, v.target, kind, errors, not diffs, tuple(diffs), report)

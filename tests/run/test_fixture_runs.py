"""The story, executed: the fixture firmware boots on QEMU's mps3-an547, its driver programs the
emulated NPU's registers, and the run is compared with what check predicts.

The oracle for the bytes is LiteRT with its reference kernels: each runner prints an FNV-1a
checksum of its output tensor after the inference, and it must equal the checksum of LiteRT's
output for the same input (byte i = (i * 37 + 11) mod 256, runners/runner_main.h)."""
from __future__ import annotations

import json
import re

import pytest

from weaklink.demo import runs
from weaklink.builders import firmware as fixtures
from weaklink.check import check
from weaklink.cli import main
from weaklink.run import run
from weaklink.run.compare import compare

U55 = ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram")
U65 = ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram")
U85 = ("ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram_384KB")
U55_RUNNERS = ["extern-example-u55", "removed-example-u55", "removed-custom-u55",
               "weak-example-u55", "weak-custom-u55"]


def _args(target):
    t = fixtures.TARGETS[target]
    return dict(accelerator=t.accelerator, system_config=t.system_config, memory_mode=t.memory_mode)


def litert_checksum(target: str) -> int:
    """FNV-1a of LiteRT's output 0 for the runners' input pattern (what they print)."""
    network = fixtures.TARGETS[target].network
    return runs.litert_checksum(fixtures.cache_dir() / "models" / f"{network}.tflite")


def printed_checksum(uart: str) -> int:
    return int(re.search(r"output 0: \d+ bytes, fnv1a (0x[0-9a-f]+)", uart).group(1), 16)


@pytest.mark.parametrize("name", U55_RUNNERS)
def test_u55_runners_run_to_completion_with_litert_bytes(run_variants, name):
    outcome = run_variants[name]
    report = run(outcome.elf, **_args("u55"), timeout=30)
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    assert len(report.invocations) == 1 and report.invocations[0].status == "ok"
    assert report.invocations[0].interrupt and report.invocations[0].written
    # the driver waits with WFE (fixtures/firmware/driver): the interrupt comes there
    assert report.invocations[0].interrupt_at == "wfe"
    assert "ethosu_invoke_v3+0x" in report.image.where(report.invocations[0].interrupt_pc)
    assert printed_checksum(report.uart) == litert_checksum("u55")
    # the firmware read the NPU's PMU cycle counter: the emulator's cycles, through the registers
    assert f"NPU cycles (PMU) {report.invocations[0].cycles}" in report.uart
    assert report.status == 0


def test_timing_mode_writes_nothing_and_the_firmware_sees_it(run_variants):
    report = run(run_variants["weak-example-u55"].elf, **_args("u55"), functional=False, timeout=30)
    assert report.mode == "timing" and report.exit_code == 0
    assert not report.invocations[0].written
    assert printed_checksum(report.uart) != litert_checksum("u55")


@pytest.mark.parametrize("name", U55_RUNNERS + ["weak-example-u65", "weak-example-u85tcm"])
def test_run_agrees_with_check(run_variants, name):
    """Every field agrees: bases and sizes (region 1's is the blob's scratch size, which the
    backend allocates from the pool), status, cycles and the outcome."""
    outcome = run_variants[name]
    target = outcome.variant.target
    static = check(outcome.elf, **_args(target), map_path=outcome.map)
    report = run(outcome.elf, **_args(target), timeout=30)
    c = compare(static, report)
    differing = [r.field for r in c.rows if r.agree is False]
    assert differing == [] and not c.findings, c.rows
    assert {r.field for r in c.rows if r.agree} >= {"region 0 base", "region 1 base", "region 2 base",
                                                     "status", "cycles", "outcome"}


def test_u65_override_in_sram_runs_with_litert_bytes(run_variants):
    report = run(run_variants["weak-example-u65"].elf, **_args("u65"), timeout=30)
    assert report.exit_code == 0 and printed_checksum(report.uart) == litert_checksum("u65")
    fast = report.invocations[0].bases[2]
    assert 0x31000000 <= fast.address < 0x31200000          # the override in SRAM


@pytest.mark.parametrize("name", ["weak-custom-u65", "removed-example-u65", "weak-custom-u85tcm",
                                  "removed-example-u85tcm"])
def test_missing_override_hangs_where_check_says(run_variants, name):
    outcome = run_variants[name]
    target = outcome.variant.target
    static = check(outcome.elf, **_args(target), map_path=outcome.map)
    report = run(outcome.elf, **_args(target), timeout=3)
    assert static.verdict == "hang" and report.outcome == "hang" and report.status == 1
    job = report.invocations[0]
    assert job.status == "hang" and not job.interrupt and job.bases[2].address == 0
    assert job.interrupt_at is None and job.interrupt_pc is None
    # the same fault: the region check names, at the same command, for the same reason
    assert job.result.fault_region == static.run.fault_region == 2
    assert job.result.diagnosis == static.run.diagnosis
    assert report.diagnosis.startswith("region 2 base 0x0 (BASEP2")
    assert "ethosu_invoke_v3" in report.diagnosis       # where the firmware waits
    assert report.failure() is None


def test_u85_override_in_sram_runs_with_litert_bytes_on_the_corstone_320_map(run_variants):
    """The story's U85 image with the CPU's code and data in the TCMs: it boots from BROM's
    vectors, its driver programs the NPU at Corstone-320's 0x50004000 and takes IRQ 16, and the
    U85 engine computes the bytes the firmware then reads: LiteRT's."""
    outcome = run_variants["weak-example-u85tcm"]
    report = run(outcome.elf, **_args("u85tcm"), timeout=30)
    assert report.board == "mps3-an547 (Corstone-320 map)" and report.image.board.npu_irq == 16
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    (job,) = report.invocations
    assert job.mode == "functional" and job.status == "ok" and job.interrupt and job.note is None
    assert job.interrupt_at == "wfe"
    assert printed_checksum(report.uart) == litert_checksum("u85tcm")
    assert f"NPU cycles (PMU) {job.cycles}" in report.uart
    assert [b.address for b in job.bases] == [0x70000330, 0x7000cbc0, 0x31000000]
    assert (0x31000000, 20816) in job.written           # the fast scratch the stream staged in SRAM
    # the same image for timing only: nothing is written, and the firmware's checksum shows it
    timing = run(outcome.elf, **_args("u85tcm"), functional=False, timeout=30)
    assert timing.exit_code == 0 and not timing.invocations[0].written
    assert printed_checksum(timing.uart) != litert_checksum("u85tcm")


def test_a_corstone_320_image_that_uses_bram_is_one_line(run_variants, capsys):
    """The story's U85 rows keep ExecuTorch's layout (code in BRAM): the loader names the
    address, the board's memory for Corstone-320 and the region QEMU lacks."""
    from weaklink.builders import firmware as fixtures

    u85 = fixtures.build([fixtures.Variant("weak", "example", "u85")])[0]
    code = main(["run", str(u85.elf), *_flags(U85)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "a segment loads 0x12000000.." in err and "BROM 0x11000000" in err
    assert "not BRAM 0x12000000" in err


def test_aliasing_fast_scratch_completes_on_corstone_300(run_variants):
    """The fast scratch inside the DDR arena: Corstone-300's NPU reaches DDR (through AXI0 by
    assumption, printed), so the job completes in the firmware as check predicts; the damage is
    to the bytes (`check --functional` says `wrong`), not a hang."""
    outcome = run_variants["weak-aliasing-u65"]
    static = check(outcome.elf, **_args("u65"))
    report = run(outcome.elf, **_args("u65"), timeout=3)
    assert static.verdict == "ok" and any("DDR" in a for a in static.assumptions)
    assert report.outcome == "exit" and report.invocations[0].status == "ok"
    assert report.invocations[0].result.cycles["total"] == static.run.cycles["total"]


def test_run_command_json_contract(run_variants, capsys):
    code = main(["run", str(run_variants["weak-custom-u55"].elf), *_flags(U55), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["schema_version"] == 1 and data["exit_code"] == 0
    assert "Application exit code: 0." in data["uart"]
    (job,) = data["invocations"]
    assert job["status"] == "ok" and isinstance(job["cycles"], int)
    assert [b["region"] for b in job["bases"]] == [0, 1, 2]
    assert all({"region", "address", "size"} <= set(b) for b in job["bases"])


def test_run_command_table_and_hang_exit_status(run_variants, capsys):
    code = main(["run", str(run_variants["weak-custom-u65"].elf), *_flags(U65), "--timeout", "3"])
    out = capsys.readouterr().out
    assert code == 1 and "HANG" in out and "diagnosis: region 2 base 0x0" in out


def test_check_run_joins_both(run_variants, capsys):
    code = main(["check", str(run_variants["weak-custom-u65"].elf), *_flags(U65), "--run", "--timeout", "3",
                 "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["npu"] == "hang" and data["run"]["outcome"] == "hang"
    assert "run-mismatch" not in data["findings"]
    rows = {r["field"]: r for r in data["comparison"]["rows"]}
    assert rows["region 1 size"]["agree"]
    assert rows["region 2 base"]["agree"] and rows["outcome"]["agree"] and rows["status"]["agree"]


def test_demo_run_column(run_variants):
    from weaklink.demo import run_demo

    report = run_demo(run=True, timeout=3)
    by = {f"{r.backend}-{r.runner}-{r.target}": r for r in report.rows}
    assert by["weak-custom-u55"].run.cell().startswith("exit 0")
    assert by["weak-custom-u65"].run.cell().startswith("hang")
    assert by["weak-custom-u85"].run.cell().startswith("not run: code at 0x12000000")
    assert by["weak-example-u85tcm"].run.cell() == "exit 0, output = LiteRT"
    assert by["weak-custom-u85tcm"].run.cell().startswith("hang")
    # check's `error` (out of bounds) and the run agree: the firmware ends, the NPU overran
    assert by["weak-too-small-u65"].run.cell() == "exit 0, NPU wrote out of bounds"
    assert by["weak-example-u85tcm"].run.to_json()["output_equals_litert"] is True
    assert by["extern-custom-u55"].run is None                      # the link failed
    assert "run on QEMU" in report.to_table()
    # the README shows this table (`./dev.sh demo`), with the demo's own 5 s hang timeout
    import re
    from weaklink.cachedir import REPO
    readme = (REPO / "README.md").read_text().split("## Two commands", 1)[1]
    shown = re.findall(r"```\n(backend .*?)```", readme, re.S)[0].rstrip()
    assert report.to_table().rstrip().replace("hang (3 s)", "hang (5 s)") == shown
    assert report.to_json()["rows"][0]["run"]["ran"] is True


def _flags(config):
    return ["--accelerator", config[0], "--system-config", config[1], "--memory-mode", config[2]]


def test_a_stripped_image_runs_without_any_symbol(run_variants, tmp_path):
    """The NPU is served at the register level: no symbol is needed. Without ethosu_invoke_v3
    the sizes the firmware passes are not visible, and the report says so."""
    import subprocess

    from weaklink import toolchain

    stripped = tmp_path / "stripped.elf"
    subprocess.run([toolchain.tool("strip"), "--strip-all", "-o", str(stripped),
                    str(run_variants["weak-example-u55"].elf)], check=True)
    report = run(stripped, **_args("u55"), timeout=30)
    assert report.image.image.functions == [] and report.image.functions == {} and report.calls == []
    assert report.exit_code == 0 and printed_checksum(report.uart) == litert_checksum("u55")
    job = report.invocations[0]
    assert [b.size for b in job.bases] == [None, None, None]
    assert {b.size_source for b in job.bases} == {"not visible at the register level"}
    assert job.bases[1].address == 0x31000000


def test_one_model_run_four_times_is_no_mismatch(run_variants, capsys):
    """runners/repeat.cpp invokes the model 4 times and compares each output with the first
    (as Zephyr's tflm_ethosu sample runs 2 threads x 2 jobs): check found one operator, the run
    has 4 jobs of it, and every field of every job agrees."""
    outcome = run_variants["weak-repeat-u55"]
    code = main(["check", str(outcome.elf), *_flags(U55), "--run", "--timeout", "30", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["comparison"]["agree"] and "run-mismatch" not in data["findings"]
    assert len(data["run"]["invocations"]) == 4 and data["run"]["exit_code"] == 0
    assert "4 invocations, every output as the first" in data["run"]["uart"]
    rows = data["comparison"]["rows"]
    assert [r["run"] for r in rows if r["field"] == "NPU jobs"] == ["4 job(s): operator 0 ×4"]
    assert {r["job"] for r in rows if r["field"] == "model" and r["agree"]} == {0, 1, 2, 3}
    assert len(PRINTED_ALL.findall(data["run"]["uart"])) == 4
    assert set(PRINTED_ALL.findall(data["run"]["uart"])) == {f"0x{litert_checksum('u55'):08x}"}


def test_four_invocations_timing_only_fail_the_firmware_s_own_comparison(run_variants):
    """Nothing written (timing only): the firmware's own comparison says so, as Zephyr's sample
    printed `Expected output tensor data mismatch`."""
    report = run(run_variants["weak-repeat-u55"].elf, **_args("u55"), functional=False, timeout=30)
    assert report.exit_code == 1 and "invocation 0: output not written by the NPU: mismatch" in report.uart
    assert report.timing_only == []          # asked for: not a fallback


def test_check_run_keeps_the_verdict_of_an_image_that_cannot_run(capsys, cross_toolchain, qemu):
    """A Corstone-320 image with code in BRAM: check's report stands, and why it did not run."""
    u85 = fixtures.build([fixtures.Variant("weak", "custom", "u85")])[0]
    code = main(["check", str(u85.elf), *_flags(U85), "--run", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["npu"] == "hang" and data["run"] is None and data["comparison"] is None
    assert "outside mps3-an547's memory" in data["not_run"]
    code = main(["check", str(u85.elf), *_flags(U85), "--run"])
    out = capsys.readouterr().out
    assert code == 1 and "run: not run: a segment loads 0x12000000" in out and "HANG" in out


PRINTED_ALL = re.compile(r"output 0: \d+ bytes, fnv1a (0x[0-9a-f]+)")


def test_a_job_the_engine_cannot_compute_is_not_reported_ok_silently(run_variants, capsys):
    """runners/spoiled.cpp overwrites the weights: the stream is timed, its outputs are not
    computed. The job says so, the summary says so, and the run's status is 1 although the
    firmware (which does not check its outputs) exits 0."""
    elf = str(run_variants["weak-spoiled-u55"].elf)
    code = main(["run", elf, *_flags(U55), "--timeout", "30"])
    out = capsys.readouterr().out
    assert code == 1 and "exit 0, 1 NPU job(s), 1 of them timing only (outputs not computed)" in out
    assert "NPU job 0: ok in 67268 cycles, TIMING ONLY: its outputs were not written" in out
    assert "outputs not computed, timing only: CONV at stream offset" in out
    assert "warning: NPU job(s) 0 ran for timing only" in out
    code = main(["run", elf, *_flags(U55), "--timeout", "30", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["timing_only_jobs"] == [0] and data["invocations"][0]["mode"] == "timing"
    assert data["invocations"][0]["written"] == []
    code = main(["check", elf, *_flags(U55), "--run", "--timeout", "30", "--json"])
    data = json.loads(capsys.readouterr().out)
    rows = [r for r in data["comparison"]["rows"] if r["field"] == "outputs"]
    assert [r["agree"] for r in rows] == [None] and rows[0]["run"].startswith("not computed, timing only")

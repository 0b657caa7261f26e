"""`check --fail-on VERDICTS` and `--allow-unknown`: which verdicts exit 1 (the CMake gate's
FAIL_ON and ALLOW_UNKNOWN), the gate's line and JSON, and contradictions as usage errors."""
from __future__ import annotations

import json

import pytest

from weaklink.cli import main

U85 = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
       "--memory-mode", "Dedicated_Sram_384KB"]


@pytest.fixture(scope="module")
def unknown_image(cross_toolchain):
    from weaklink.builders import tflm

    (v,) = [v for v in tflm.VARIANTS if v.name == "fast-via-pointer-u85"]
    return tflm.build_variant(v).elf


def _check(capsys, *argv) -> tuple[int, str]:
    code = main(["check", *map(str, argv)])
    return code, capsys.readouterr().out


def test_without_the_options_every_verdict_but_ok_fails(firmware, capsys):
    code, out = _check(capsys, firmware["weak-custom-u85"].elf, *U85)
    assert code == 1 and "NPU HANG" in out and "gate:" not in out


def test_fail_on_chooses_the_failing_verdicts(firmware, capsys):
    hang = firmware["weak-custom-u85"].elf
    code, out = _check(capsys, hang, *U85, "--fail-on", "error,wrong")
    assert code == 0 and out.rstrip().endswith("gate: passed: verdict hang is allowed (--fail-on error,wrong)")
    code, out = _check(capsys, hang, *U85, "--fail-on", "error", "--fail-on", "hang")
    assert code == 1 and out.rstrip().endswith("gate: failed: verdict hang (--fail-on error,hang)")
    code, out = _check(capsys, firmware["weak-example-u85"].elf, *U85, "--fail-on", "hang")
    assert code == 0 and out.rstrip().endswith("gate: passed (--fail-on hang)")


def test_gate_in_json(firmware, capsys):
    code, out = _check(capsys, firmware["weak-custom-u85"].elf, *U85, "--json", "--fail-on", "hang,error")
    doc = json.loads(out)
    assert code == 1 and doc["npu"] == "hang"
    assert doc["gate"] == {"fail_on": ["hang", "error"], "failed": True}
    code, out = _check(capsys, firmware["weak-custom-u85"].elf, *U85, "--json")
    assert "gate" not in json.loads(out)


def test_allow_unknown(unknown_image, capsys):
    code, out = _check(capsys, unknown_image, *U85)
    assert code == 1 and "NPU UNKNOWN" in out
    code, out = _check(capsys, unknown_image, *U85, "--allow-unknown")
    assert code == 0 and "diagnosis: cannot tell:" in out
    assert out.rstrip().endswith("gate: passed: verdict unknown is allowed (--fail-on hang,error,wrong)")
    code, out = _check(capsys, unknown_image, *U85, "--fail-on", "unknown")
    assert code == 1 and out.rstrip().endswith("gate: failed: verdict unknown (--fail-on unknown)")


@pytest.mark.parametrize("argv, message", [
    (["--fail-on", "ok"], "--fail-on: ok is no failing verdict (verdicts: hang, error, wrong, unknown)"),
    (["--fail-on", ","], "--fail-on: expected a comma list of verdicts"),
    (["--fail-on", "hang,unknown", "--allow-unknown"], "--allow-unknown contradicts --fail-on unknown"),
])
def test_usage_errors(tmp_path, capsys, argv, message):
    code = main(["check", str(tmp_path / "none.elf"), *U85, *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err

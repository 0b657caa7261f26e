"""`weaklink diff` on the command line: exit codes, JSON, usage errors and bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from weaklink.cli import main


def test_report_only_exits_0_even_with_changes(builds, capsys):
    assert main(["diff", str(builds["grown"].elf), str(builds["moved"].elf)]) == 0
    out = capsys.readouterr().out
    assert "region-changed" in out and "binding-changed" in out


def test_fail_on_exits_1_and_says_which_gate(builds, capsys):
    code = main(["diff", str(builds["grown"].elf), str(builds["moved"].elf),
                 "--map-old", str(builds["grown"].map), "--map-new", str(builds["moved"].map),
                 "--fail-on", "new-findings,region-changed"])
    assert code == 1
    assert "gate FAILED: region-changed" in capsys.readouterr().out


def test_json_output(builds, capsys):
    assert main(["diff", "--json", str(builds["base"].elf), str(builds["grown"].elf),
                 "--fail-on", "binding-changed"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1
    assert sorted(c["symbol"] for c in doc["changes"]) == ["grow", "pad_word"]
    assert doc["gates"] == {"fail_on": ["binding-changed"], "failed": []}
    assert doc["bases_changed"] is None and doc["verdict_before"] is None


@pytest.mark.parametrize("extra, message", [
    (["--fail-on", "bogus"], "unknown gate bogus"),
    (["--fail-on", "verdict"], "needs --check"),
    (["--check"], "--check needs --accelerator"),
    (["--accelerator", "ethos-u85-256"], "need --check"),
    (["--json", "--github"], "--github"),
])
def test_usage_errors_exit_2(builds, capsys, extra, message):
    assert main(["diff", str(builds["base"].elf), str(builds["grown"].elf), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_input_is_one_line_and_writes_nothing(builds, tmp_path):
    bad = tmp_path / "cut.elf"
    bad.write_bytes(builds["base"].elf.read_bytes()[:100])
    sarif = tmp_path / "out.sarif"
    proc = subprocess.run([sys.executable, "-m", "weaklink.cli", "diff", str(builds["base"].elf),
                           str(bad), "--sarif", str(sarif)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert "cut.elf" in proc.stderr and "Traceback" not in proc.stderr
    assert not sarif.exists()

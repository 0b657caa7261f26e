"""The fuzz script's short run in CI: every input kind and CLI, no crash, no hang."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from weaklink import toolchain

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not toolchain.available(), reason="needs the arm-none-eabi toolchain for the seeds")
def test_short_fuzz_run_has_no_crash_and_no_hang():
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks/fuzz.py"), "--inputs", "330",
                           "--seed", "13", "--timeout", "60"],
                          capture_output=True, text=True, timeout=1800)
    last = proc.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"fuzz (\d+) inputs: (\d+) crashes, (\d+) hangs, max RSS (\d+) MiB", last)
    assert m, proc.stdout + proc.stderr
    assert int(m[1]) == 330
    assert (int(m[2]), int(m[3])) == (0, 0), proc.stderr[-4000:]
    assert proc.returncode == 0
    # every kind was exercised, and mutants reached both the accept and the reject paths
    kinds = dict(re.findall(r"^\s+(\S+)\s+exit 0:\s+(\d+)", proc.stdout, re.M))
    assert {"elf", "object", "archive", "map", "npz", "blob", "binding", "vela.ini"} <= set(kinds)

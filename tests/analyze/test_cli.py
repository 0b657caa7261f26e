"""`weaklink analyze` end to end: the JSON contract, exit codes, the table, --plot."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from weaklink.cli import main

SYMBOL_KEYS = {"name", "demangled", "binding", "type", "address", "size", "section", "region",
               "defined_in"}
QUERY_KEYS = {"found", "binding", "address", "size", "section", "region", "value", "points_to"}


def _json(capsys, argv):
    code = main(["analyze", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_json_contract(small_image, capsys, cross_toolchain):
    code, doc = _json(capsys, [str(small_image.elf), "--map", str(small_image.map),
                               "--symbol", "table_ptr", "--symbol", "missing"])
    assert code == 0
    assert doc["schema_version"] == 1 and doc["machine"] == "ARM"
    assert {"file", "entry", "regions", "symbols", "queried", "findings"} <= set(doc)
    assert doc["regions"][0] == {"name": "FLASH", "origin": 0x10000000, "length": 0x10000}
    for s in doc["symbols"]:
        assert SYMBOL_KEYS <= set(s) and s["binding"] in ("global", "weak")
        assert s["type"] in ("object", "func", "notype", "tls", "section", "file")
    nm = subprocess.run([cross_toolchain.tool("nm"), "-S", str(small_image.elf)],
                        capture_output=True, text=True).stdout.split("\n")
    nm_globals = {line.split()[-1] for line in nm if line and line.split()[-2] in "DBTRVWA"}
    assert {s["name"] for s in doc["symbols"]} == nm_globals
    assert QUERY_KEYS <= set(doc["queried"]["table_ptr"])
    assert doc["queried"]["missing"]["found"] is False
    by_name = {s["name"]: s for s in doc["symbols"]}
    assert by_name["_ZN2ns6weak_vE"]["demangled"] == "ns::weak_v"
    assert by_name["table"]["region"] == "RAM" and by_name["table"]["section"] == ".data"
    rules = {(f["rule"], f["symbol"]) for f in doc["findings"]}
    assert ("near-miss-override", "weak_v") in rules
    assert ("weak-default-survived", "weak_ptr") in rules
    for f in doc["findings"]:
        assert set(f) == {"rule", "severity", "symbol", "message"}


def test_expectation_exit_codes(small_image, capsys):
    base = ["analyze", str(small_image.elf), "--map", str(small_image.map)]
    assert main([*base, "--expect-region", "scratch_ptr=SCRATCH"]) == 0
    assert main([*base, "--expect-region", "scratch_ptr=RAM"]) == 1
    assert main([*base, "--expect-override", "weak_ptr"]) == 1
    assert main([*base, "--expect-override", "table"]) == 0
    out = capsys.readouterr().out
    assert "pointer-outside-region" in out and "weak-default-survived" in out


def test_table_output(small_image, capsys):
    assert main(["analyze", str(small_image.elf), "--board", "corstone-320",
                 "--symbol", "table_ptr"]) == 0
    out = capsys.readouterr().out
    assert "regions (from board)" in out and "SRAM" in out
    assert "SYMBOL" in out and "table+0x8" in out


def test_plot_writes_png(small_image, tmp_path, capsys):
    png = tmp_path / "map.png"
    assert main(["analyze", str(small_image.elf), "--map", str(small_image.map),
                 "--symbol", "scratch_ptr", "--symbol", "table", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_usage_error_exits_2(small_image, capsys):
    assert main(["analyze", str(small_image.elf), "--expect-region", "nope"]) == 2
    assert "SYM=REGION" in capsys.readouterr().err


def test_subprocess_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "junk.elf"
    bad.write_bytes(b"hello world")
    proc = subprocess.run([sys.executable, "-m", "weaklink.cli", "analyze", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(bad) in proc.stderr and "offset 0" in proc.stderr


@pytest.mark.parametrize("variant, unit", [
    ("weak-near-miss-u85", "backend/EthosUBackend.cpp"),       # DWARF: one unit defines it
    # the backend's weak default and the override both describe it: the map's --cref names
    # the object that won, and the map places the override unit's scratch array in it
    ("weak-wrong-memory-u65", "overrides/fast_scratch.cpp")])
def test_fixture_json_round_trip(firmware, variant, unit, capsys):
    o = firmware[variant]
    code, doc = _json(capsys, [str(o.elf), "--map", str(o.map), "--symbol",
                               "ethosu_fast_scratch"])
    q = doc["queried"]["ethosu_fast_scratch"]
    assert q["found"] and q["defined_in"].endswith(unit)
    assert any(s["name"] == "ethosu_fast_scratch" for s in doc["symbols"])


def test_link_inputs_option_takes_the_rest(firmware, capsys):
    o = firmware["weak-override-in-archive-u85"]
    inputs = [a for a in o.ld_args if a.endswith((".o", ".a"))]
    code, doc = _json(capsys, [str(o.elf), "--board", "corstone-320",
                               "--expect-override", "ethosu_fast_scratch",
                               "--link-dir", str(o.cwd), "--link-inputs", *inputs])
    assert code == 1
    rules = {(f["rule"], f["severity"], f["symbol"]) for f in doc["findings"]}
    assert ("override-not-extracted", "warning", "ethosu_fast_scratch") in rules
    assert ("weak-default-survived", "warning", "ethosu_fast_scratch") in rules


def test_lean_entry_point_matches_cli(small_image):
    argv = ["analyze", "--json", str(small_image.elf), "--symbol", "table_ptr"]
    full = subprocess.run([sys.executable, "-m", "weaklink.cli", *argv], capture_output=True)
    lean = subprocess.run([sys.executable, "-m", "weaklink.analyze", *argv[1:]],
                          capture_output=True)
    assert full.returncode == lean.returncode == 0
    assert json.loads(full.stdout) == json.loads(lean.stdout)


def test_repeatable_and_multi_value_options(small_image, capsys):
    code, doc = _json(capsys, [str(small_image.elf), "--symbol", "table", "half",
                               "--symbol", "big"])
    assert code == 0 and list(doc["queried"]) == ["table", "half", "big"]


def test_unknown_expected_region_is_a_usage_error(small_image, capsys):
    assert main(["analyze", str(small_image.elf), "--map", str(small_image.map),
                 "--expect-region", "table_ptr=SRAM"]) == 2
    err = capsys.readouterr().err
    assert "no region SRAM" in err and "FLASH, RAM, SCRATCH" in err


def test_console_entry_keeps_the_report_and_the_status(small_image, capsys):
    """entry() (the console script): the whole report arrives, with main()'s exit status."""
    argv = ["analyze", "--json", str(small_image.elf), "--expect-override", "no_such_symbol"]
    proc = subprocess.run([sys.executable, "-m", "weaklink.cli", *argv], capture_output=True)
    assert main(argv) == 1 == proc.returncode
    assert proc.stdout == capsys.readouterr().out.encode() and proc.stderr == b""


def test_console_entry_when_the_reader_has_quit():
    """A reader that quit before the buffered output was flushed (| head): main()'s status and
    no error output. An ordinary interpreter exit prints "Exception ignored ... BrokenPipeError"
    and exits 120 here."""
    code = ("import sys, weaklink.cli as c\n"
            "from weaklink.errors import exit_status\n"
            "c.main = lambda argv=None: exit_status('weaklink', lambda: sys.stdout.write('x' * 100) and 3)\n"
            "c.entry()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}   # stdout buffered
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.close()                # before the child has even started writing
    assert proc.wait(timeout=60) == 3
    assert proc.stderr.read() == b""

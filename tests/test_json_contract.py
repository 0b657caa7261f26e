"""docs/json-contract.md against the real --json output: each command's documented top-level
fields are exactly what it prints (a field marked "only with/for" may be absent), so the
document cannot drift from the code silently."""
from __future__ import annotations

import json
import re

import pytest

from npu.cli import main as npu_main
from weaklink.cli import main
from weaklink.cachedir import REPO

U85 = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
       "--memory-mode", "Dedicated_Sram_384KB"]


def documented(heading: str) -> tuple[set[str], set[str]]:
    """(every field, the fields always present) of the first table under `## heading`."""
    text = (REPO / "docs" / "json-contract.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    every, always = set(), set()
    for line in section.splitlines():
        cells = line.split(" | ")
        if not line.startswith("| `") or len(cells) < 3:
            continue
        names = set(re.findall(r"`([a-z_0-9]+)`", cells[0]))
        every |= names
        if not cells[-1].startswith("only "):
            always |= names
    assert every, f"no field table under {heading!r}"
    return every, always


def assert_matches(heading: str, doc: dict):
    every, always = documented(heading)
    assert doc["schema_version"] == 1 and next(iter(doc)) == "schema_version"
    assert always - set(doc) == set(), f"{heading}: documented but not printed"
    assert set(doc) - every == set(), f"{heading}: printed but not documented"


def run_json(capsys, argv, cli=main) -> tuple[int, object]:
    code = cli(argv)
    return code, json.loads(capsys.readouterr().out)


def test_link(cross_toolchain, tmp_path, capsys, monkeypatch):
    from weaklink.scenario import Scenario

    sc = Scenario(tmp_path)
    sc.c("main.o", "extern int *hook; int main(void) { return *hook; } void _start(void) {}")
    sc.c("default.o", "__attribute__((weak)) int *hook;")
    sc.c("override.o", "static int v; int *hook = &v;")
    sc.archive("liboverride.a", ["override.o"])
    monkeypatch.chdir(tmp_path)
    code, doc = run_json(capsys, ["link", "--json", "--why-not", "hook", "main.o", "default.o",
                                  "liboverride.a"])
    assert code == 0 and doc["why_not"][0]["reason"] == "blocked-by-weak"
    assert_matches("`weaklink link --json`", doc)
    assert set(doc["symbols"]["hook"]) == {"binding", "file", "size", "section", "value", "kept"}
    code, doc = run_json(capsys, ["link", "--json", "main.o"])
    assert code == 1 and doc["errors"][0]["kind"] == "undefined-reference"
    assert_matches("`weaklink link --json`", doc)


def test_analyze(firmware, capsys):
    elf = firmware["weak-custom-u85"].elf
    code, doc = run_json(capsys, ["analyze", "--json", str(elf), "--symbol", "ethosu_fast_scratch"])
    assert code == 0
    assert_matches("`weaklink analyze --json`", doc)
    assert set(doc["findings"][0]) == {"rule", "severity", "symbol", "message"}


@pytest.mark.parametrize("variant,code,verdict", [("weak-example-u85", 0, "ok"),
                                                  ("weak-custom-u85", 1, "hang")])
def test_check(firmware, capsys, variant, code, verdict):
    got, doc = run_json(capsys, ["check", "--json", str(firmware[variant].elf), *U85])
    assert (got, doc["npu"]) == (code, verdict)
    assert_matches("`weaklink check --json`", doc)
    assert_matches("`npu run --json`", doc["emulation"])


def test_diff(firmware, capsys):
    old, new = firmware["weak-example-u85"], firmware["weak-custom-u85"]
    code, doc = run_json(capsys, ["diff", "--json", str(old.elf), str(new.elf), "--map-old",
                                  str(old.map), "--map-new", str(new.map), "--check", *U85,
                                  "--fail-on", "verdict"])
    assert code == 1 and doc["gates"]["failed"] == ["verdict"]
    assert_matches("`weaklink diff --json`", doc)


def test_demo(firmware, capsys):
    code, doc = run_json(capsys, ["demo", "--json"])
    assert code == 0
    assert_matches("`weaklink demo --json`", doc)


def test_fvp_list_params(capsys):
    code, doc = run_json(capsys, ["fvp", "--list-params", "--json"])
    assert code == 0
    assert_matches("`weaklink fvp --list-params --json`", doc)


def test_npu_run_and_decode(firmware, capsys):
    from weaklink.builders import firmware as fixtures

    blob = str(fixtures.model_blob("u85"))
    code, doc = run_json(capsys, ["run", "--json", blob, *U85], cli=npu_main)
    assert code == 0 and doc["status"] == "ok"
    assert_matches("`npu run --json`", doc)
    code, doc = run_json(capsys, ["decode", "--json", blob], cli=npu_main)
    assert code == 0 and set(doc[0]) == {"offset", "command", "param", "payload", "fields"}

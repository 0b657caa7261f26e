"""`weaklink demo --diff`: the seed story as three diffs, each asserted."""
from __future__ import annotations

import json

from weaklink.cli import main
from weaklink.diff.render import render

SRAM_ARRAY = (0x31000000, 0x60000, "SRAM")      # the example runner's 384 KB array on C-320


def _fast(side) -> tuple:
    return (side["address"], side["size"], side["memory"])


def _kinds(report) -> dict[str, set[str]]:
    return {c.symbol: set(c.kinds) for c in report.changes}


def test_quick_fix_drops_the_fast_scratch(story):
    r = story[("extern-example-u85", "removed-example-u85")]
    (base,) = [b.to_json() for b in r.bases_changed]
    assert base["region"] == 2
    assert _fast(base["before"]) == SRAM_ARRAY
    assert base["before"]["binding"] == "global"
    assert (base["after"]["address"], base["after"]["size"]) == (0, 0)
    assert (r.verdict_before, r.verdict_after) == ("ok", "hang")
    assert "fast-scratch-null" in {f.rule for f in r.new_findings}
    assert r.failed == ("new-findings", "verdict") and r.exit_code == 1
    kinds = _kinds(r)
    # the runner's C++-namespaced definitions are gone, plain C ones nobody reads came in
    assert kinds["_ZN10executorch8backends3arm19ethosu_fast_scratchE"] == {"removed"}
    assert kinds["ethosu_fast_scratch"] == {"added"}
    # the hang rests on what an unanswered transaction does: the diff says so, as check does
    assert r.assumptions == list(r.check_after.assumptions) != []
    assert r.to_json()["assumptions"] == r.assumptions
    assert f"  assumption: {r.assumptions[0]}" in render(r).splitlines()


def test_final_fix_restores_it(story):
    r = story[("removed-example-u85", "weak-example-u85")]
    (base,) = [b.to_json() for b in r.bases_changed]
    assert (base["before"]["address"], base["before"]["size"]) == (0, 0)
    assert _fast(base["after"]) == SRAM_ARRAY
    assert base["after"]["symbol"] == "ethosu_fast_scratch"
    assert base["after"]["binding"] == "global"
    assert (r.verdict_before, r.verdict_after) == ("hang", "ok")
    assert "fast-scratch-null" in {f.rule for f in r.fixed_findings}
    assert r.new_findings == ()
    assert r.failed == () and r.exit_code == 0


def test_without_the_override_the_weak_default_survives(story):
    r = story[("weak-example-u85", "weak-custom-u85")]
    c = {c.symbol: c for c in r.changes}["ethosu_fast_scratch"]
    assert {"binding-changed", "definer-changed", "points-to-changed"} <= set(c.kinds)
    assert (c.before.binding, c.after.binding) == ("global", "weak")
    assert c.before.points_to.symbol == "dedicated_sram" and c.after.value == 0
    assert c.before.defined_in.endswith("runners/example.cpp")
    assert c.after.defined_in.endswith("backend/EthosUBackend.cpp")
    assert _kinds(r)["dedicated_sram"] == {"removed"}
    (base,) = [b.to_json() for b in r.bases_changed]
    assert _fast(base["before"]) == SRAM_ARRAY and base["after"]["address"] == 0
    assert base["after"]["binding"] == "weak"
    assert (r.verdict_before, r.verdict_after) == ("ok", "hang")
    assert {"weak-default-survived", "fast-scratch-null"} <= {f.rule for f in r.new_findings}
    assert r.failed == ("new-findings", "binding-changed", "verdict")


def test_demo_diff_command(story, capsys):
    assert main(["demo", "--diff", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(d["old_variant"], d["new_variant"]) for d in doc["diffs"]] == list(story)
    assert [(d["verdict_before"], d["verdict_after"]) for d in doc["diffs"]] == \
        [("ok", "hang"), ("hang", "ok"), ("ok", "hang")]
    assert main(["demo", "--diff"]) == 0
    text = capsys.readouterr().out
    assert text.count("verdict  ok -> hang") == 2 and "verdict  hang -> ok" in text
    assert "0x31000000/384 KB in SRAM" in text


def test_readme_diff_output_is_real(firmware, capsys, monkeypatch):
    """The README's diff example runs as shown: docs/commands.md prints its whole output, byte
    for byte, and the README's shortened copy is that output with runs of lines cut at `…`."""
    import re

    from weaklink.cachedir import REPO

    text = (REPO / "README.md").read_text()
    section = text.split("## A regression gate: `weaklink diff`", 1)[1]
    command, short = re.findall(r"```(?:sh)?\n(.*?)```", section, re.S)[:2]
    argv = command.replace("\\\n", " ").split()
    assert argv[:2] == ["weaklink", "diff"]
    monkeypatch.chdir(firmware["weak-custom-u85"].elf.parent)
    assert main(argv[1:]) == 1
    output = capsys.readouterr().out
    guide = (REPO / "docs" / "commands.md").read_text().split("## 5. `weaklink diff`", 1)[1]
    assert re.findall(r"```\n(.*?)```", guide, re.S)[0] == output
    lines = iter(output.splitlines())
    for line in short.splitlines():
        if line != "…":
            assert line in lines, line         # in order; `in` consumes the iterator

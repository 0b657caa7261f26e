"""`weaklink demo`: the 16 rows of the story, from real builds, with the model checked against ld."""
from __future__ import annotations

import json

import pytest

from weaklink.cli import main
from weaklink.demo import run_demo
from weaklink.resolve import link
from weaklink.resolve.gnu.oracle import differences, recorded_run

# (backend, runner, target): (link, NPU verdict); the expected table.
EXPECTED = {
    ("extern", "example", "u55"): ("ok", "ok"),
    ("extern", "example", "u85"): ("ok", "ok"),
    ("extern", "custom", "u55"): ("undefined-reference", None),
    ("extern", "custom", "u85"): ("undefined-reference", None),
    ("removed", "example", "u55"): ("ok", "ok"),
    ("removed", "example", "u85"): ("ok", "hang"),
    ("removed", "custom", "u55"): ("ok", "ok"),
    ("removed", "custom", "u85"): ("ok", "hang"),
    ("weak", "example", "u55"): ("ok", "ok"),
    ("weak", "example", "u85"): ("ok", "ok"),
    ("weak", "custom", "u55"): ("ok", "ok"),
    ("weak", "custom", "u85"): ("ok", "hang"),
    ("weak", "override-in-archive", "u85"): ("ok", "hang"),
    ("weak", "near-miss", "u85"): ("ok", "hang"),
    ("weak", "too-small", "u85"): ("ok", "error"),
    ("weak", "wrong-memory", "u65"): ("ok", "hang"),
}
ROW_KEYS = {"backend", "runner", "target", "link", "model_agrees_with_ld", "fast_scratch", "npu",
            "cycles", "findings"}


@pytest.fixture(scope="module")
def demo(firmware):
    return run_demo()


def test_sixteen_rows_as_in_the_story(demo):
    got = {(r.backend, r.runner, r.target): (r.link, r.npu) for r in demo.rows}
    assert got == EXPECTED


def test_model_agrees_with_ld_on_every_row(demo):
    assert [r.disagreements for r in demo.rows if not r.model_agrees_with_ld] == []
    assert demo.exit_code == 0


def test_extern_custom_reports_the_two_mangled_names(demo):
    row = next(r for r in demo.rows if (r.backend, r.runner, r.target) == ("extern", "custom", "u85"))
    assert row.link_errors == (
        ("undefined-reference", "executorch::backends::arm::ethosu_fast_scratch"),
        ("undefined-reference", "executorch::backends::arm::ethosu_fast_scratch_size"))
    assert row.fast_scratch is None and row.cycles is None and row.findings == []


def test_cycles_only_on_ok_rows_and_findings_on_the_pitfalls(demo):
    for r in demo.rows:
        assert (r.cycles is not None) == (r.npu == "ok"), r
    pitfalls = {r.runner: set(r.findings) for r in demo.rows if r.runner not in ("example", "custom")}
    assert "override-not-extracted" in pitfalls["override-in-archive"]
    assert "near-miss-override" in pitfalls["near-miss"]
    assert "fast-scratch-too-small" in pitfalls["too-small"]
    assert "fast-scratch-unreachable" in pitfalls["wrong-memory"]


def test_the_comparison_can_fail(firmware):
    """The oracle is not vacuous: the weak backend's prediction does not fit the extern link."""
    weak, extern = firmware["weak-custom-u85"], firmware["extern-custom-u85"]
    model = link(weak.ld_args, cwd=str(weak.cwd), cref=True)
    real = recorded_run(extern.returncode, extern.stderr, extern.map)
    diffs = differences(model, real, demangled=True)
    assert any(d.startswith("ok:") for d in diffs) and any(d.startswith("errors:") for d in diffs)
    # and raw names do not match ld's demangled map without demangling
    ext_model = link(extern.ld_args, cwd=str(extern.cwd), cref=True)
    assert differences(ext_model, real, demangled=True) == []
    assert differences(ext_model, real, demangled=False) != []


def test_json_contract(firmware, capsys):
    assert main(["demo", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and len(doc["rows"]) == 16
    for row in doc["rows"]:
        assert ROW_KEYS <= set(row)
        assert row["link"] in ("ok", "undefined-reference", "multiple-definition")
        assert row["npu"] in ("ok", "hang", "error", None)
        if row["fast_scratch"] is not None:
            assert set(row["fast_scratch"]) == {"binding", "value", "size", "region"}


def test_table_shows_agreement_and_ok_star(firmware, capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "model agrees with arm-none-eabi-ld on 16/16 links" in out
    assert "ok*" in out


def test_u85_rows_that_ran_computed_litert_outputs(demo):
    """The outputs column: U85 rows whose inference completed compute LiteRT's bytes; other rows
    (U55, failed links, hangs, errors) compute nothing."""
    pytest.importorskip("ai_edge_litert.interpreter")
    for r in demo.rows:
        ran = r.target == "u85" and r.npu in ("ok", "wrong")
        assert (r.functional is not None) == ran, r
        if ran:
            assert r.functional.reference == "LiteRT" and r.functional.equal and r.functional.text == "= LiteRT"
            assert r.to_json()["functional"]["outputs_equal"] is True
    assert sum(r.functional is not None for r in demo.rows) == 2
    assert "= LiteRT" in demo.to_table() and "against LiteRT's reference kernels" in demo.to_table()

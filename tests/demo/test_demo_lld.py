"""`weaklink demo --linker lld`: the 16 variants linked by ld.lld-16 with the same scripts,
the lld model checked against each link, and the story's outcomes under lld."""
from __future__ import annotations

import json

import pytest

from weaklink.cli import main
from weaklink.demo import run_demo
from weaklink.resolve.lld import oracle

pytestmark = pytest.mark.skipif(not oracle.available(), reason="ld.lld-16 not installed")


@pytest.fixture(scope="module")
def demo_lld(firmware):
    return run_demo(linker="lld")


def test_lld_model_agrees_with_ld_lld_on_every_row(demo_lld):
    assert len(demo_lld.rows) == 16
    assert [r.disagreements for r in demo_lld.rows if not r.model_agrees_with_ld] == []
    assert demo_lld.exit_code == 0


def test_the_story_does_not_change_under_lld(demo_lld):
    from test_demo import EXPECTED
    got = {(r.backend, r.runner, r.target): (r.link, r.npu) for r in demo_lld.rows}
    assert got == EXPECTED


def test_lld_words_the_missing_fast_scratch_its_own_way(demo_lld, firmware):
    row = next(r for r in demo_lld.rows
               if (r.backend, r.runner, r.target) == ("extern", "custom", "u85"))
    assert row.link_errors == (
        ("undefined-reference", "executorch::backends::arm::ethosu_fast_scratch"),
        ("undefined-reference", "executorch::backends::arm::ethosu_fast_scratch_size"))


def test_override_in_archive_is_not_extracted_by_lld_either(demo_lld):
    from weaklink.builders import firmware as fixtures
    out = {o.variant.name: o for o in fixtures.build(linker="lld")}
    o = out["weak-override-in-archive-u85"]
    why = o.why_extract.read_text()
    assert "librunner_overrides.a" not in why and "libethosu_backend.a" in why


def test_demo_linker_lld_json(firmware, capsys):
    assert main(["demo", "--linker", "lld", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["linker"] == "lld" and len(out["rows"]) == 16

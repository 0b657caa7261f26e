"""GitHub Actions workflow-command annotations (--github)."""
from __future__ import annotations

from pathlib import Path

from weaklink.cli import main
from weaklink.ci.github import annotations, escape_data, escape_property
from weaklink.ci.results import Result


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"          # only properties escape : and ,


def test_annotation_lines(tmp_path):
    image = str(tmp_path / "fw.elf")
    results = [Result("binding-changed", "error", "x: global -> weak\nsee", image, "x"),
               Result("removed", "warning", "y is gone", image, "y"),
               Result("added", "note", "z is new", image, "z")]
    lines = annotations(results, {}, root=str(tmp_path))
    assert lines == [
        "::error file=fw.elf,title=weaklink binding-changed (x)::x: global -> weak%0Asee",
        "::warning file=fw.elf,title=weaklink removed (y)::y is gone",
    ]


def test_diff_github_annotations(firmware, capsys, monkeypatch):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    a, b = firmware["weak-example-u85"], firmware["weak-custom-u85"]
    code = main(["diff", str(a.elf), str(b.elf), "--map-old", str(a.map), "--map-new",
                 str(b.map), "--github", "--fail-on", "binding-changed"])
    assert code == 1
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    error = next(x for x in lines if "binding-changed (ethosu_fast_scratch)" in x)
    assert error.startswith("::error file=fixtures/firmware/backend/EthosUBackend.cpp,line=")
    line = int(error.split("line=")[1].split(",")[0])
    assert "weak" in (root / "fixtures/firmware/backend/EthosUBackend.cpp").read_text() \
        .splitlines()[line - 1]
    assert any(x.startswith("::warning ") and "removed (dedicated_sram)" in x for x in lines)
    assert not any(x.startswith("::notice") for x in lines)


def test_analyze_github_errors_for_failed_expectations(firmware, capsys):
    o = firmware["weak-custom-u85"]       # two weak-default-survived infos, nothing else
    assert main(["analyze", str(o.elf), "--github"]) == 0
    assert not [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert main(["analyze", str(o.elf), "--github", "--expect-override",
                 "ethosu_fast_scratch"]) == 1
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert len(lines) == 1 and lines[0].startswith("::error file=")    # exit 1: a gate
    assert "weak-default-survived (ethosu_fast_scratch)" in lines[0]

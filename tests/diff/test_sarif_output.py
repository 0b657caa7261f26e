"""SARIF 2.1.0 from analyze, check and diff, validated against the official OASIS schema
(tests/data/sarif-schema-2.1.0.json, errata 01, a draft-04 JSON schema)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from weaklink.cli import main
from weaklink.read import elf
from weaklink import rules

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"
U85 = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
       "--memory-mode", "Dedicated_Sram_384KB"]


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def _run(validator, argv, tmp_path, capsys) -> tuple[int, dict]:
    path = tmp_path / "out.sarif"
    code = main([*argv, "--sarif", str(path)])
    capsys.readouterr()
    log = json.loads(path.read_text())
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, errors[0]
    return code, log


def _source_line(result) -> tuple[str, int] | None:
    phys = result["locations"][0]["physicalLocation"]
    if "region" not in phys:
        return None
    return phys["artifactLocation"]["uri"], phys["region"]["startLine"]


def _line_text(uri: str, line: int) -> str:
    root = Path(__file__).resolve().parents[2]
    return (root / uri).read_text().splitlines()[line - 1]


def test_the_schema_rejects_a_broken_log(validator):
    assert list(validator.iter_errors({"version": "2.1.0", "runs": [{"results": []}]}))


def test_analyze_sarif(validator, firmware, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])      # %SRCROOT% = the repository
    o = firmware["weak-near-miss-u85"]
    code, log = _run(validator, ["analyze", str(o.elf), "--map", str(o.map)], tmp_path, capsys)
    assert code == 0
    run = log["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert ids == list(rules.ANALYZE_RULES)
    assert all(r["help"]["text"] and r["shortDescription"]["text"]
               for r in run["tool"]["driver"]["rules"])
    near = [r for r in run["results"] if r["ruleId"] == "near-miss-override"]
    assert {r["level"] for r in near} == {"warning"}
    uri, line = _source_line(near[0])
    # at the weak default's definition in the backend (DWARF decl_file/decl_line)
    assert uri == "fixtures/firmware/backend/EthosUBackend.cpp"
    text = _line_text(uri, line)
    assert "weak" in text and near[0]["locations"][0]["logicalLocations"][0]["name"] in text
    assert all(ids[r["ruleIndex"]] == r["ruleId"] for r in run["results"])


def test_check_sarif(validator, firmware, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    o = firmware["weak-custom-u85"]
    code, log = _run(validator, ["check", str(o.elf), *U85, "--map", str(o.map)], tmp_path,
                     capsys)
    assert code == 1
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert set(results) == {"fast-scratch-null", "npu-verdict"}
    assert results["npu-verdict"]["level"] == "error"
    uri, line = _source_line(results["fast-scratch-null"])
    assert "ethosu_fast_scratch =" in _line_text(uri, line)


def test_diff_sarif(validator, firmware, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    a, b = firmware["weak-example-u85"], firmware["weak-custom-u85"]
    code, log = _run(validator, ["diff", str(a.elf), str(b.elf), "--map-old", str(a.map),
                                 "--map-new", str(b.map), "--check", *U85,
                                 "--fail-on", "binding-changed,verdict"], tmp_path, capsys)
    assert code == 1
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(rules.DIFF_RULES)
    by = {(r["ruleId"], r["locations"][0].get("logicalLocations", [{}])[0].get("name")): r
          for r in run["results"]}
    binding = by[("binding-changed", "ethosu_fast_scratch")]
    assert binding["level"] == "error"                   # a gate failure
    uri, line = _source_line(binding)                    # NEW's definition: the weak default
    assert uri.endswith("EthosUBackend.cpp") and "weak" in _line_text(uri, line)
    removed = by[("removed", "dedicated_sram")]          # located in OLD: the runner
    uri, line = _source_line(removed)
    assert uri.endswith("runners/example.cpp") and "dedicated_sram" in _line_text(uri, line)
    assert by[("verdict-changed", "ethosu_fast_scratch")]["level"] == "error"


@pytest.mark.parametrize("command", ["analyze", "check", "diff"])
def test_source_lines_come_from_the_image_read_once(command, firmware, tmp_path, capsys,
                                                    monkeypatch):
    """--sarif and --github locate the results in the Image the command read: each ELF's bytes
    are read once."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    a, b = firmware["weak-example-u85"], firmware["weak-near-miss-u85"]
    argv = {"analyze": ["analyze", str(b.elf), "--map", str(b.map)],
            "check": ["check", str(b.elf), *U85, "--map", str(b.map)],
            "diff": ["diff", str(a.elf), str(b.elf), "--map-old", str(a.map), "--map-new",
                     str(b.map), "--check", *U85]}[command]
    reads, real = [], elf._contents
    monkeypatch.setattr(elf, "_contents", lambda path: reads.append(str(path)) or real(path))
    main([*argv, "--sarif", str(tmp_path / "out.sarif"), "--github"])
    assert ",line=" in capsys.readouterr().out          # an annotation with its source line
    images = [str(a.elf), str(b.elf)] if command == "diff" else [str(b.elf)]
    assert [p for p in reads if p in images] == images


def test_results_outside_the_tree_use_file_uris(validator, builds, tmp_path, capsys):
    code, log = _run(validator, ["diff", str(builds["grown"].elf), str(builds["moved"].elf)],
                     tmp_path, capsys)
    assert code == 0
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]]
    assert uris and all(u.startswith("file:///") for u in uris)


def test_every_finding_rule_has_a_catalogue_entry():
    """The rules analyze and check raise findings under (module constants) are in the table
    their command's SARIF lists, each with a help text."""
    import weaklink.analyze.extraction as ax
    import weaklink.analyze.findings as af
    import weaklink.check.functional as cf
    import weaklink.check.static as cs
    used = {m: {v.id for v in vars(m).values() if isinstance(v, rules.Rule)}
            for m in (af, ax, cs, cf)}
    assert used[af] | used[ax] and used[af] | used[ax] <= set(rules.ANALYZE_RULES)
    assert used[cs] | used[cf] and used[cs] | used[cf] <= set(rules.CHECK_RULES)
    assert all(r.short and r.help for r in rules.RULES.values())


def test_severities_are_the_jsons_and_levels_are_sarifs():
    """One table: a finding's JSON severity is error, warning or info (docs/json-contract.md);
    its SARIF level, derived in one place, is one SARIF 2.1.0 allows (§3.27.10)."""
    assert rules.SEVERITIES == ("error", "warning", "info")
    assert {r.severity for r in rules.RULES.values()} == set(rules.SEVERITIES)
    assert {r.level for r in rules.RULES.values()} <= {"none", "note", "warning", "error"}
    assert rules.WEAK_DEFAULT_SURVIVED.level == "note" and rules.CORRUPTS.level == "error"
    f = rules.REGION_NOT_IN_ASSUMED_MEMORY.finding("region 1", "slower", "info")
    assert f.to_json() == {"rule": "region-not-in-assumed-memory", "severity": "info",
                           "symbol": "region 1", "message": "slower"}


def test_a_result_under_another_commands_rule_gets_its_entry(validator):
    from weaklink.ci.results import Result
    from weaklink.ci.sarif import sarif_log

    log = sarif_log([Result("run-mismatch", "error", "job 0 status: check predicts ok", "fw.elf")],
                    rules.CHECK_RULES, {}, "0")
    assert not list(validator.iter_errors(log))
    driver = log["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == [*rules.CHECK_RULES, "run-mismatch"]
    assert driver["rules"][-1]["help"]["text"] == rules.RUN_MISMATCH.help
    assert log["runs"][0]["results"][0]["ruleIndex"] == len(rules.CHECK_RULES)

"""`weaklink check` on the real fixture images: the NPU verdict, the findings and the chain."""
from __future__ import annotations

import json

import pytest

from weaklink.builders import firmware as fixtures
from weaklink.check import check
from weaklink.cli import main

# variant: (NPU verdict, findings that must be reported, fast scratch memory)
EXPECTED = {
    "extern-example-u55": ("ok", set(), None),
    "extern-example-u85": ("ok", set(), "SRAM"),
    "removed-example-u55": ("ok", set(), None),
    "removed-example-u85": ("hang", {"fast-scratch-null"}, None),
    "removed-custom-u55": ("ok", set(), None),
    "removed-custom-u85": ("hang", {"fast-scratch-null"}, None),
    "weak-example-u55": ("ok", set(), None),
    "weak-example-u85": ("ok", set(), "SRAM"),
    "weak-custom-u55": ("ok", set(), None),
    "weak-custom-u85": ("hang", {"fast-scratch-null"}, None),
    "weak-override-in-archive-u85": ("hang", {"fast-scratch-null", "override-not-extracted"}, None),
    "weak-near-miss-u85": ("hang", {"fast-scratch-null", "near-miss-override"}, None),
    "weak-too-small-u85": ("error", {"fast-scratch-too-small"}, "SRAM"),
    "weak-wrong-memory-u65": ("hang", {"fast-scratch-unreachable"}, "DTCM"),
}


def _check(outcome, **kw):
    t = outcome.target
    return check(outcome.elf, accelerator=t.accelerator, system_config=t.system_config,
                 memory_mode=t.memory_mode, map_path=outcome.map, **kw)


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_verdict_findings_and_fast_scratch(firmware, variant):
    verdict, rules, memory = EXPECTED[variant]
    report = _check(firmware[variant])
    assert report.verdict == verdict
    assert {f.rule for f in report.findings} == rules
    assert report.fast_scratch.region == memory
    assert (report.cycles is not None) == (verdict == "ok")
    assert report.exit_code == (0 if verdict == "ok" else 1)


def test_weak_default_hang_is_traced_back_to_the_weak_symbol(firmware):
    chain = _check(firmware["weak-custom-u85"]).diagnosis
    assert chain.startswith("region 2 base 0x0 ← `ethosu_fast_scratch` = WEAK default from "
                            "EthosUBackend.cpp (no strong definition linked) → NPU ")
    assert "address 0x00000000" in chain and "SRAM AXI port" in chain
    assert chain.endswith("→ hang")


def test_removed_backend_hang_says_the_backend_never_reads_the_pointer(firmware):
    chain = _check(firmware["removed-example-u85"]).diagnosis
    assert "no *EthosUBackend* unit reads it: the backend passes 0/0" in chain


def test_wrong_memory_hang_names_dtcm_and_why_it_never_completes(firmware):
    """Plain .bss is DTCM on Corstone-300: the Cortex-M55's private TCM, which Arm documents
    out of the NPU's reach. The finding and the chain say what the access hits and why it
    never completes; the report prints what the hang (rather than a bus error) rests on."""
    report = _check(firmware["weak-wrong-memory-u65"])
    unreachable = next(f for f in report.findings if f.rule == "fast-scratch-unreachable")
    assert "DTCM, the Cortex-M55's data TCM, private to the CPU" in unreachable.message
    assert "only accessible from Cortex-M55" in unreachable.message and "AXI0 AXI port" in unreachable.message
    assert "strong definition from fast_scratch.cpp" in report.diagnosis
    assert "waits for it forever" in report.diagnosis and report.diagnosis.endswith("→ hang")
    assert any("never answered and stalls the NPU" in a for a in report.assumptions)
    assert "assumption: an NPU access to memory it cannot reach" in report.to_table()


def test_the_story_rows_rest_on_no_port_assumption(firmware):
    """Every U55/U85 story image places its regions where Arm's FVP setup documents them: the
    U55 rows are ok with no SoC assumption and no placement finding."""
    for name in ("weak-example-u55", "weak-example-u85", "extern-example-u85"):
        report = _check(firmware[name])
        assert report.verdict == "ok" and report.assumptions == (), name
        assert report.to_json()["assumptions"] == []


def test_an_npu_the_soc_cannot_carry_is_one_line_exit_2(firmware, capsys):
    o = firmware["weak-example-u85"]
    code = main(["check", str(o.elf), "--accelerator", "ethos-u85-256", "--system-config",
                 "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB", "--soc", "corstone-300"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "corstone-300 carries ethos-u55 or ethos-u65, not ethos-u85-256" in err


def test_too_small_is_an_out_of_bounds_error_past_16_kib(firmware):
    report = _check(firmware["weak-too-small-u85"])
    assert "out of bounds" in report.run.diagnosis
    assert report.needs[2] > 16 * 1024 == report.fast_scratch.size


def test_u85_ok_cycles_match_vela_within_20_percent(firmware):
    log = (fixtures.model_blob("u85").with_suffix("") / "vela.log").read_text()
    vela_total = int(next(line.split()[2] for line in log.splitlines()
                          if line.startswith("Total cycles")))
    cycles = _check(firmware["weak-example-u85"]).cycles
    assert abs(cycles - vela_total) <= 0.2 * vela_total


def test_json_contract(firmware, capsys):
    outcome = firmware["weak-custom-u85"]
    t = outcome.target
    code = main(["check", "--json", str(outcome.elf), "--accelerator", t.accelerator,
                 "--system-config", t.system_config, "--memory-mode", t.memory_mode,
                 "--map", str(outcome.map)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["schema_version"] == 1
    assert doc["npu"] == "hang" and doc["cycles"] is None and doc["link"] == "ok"
    assert doc["fast_scratch"] == {"binding": "weak", "value": 0, "size": 0, "region": None}
    assert doc["findings"] == ["fast-scratch-null"]
    assert doc["diagnosis"].endswith("→ hang")
    assert [b["region"] for b in doc["bases"]] == [0, 1, 2]
    assert {"total", "npu"} <= set(doc["emulation"]["cycles"])


def test_ok_image_exits_zero_and_prints_the_cycles(firmware, capsys):
    outcome = firmware["weak-example-u85"]
    t = outcome.target
    code = main(["check", str(outcome.elf), "--accelerator", t.accelerator,
                 "--system-config", t.system_config, "--memory-mode", t.memory_mode])
    out = capsys.readouterr().out
    assert code == 0 and "NPU OK in" in out and "0x31000000" in out


@pytest.mark.parametrize("args,needle", [
    (["/nonexistent.elf"], "no such file"),
    (["{readme}"], "not an ELF file"),
    (["{elf}", "--binding", "no-such-preset"], "no such binding"),
    (["{elf}", "--model", "{readme}"], "not a Vela npz"),
])
def test_bad_input_is_one_line_and_exit_2(firmware, capsys, args, needle):
    from weaklink.cachedir import REPO

    elf = firmware["weak-example-u85"].elf
    args = [a.format(readme=REPO / "README.md", elf=elf) for a in args]
    code = main(["check", *args, "--accelerator", "ethos-u85-256", "--system-config",
                 "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("weaklink: error: ") and needle in err


@pytest.mark.parametrize("variant", ["weak-example-u85", "weak-custom-u85"])
def test_plot_writes_a_png(firmware, tmp_path, variant):
    from weaklink.check.plot import plot

    path = tmp_path / f"{variant}.png"
    plot(_check(firmware[variant]), path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_model_option_overrides_the_embedded_blob(firmware, tmp_path):
    npz = fixtures.model_blob("u85").with_suffix("") / f"{fixtures.FIXTURE_NETWORK}_vela.npz"
    outcome = firmware["weak-example-u85"]
    assert _check(outcome, model_path=npz).verdict == "ok"
    # An image without the blob: the stream comes from --model, the weights' base is unknown (0).
    data = bytearray(outcome.elf.read_bytes())
    at = data.find(b"vela_bin_stream\0\0\0\0\0")
    data[at:at + 15] = b"x" * 15
    bare = tmp_path / "bare.elf"
    bare.write_bytes(bytes(data))
    t = outcome.target
    report = check(bare, accelerator=t.accelerator, system_config=t.system_config,
                   memory_mode=t.memory_mode, model_path=npz)
    assert report.table.base(0).address == 0 and "unknown" in report.table.base(0).note
    assert report.verdict == "hang" and "region 0" in report.run.diagnosis

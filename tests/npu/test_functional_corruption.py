"""Silent corruption: NPU writes over bytes another region, the model or a symbol still needs
(`corrupts` findings), and the `wrong` verdict when the outputs differ from a run with every
region placed apart. The fixture is a real linked image: a runner whose fast-scratch override
points into its own tensor arena (fixtures/firmware/runners/aliasing.cpp)."""
from __future__ import annotations

import json

import pytest

from npu.functional import FunctionalRun
from npu.functional.corruption import MODEL, REGION, SYMBOL, Owner, find_corruptions, separate_placement
from npu.functional.memory import Access
from weaklink.builders import firmware as fixtures
from weaklink.check import check
from weaklink.cli import main as weaklink_main

U65 = dict(accelerator="ethos-u65-256", system_config="Ethos_U65_High_End", memory_mode="Dedicated_Sram")


def _run(writes, reads):
    return FunctionalRun((), tuple(writes), 0, tuple(reads))


def test_a_write_over_another_regions_live_bytes_corrupts():
    w = Access("CONV", 0x40, 1, 2, 0x1000, 0x1100, "OFM")
    r = Access("ADD", 0x80, 2, 1, 0x1080, 0x1090, "IFM")
    owners = [Owner(REGION, "region 1 (scratch)", 0x1000, 0x2000, 1), Owner(REGION, "region 2", 0x1000, 0x1800, 2)]
    found = find_corruptions(_run([w], [r]), owners, {1: 0x1000, 2: 0x1000})
    assert [(c.owner.name, c.start, c.end, c.read_by.op) for c in found] == [("region 1 (scratch)", 0x1000, 0x1100, "ADD")]


def test_dead_bytes_and_rewritten_bytes_are_not_corruption():
    w = Access("CONV", 0x40, 1, 2, 0x1000, 0x1100, "OFM")
    earlier = Access("POOL", 0x20, 0, 1, 0x1000, 0x1100, "IFM")           # read before the write
    rewrite = Access("DMA", 0x60, 2, 1, 0x1000, 0x1100, "DMA destination")
    later = Access("ADD", 0x80, 3, 1, 0x1000, 0x1010, "IFM")              # reads the fresh copy
    owners = [Owner(REGION, "region 1", 0x1000, 0x2000, 1)]
    assert find_corruptions(_run([w, rewrite], [earlier, later]), owners, {1: 0x1000, 2: 0x1000}) == []


def test_model_and_foreign_symbols_are_always_needed_but_the_backing_symbol_is_not():
    w = Access("CONV", 0x40, 1, 2, 0x1000, 0x1100, "OFM")
    owners = [Owner(MODEL, "the model", 0x10f0, 0x1200), Owner(SYMBOL, "`arena`", 0x1000, 0x1800),
              Owner(SYMBOL, "`counter`", 0x10f8, 0x10fc)]
    found = find_corruptions(_run([w], []), owners, {2: 0x1000})
    assert sorted(c.owner.name for c in found) == ["`counter`", "the model"]


def test_separate_placement_overlaps_nothing():
    place = separate_placement({0: 1 << 20, 1: 1 << 24, 2: 1 << 19})
    spans = sorted((a, a + n) for a, n in place.values())
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


@pytest.fixture(scope="module")
def aliasing_image(cross_toolchain):
    outcome = fixtures.build(fixtures.CORRUPTION_VARIANTS)[0]
    assert outcome.ok, outcome.stderr
    return outcome


def test_fast_scratch_aliasing_the_arena_is_wrong_with_the_finding(aliasing_image):
    report = check(aliasing_image.elf, **U65, soc=fixtures.CORRUPTION_SOC, map_path=aliasing_image.map,
                   functional=True)
    assert report.run.status == "ok" and report.verdict == "wrong" and report.exit_code == 1
    corrupts = [f for f in report.findings if f.rule == "corrupts"]
    assert corrupts and all("through region 2" in f.message and "over region 1 (scratch)" in f.message
                            for f in corrupts)
    assert "ethosu_fast_scratch" in report.diagnosis and report.diagnosis.endswith("→ wrong")
    doc = report.to_json()
    assert doc["npu"] == "wrong" and "corrupts" in doc["findings"]
    assert 0 < doc["functional"]["output_bytes_differing"] <= doc["functional"]["output_bytes"]


def test_without_functional_the_same_image_looks_ok(aliasing_image):
    report = check(aliasing_image.elf, **U65, soc=fixtures.CORRUPTION_SOC)
    assert report.verdict == "ok" and not [f for f in report.findings if f.rule == "corrupts"]


def test_on_corstone_300_the_alias_is_wrong_on_an_assumption(aliasing_image):
    """On corstone-300 the region-2 traffic reaches the DDR arena through AXI0, which Arm's
    documentation does not show (ExecuTorch's CI relies on it): the same verdict, with that
    assumption printed. The shared-bus preset documents both ports, so it prints none."""
    report = check(aliasing_image.elf, **U65, functional=True)
    assert report.verdict == "wrong"
    assert any("reaches DDR through AXI0" in a for a in report.assumptions)
    assert "assumption: corstone-300: the NPU reaches DDR through AXI0" in report.to_table()
    shared = check(aliasing_image.elf, **U65, soc=fixtures.CORRUPTION_SOC)
    assert not any("through AXI0" in a for a in shared.assumptions)


def test_a_correct_image_is_ok_with_no_corruption(firmware):
    outcome = firmware["weak-example-u55"]
    report = check(outcome.elf, accelerator="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                   memory_mode="Shared_Sram", map_path=outcome.map, functional=True)
    assert report.verdict == "ok" and report.functional.outputs_equal
    assert not [f for f in report.findings if f.rule == "corrupts"]


def test_cli_check_functional_json(aliasing_image, capsys):
    code = weaklink_main(["check", str(aliasing_image.elf), "--accelerator", U65["accelerator"],
                          "--system-config", U65["system_config"], "--memory-mode", U65["memory_mode"],
                          "--soc", fixtures.CORRUPTION_SOC, "--functional", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["npu"] == "wrong" and doc["functional"]["corruptions"]


# -- the story on U85 Dedicated_Sram_384KB, computed ---------------------------------------------
U85 = dict(accelerator="ethos-u85-256", system_config="Ethos_U85_SYS_DRAM_Mid", memory_mode="Dedicated_Sram_384KB")


def _litert(tflite, inputs):
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    it = interpreter.Interpreter(model_path=str(tflite),
                                 experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x.reshape(d["shape"]))
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


@pytest.mark.parametrize("variant", ["weak-example-u85", "extern-example-u85"])
def test_u85_strong_384kb_override_computes_litert_outputs(firmware, variant):
    """The runner's strong 384 KB fast scratch in SRAM: the NPU's bytes are LiteRT's."""
    import npu.api
    from weaklink.check.functional import default_inputs
    outcome = firmware[variant]
    report = check(outcome.elf, **U85, map_path=outcome.map, functional=True)
    assert report.verdict == "ok" and report.functional.outputs_equal
    assert not [f for f in report.findings if f.rule == "corrupts"]
    model = npu.api.load_model(report.table.model_bytes)
    want = _litert(fixtures.cache_dir() / "models" / f"{outcome.target.network}.tflite", default_inputs(model))
    assert [a.tobytes() for a in report.functional.outputs] == [b.tobytes() for b in want]


def test_u85_too_small_override_is_an_error_naming_region_2(firmware):
    outcome = firmware["weak-too-small-u85"]
    report = check(outcome.elf, **U85, map_path=outcome.map, functional=True)
    assert report.verdict == "error" and report.run.fault_region == 2 and report.functional is None
    assert "fast-scratch-too-small" in {f.rule for f in report.findings}
    assert "region 2" in report.diagnosis and "out of bounds" in report.diagnosis


@pytest.fixture(scope="module")
def u85_aliasing_image(cross_toolchain):
    outcome = next(o for o in fixtures.build(fixtures.CORRUPTION_VARIANTS) if o.target.name == "u85deep")
    assert outcome.ok, outcome.stderr
    return outcome


def test_u85_fast_scratch_aliasing_the_arena_is_wrong_with_the_first_difference(u85_aliasing_image):
    report = check(u85_aliasing_image.elf, **U85, map_path=u85_aliasing_image.map, functional=True)
    assert report.run.status == "ok" and report.verdict == "wrong" and report.exit_code == 1
    corrupts = [f for f in report.findings if f.rule == "corrupts"]
    assert corrupts and all("through region 2" in f.message and "over region 1 (scratch)" in f.message
                            for f in corrupts)
    first = report.to_json()["functional"]["first_difference"]
    out = report.functional.outputs[first["output"]]
    assert first["region"] == 2 and out[tuple(first["index"])] == first["value"] != first["separate_value"]
    text = report.to_table()
    assert "first difference: output 0 [" in text and "caused by a write through region 2 over region 1" in text


def test_u85_aliasing_on_corstone_320_rests_on_the_port_assumption(u85_aliasing_image):
    """The fast scratch lies in the DDR arena, which Arm documents behind AXI_EXT; region 2 goes
    through the SRAM port, whose reach into DDR no Arm document states: the verdict says so."""
    report = check(u85_aliasing_image.elf, **U85, map_path=u85_aliasing_image.map, functional=True)
    assert report.verdict == "wrong"
    assert any("DDR" in a for a in report.assumptions), report.assumptions
    assert "assumption: " in report.to_table()

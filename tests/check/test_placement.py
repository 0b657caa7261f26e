"""region-not-in-assumed-memory: memory the NPU reaches but the memory mode did not assume is a
performance finding with its emulated cost, never a hang. The cost's oracle is a real image
of the same model whose region sits where the memory mode assumed it."""
from __future__ import annotations

import pytest

import npu.api
from npu.api import Base
from npu.hw import load_vela_ini
from npu.socfile import load_soc
from weaklink.builders import firmware as fixtures, tflm as fixtures_tflm
from weaklink.check import check
from weaklink.check.static import placement_findings
from weaklink.rules import REGION_NOT_IN_ASSUMED_MEMORY

RULE = REGION_NOT_IN_ASSUMED_MEMORY.id


@pytest.fixture(scope="module")
def tflm(cross_toolchain):
    names = ("arena-ddr-u55", "shared-sram-u55", "no-fast-u85", "fast-sram-u85", "fast-bram-u85")
    return {v.name: fixtures_tflm.build_variant(v) for v in fixtures_tflm.VARIANTS if v.name in names}


def _check(im):
    t = im.target
    return check(im.elf, accelerator=t.accelerator, system_config=t.system_config, memory_mode=t.memory_mode)


def _finding(report):
    found = [f for f in report.findings if f.rule == RULE]
    assert len(found) == 1, [f.message for f in report.findings]
    return found[0]


def test_arena_in_ddr_under_shared_sram_is_timed_as_its_port(tflm):
    """TFLM's CI configuration: Shared_Sram with the arena in DDR, reached through AXI0. DDR is
    timed as the class the system config puts on the port it is reached through (Corstone-300's
    timing adapters shape AXI0 as Vela's Sram), not as Axi1's OffChipFlash: it costs what the
    image with its arena in SRAM does, so there is no placement finding, and the table says
    which class timed it."""
    ddr, sram = _check(tflm["arena-ddr-u55"]), _check(tflm["shared-sram-u55"])
    assert ddr.verdict == "ok" and sram.verdict == "ok"
    assert not [f for f in ddr.findings + sram.findings if f.rule == RULE]
    assert ddr.run.bases[1].memory == "DDR" and ddr.run.bases[1].timed_as == "Sram"
    assert ddr.cycles == sram.cycles
    assert any("reaches DDR through AXI0" in a for a in ddr.assumptions)
    assert ddr.to_json()["bases"][1]["timed_as"] == "Sram" and "timed as" in ddr.to_table()


def test_u85_without_fast_memory_stages_in_the_ddr_arena(tflm):
    none, fast = _check(tflm["no-fast-u85"]), _check(tflm["fast-sram-u85"])
    f = _finding(none)
    assert none.verdict == "ok" and f.severity == "warning"
    assert f"{none.cycles} cycles against {fast.cycles} with it in SRAM" in f.message
    assert "region 2 is in DDR" in f.message and "through its SRAM port" in f.message


def test_bram_costs_the_same_but_says_its_timing_is_assumed(tflm):
    report = _check(tflm["fast-bram-u85"])
    f = _finding(report)
    assert report.verdict == "ok" and f.severity == "info" and "(+0, +0.0%)" in f.message
    assert "BRAM is timed as Sram (an assumption)" in f.message
    assert any("BRAM has no timing in Ethos_U85_SYS_DRAM_Mid" in a for a in report.assumptions)


def test_a_faster_or_assumed_placement_is_no_finding(cross_toolchain):
    """Region 1 in SRAM under Dedicated_Sram (assumed DDR) is faster: nothing to report. Every
    region where the memory mode put it: nothing either."""
    blob = fixtures.model_blob("u85")
    t = fixtures.TARGETS["u85"]
    ini, soc = load_vela_ini(), load_soc("corstone-320")
    conf = dict(accelerator=t.accelerator, system_config=t.system_config, memory_mode=t.memory_mode)
    sysconf, mode = ini.system_config(t.system_config), ini.memory_mode(t.memory_mode)
    needs = npu.api.region_needs(blob, t.accelerator)
    for bases in ([Base(0, 0x70000000), Base(1, 0x31100000), Base(2, 0x31000000, 0x60000)],
                  [Base(0, 0x70000000), Base(1, 0x70100000), Base(2, 0x31000000, 0x60000)]):
        run = npu.api.run(blob, **conf, bases=bases)
        rerun = lambda cost_as, bases=bases: npu.api.run(blob, **conf, bases=bases, cost_as=cost_as)  # noqa: E731
        assert run.status == "ok" and placement_findings(run, needs, soc, sysconf, mode, rerun) == []


def test_a_hang_is_never_a_placement_finding(cross_toolchain):
    blob = fixtures.model_blob("u85")
    t = fixtures.TARGETS["u85"]
    ini, soc = load_vela_ini(), load_soc("corstone-320")
    conf = dict(accelerator=t.accelerator, system_config=t.system_config, memory_mode=t.memory_mode)
    run = npu.api.run(blob, **conf, bases=[Base(0, 0x70000000), Base(1, 0x70100000), Base(2, 0x30000000)])
    assert run.status == "hang"
    assert placement_findings(run, npu.api.region_needs(blob, t.accelerator), soc, ini.system_config(t.system_config),
                              ini.memory_mode(t.memory_mode), None) == []

"""Hardware as data: accelerators, vela.ini (bundled and a user's), SoC presets and ports."""
from __future__ import annotations

from dataclasses import replace

import pytest

from npu.errors import InputError
from npu.hw import accelerator, accelerator_names, load_vela_ini
from npu.soc import Timing, reach, region_port, timing
from npu.socfile import board_for, load_soc


def test_every_vela_accelerator_is_described():
    assert accelerator_names() == [
        "ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512",
        "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048"]
    for name in accelerator_names():
        acc = accelerator(name)
        assert 1 << (acc.config_word & 0xF) == acc.macs // acc.cores or acc.macs == 1 << (acc.config_word & 0xF)
        assert acc.config_word >> 28 == acc.product


def test_bundled_vela_ini():
    ini = load_vela_ini()
    assert len(ini.system_configs) == 11
    mid = ini.system_config("Ethos_U85_SYS_DRAM_Mid")
    assert mid.core_clock == 1e9 and mid.memories["Sram"].bandwidth == 32 and mid.memories["Dram"].bandwidth == 12
    assert ini.system_config("Ethos_U55_High_End_Embedded").memories["OffChipFlash"].bandwidth == 1
    for size, name in ((262144, "Dedicated_Sram_256KB"), (393216, "Dedicated_Sram_384KB"), (524288, "Dedicated_Sram_512KB")):
        mode = ini.memory_mode(name)
        assert (mode.const_mem_area, mode.arena_mem_area, mode.cache_mem_area) == ("Axi1", "Axi1", "Axi0")
        assert mode.arena_cache_size == size
    assert ini.memory_mode("Sram_Only").arena_cache_size is None


def test_user_vela_ini(tmp_path):
    ini_path = tmp_path / "my.ini"
    ini_path.write_text("[System_Config.Mine]\ncore_clock=2e8\naxi0_port=Sram\naxi1_port=Dram\n"
                        "Dram_clock_scale=0.5\n[Memory_Mode.Base]\nconst_mem_area=Axi1\narena_mem_area=Axi0\n"
                        "cache_mem_area=Axi0\n[Memory_Mode.Child]\ninherit=Memory_Mode.Base\narena_cache_size=4096\n")
    ini = load_vela_ini(ini_path)
    assert ini.system_config("Mine").memories["Dram"].bandwidth == 8
    assert ini.memory_mode("Child").const_mem_area == "Axi1" and ini.memory_mode("Child").arena_cache_size == 4096
    (tmp_path / "bad.ini").write_text("[System_Config.X]\ncore_clock=fast\n")
    with pytest.raises(InputError, match="core_clock"):
        load_vela_ini(tmp_path / "bad.ini")


def test_corstone_320_reach():
    soc = load_soc("corstone-320")
    documented = reach(soc, "SRAM", 0x31000000, 393216)          # Arm: SRAM_VM0 via AXI_SRAM
    assert documented.ok and not documented.assumptions
    assert reach(soc, "EXT", 0x70000000, 1024).ok and not reach(soc, "EXT", 0x70000000, 1024).assumptions
    assumed = reach(soc, "SRAM", 0x70000000, 16)                # not in Arm's documentation
    assert assumed.ok and "DDR through its SRAM port" in assumed.assumptions[0]
    assert reach(soc, "EXT", 0x31000000, 16).ok and reach(soc, "EXT", 0x31000000, 16).assumptions
    tcm = reach(soc, "SRAM", 0x30000000, 16)
    assert not tcm.ok and "DTCM" in tcm.reason and "private to the CPU" in tcm.reason
    assert "no memory on corstone-320 is mapped at 0x00000000" in reach(soc, "SRAM", 0, 16).reason
    assert "past the end" in reach(soc, "SRAM", 0x313FFFF0, 64).reason


def test_corstone_300_reach_facts_and_aliases():
    soc = load_soc("corstone-300")
    for address, memory in ((0x30000000, "DTCM"), (0x20000000, "DTCM (non-secure alias)"),
                            (0x10000000, "ITCM"), (0x00000000, "ITCM (non-secure alias)")):
        r = reach(soc, "AXI0", address, 16)
        assert not r.ok and f"is {memory}" in r.reason and "only accessible from Cortex-M55" in r.reason
    for port, address in (("AXI0", 0x31000000), ("AXI1", 0x70000000), ("AXI1", 0x60000000)):
        assert reach(soc, port, address, 16).ok and not reach(soc, port, address, 16).assumptions
    ddr0 = reach(soc, "AXI0", 0x70000000, 16)
    assert ddr0.ok and "ExecuTorch's CI" in ddr0.assumptions[0]
    assert reach(soc, "AXI1", 0x11000000, 16).ok and "BRAM" in reach(soc, "AXI1", 0x11000000, 16).assumptions[0]
    # the U55's AXI1 has no write channel; reads through it are fine
    assert reach(soc, "AXI1", 0x70000000, 16, write=True, read_only_ports=("AXI1",)).reason
    assert reach(soc, "AXI1", 0x70000000, 16, write=False, read_only_ports=("AXI1",)).ok
    assert accelerator("ethos-u55-128").read_only_ports == ("AXI1",)
    assert accelerator("ethos-u65-256").read_only_ports == ()
    assert all(m.source for m in soc.memories) and all(m.source for m in load_soc("corstone-320").memories)


def test_a_soc_preset_refuses_an_npu_it_cannot_carry():
    assert board_for(accelerator("ethos-u85-256"), None).name == "corstone-320"
    assert board_for(accelerator("ethos-u65-256"), "corstone-300").name == "corstone-300"
    with pytest.raises(InputError, match="corstone-300 carries ethos-u55 or ethos-u65, not ethos-u85-256"):
        board_for(accelerator("ethos-u85-256"), "corstone-300")
    with pytest.raises(InputError, match="corstone-320 carries ethos-u85, not ethos-u55-128"):
        board_for(accelerator("ethos-u55-128"), "corstone-320")


def test_each_memory_is_timed_as_that_memory():
    """A memory with a Vela class is timed as that class where the system config describes it
    (DDR as Dram under Ethos_U65_High_End). Where it does not, the Corstones' DDR is timed as
    the class the config puts on the port it is reached through (the timing adapters: DDR
    through AXI0 is not OffChipFlash, which once made the ExecuTorch U55 runner 4x slower than
    planned); a memory without a class of its own (BRAM) as its port's class, an assumption."""
    ini, soc = load_vela_ini(), load_soc("corstone-300")
    he = ini.system_config("Ethos_U55_High_End_Embedded")
    sram, ddr, bram, qspi = (next(m for m in soc.memories if m.name == n) for n in ("SRAM", "DDR", "BRAM", "QSPI"))
    assert ddr.kind == "Dram" and ddr.port_timing
    assert timing(soc, he, ddr, "AXI0") == Timing("Sram") and timing(soc, he, ddr, "AXI1") == Timing("OffChipFlash")
    assert timing(soc, he, sram, "AXI1").vela_class == "Sram"
    assert timing(soc, he, qspi, "AXI1").vela_class == "OffChipFlash"
    b = timing(soc, he, bram, "AXI0")
    assert b.vela_class == "Sram" and "BRAM has no timing" in b.assumption
    assert timing(soc, ini.system_config("Ethos_U65_High_End"), ddr, "AXI0") == Timing("Dram")
    # a Dram the config does not describe and no port shaping: Vela's defaults, said
    plain = replace(ddr, port_timing=False)
    t = timing(soc, he, plain, "AXI0")
    assert t.vela_class == "Dram" and "Vela's defaults for Dram" in t.assumption


def test_regioncfg_per_memory_mode():
    soc = load_soc("corstone-320")
    assert [region_port(soc, "Dedicated_Sram_384KB", r) for r in range(3)] == ["EXT", "EXT", "SRAM"]
    assert [region_port(soc, "Sram_Only", r) for r in range(3)] == ["SRAM"] * 3
    assert [region_port(soc, "Shared_Sram", r) for r in range(3)] == ["EXT", "SRAM", "SRAM"]
    assert region_port(load_soc("corstone-300"), "Shared_Sram", 0) == "AXI1"


def test_u55_opcodes_match_velas_python_register_map():
    """The U55 stream decodes with the U65 table (as regor does); its numbers must be the
    ones in Vela's Python ethos_u55_regs."""
    from ethosu.vela.ethos_u55_regs import ethos_u55_regs as regs

    from npu.decode import command_table
    table = command_table("ethos_u65_commands.toml")
    checked = 0
    for enum in (regs.cmd0, regs.cmd1):
        for member in enum:
            name = member.name if member.name.startswith("NPU_") else None
            if name and name in table.opcode:
                assert table.opcode[name] == member.value, name
                checked += 1
    assert checked >= 80


def test_an_access_runs_on_into_the_next_memory():
    """Himax WE2: SRAM0 and SRAM1 are decoded back to back (WE2_device_addr.h); yolov8's
    run-time arena crosses from one into the other, and the SDK's app works."""
    soc = load_soc("himax-we2")
    crossing = reach(soc, "AXI0", 0x340ff000, 0x2000, write=True)
    assert crossing.ok, crossing.reason
    assert crossing.memory.name == "SRAM0"
    past_the_end = reach(soc, "AXI0", 0x341ff000, 0x2000)      # SRAM1 ends at 0x34200000: nothing follows
    assert not past_the_end.ok and "past the end of SRAM1" in past_the_end.reason

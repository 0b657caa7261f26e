"""Hardware as data: accelerators, vela.ini (bundled and a user's), SoC presets and ports."""
from __future__ import annotations

import pytest

from npu.errors import InputError
from npu.hw import accelerator, accelerator_names, load_vela_ini
from npu.soc import load_soc, region_port, unreachable_reason


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


def test_corstone_320_ports():
    soc = load_soc("corstone-320")
    assert unreachable_reason(soc, "SRAM", 0x31000000, 393216) is None
    assert unreachable_reason(soc, "EXT", 0x70000000, 1024) is None
    assert "reachable through EXT" in unreachable_reason(soc, "SRAM", 0x70000000, 16)
    assert "not the EXT port" in unreachable_reason(soc, "EXT", 0x31000000, 16)
    assert "no NPU port" in unreachable_reason(soc, "SRAM", 0x30000000, 16)      # DTCM
    assert "no memory" in unreachable_reason(soc, "SRAM", 0, 16)
    assert "past the end" in unreachable_reason(soc, "SRAM", 0x313FFFF0, 64)


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

"""The QEMU board an image boots on, from data (npu/data/qemu.toml and soc.toml, read by
npu.socfile): mps3-an547 as QEMU 7.2 models it for Corstone-300 images, and the Corstone-320
map inside it for U85 images."""
from __future__ import annotations

import tomllib

from npu.socfile import QEMU_TOML, load_soc, qemu_board


def test_corstone_300_images_get_the_machine_as_qemu_models_it():
    board = qemu_board("corstone-300", "corstone-300")
    assert (board.name, board.machine, board.soc) == ("mps3-an547", "mps3-an547", "corstone-300")
    assert [(m.name, m.origin, m.length, m.rom) for m in board.memories] == [
        ("ITCM", 0x00000000, 512 << 10, False), ("SRAM", 0x01000000, 2 << 20, False),
        ("DTCM", 0x20000000, 512 << 10, False), ("SRAM 2", 0x21000000, 4 << 20, False),
        ("QSPI", 0x28000000, 8 << 20, True), ("DDR", 0x60000000, 2 << 30, False)]
    # every memory but the DDR also answers at its secure alias (address bit 28)
    assert board.memory_at(0x10000000).name == "ITCM" and board.memory_at(0x31000000).name == "SRAM 2"
    assert board.memory_at(0x70000000).name == "DDR" and board.memory_at(0x12000000) is None
    assert board.vector_table == board.reset_table == 0x10000000
    assert board.npu_pages == (0x48102000, 0x58102000) and board.npu_irq == 56
    assert (board.nvic_ispr, board.vtor, board.lacks) == (0xE000E200, 0xE000ED08, "")


def test_corstone_320_images_get_its_memories_inside_the_machine_and_lack_bram():
    board = qemu_board("corstone-320", "corstone-320")
    assert board.name == "mps3-an547 (Corstone-320 map)" and board.machine == "mps3-an547"
    # the preset's own memories, those the machine has at the same address; ROM and flash read-only
    assert [(m.name, m.origin, m.rom, m.alias) for m in board.memories] == [
        ("ITCM", 0x10000000, False, 0), ("BROM", 0x11000000, True, 0), ("DTCM", 0x30000000, False, 0),
        ("SRAM", 0x31000000, False, 0), ("QSPI", 0x38000000, True, 0), ("DDR", 0x70000000, False, 0)]
    soc = load_soc("corstone-320")
    assert {m.name for m in soc.memories} - {m.name for m in board.memories} == {"BRAM"}
    assert board.lacks == "BRAM 0x12000000+2048 KiB, which QEMU does not map"
    assert board.vector_table == 0x11000000 != board.reset_table
    assert board.npu_pages == soc.npu_base == (0x40004000, 0x50004000) and board.npu_irq == 16


def test_a_soc_no_machine_runs_boots_as_its_accelerators_corstone():
    assert qemu_board("himax-we2", "corstone-300") == qemu_board("corstone-300", "corstone-300")
    assert qemu_board("shared-bus", "corstone-320") == qemu_board("corstone-320", "corstone-320")


def test_every_machine_fact_cites_its_source():
    for machine in tomllib.loads(QEMU_TOML.read_text()).values():
        for key in (*machine["source"], *(k for m in machine["memories"] for k in m["source"])):
            assert machine["sources"][key]
        assert load_soc(machine["models"]).npu_irq is not None
        assert all(load_soc(p).npu_irq is not None for p in machine["runs"])

"""The register model (weaklink.run.device) in the driver's sequence, and the interrupt stub's
encoding against the real assembler."""
from __future__ import annotations

import subprocess

from weaklink import toolchain
from weaklink.run import device as d
from weaklink.run.irq import stub_code


def npu() -> d.EthosU:
    return d.EthosU(id_word=0x10066001, config_word=0x00001807)


def test_identity_and_soft_reset_set_prot():
    n = npu()
    assert n.read(d.ID) == 0x10066001 and n.read(d.CONFIG) == 0x00001807
    n.write(d.RESET, 0b10)                    # user, non-secure
    assert n.read(d.PROT) == 0b10 and not n.read(d.STATUS) & d.RESET_STATUS
    n.write(d.ID, 0)                          # read-only
    assert n.read(d.ID) == 0x10066001


def test_cmd_starts_a_job_with_the_programmed_registers():
    n = npu()
    n.write(d.QBASE, 0x70000060)
    n.write(d.QSIZE, 680)
    for i, address in enumerate((0x70000330, 0x31000000, 0)):
        n.write(d.BASEP + 8 * i, address)
        n.write(d.BASEP + 8 * i + 4, 0)
    n.write(d.CMD, 0xC)                       # clocks and power only: no job
    assert n.read(d.CMD) == 0xC and not n.read(d.STATUS) & d.STATE_RUNNING
    start = n.write(d.CMD, (n.read(d.CMD) & 0xC) | d.TRANSITION_TO_RUNNING)
    assert start == d.Start(0x70000060, 680, {0: 0x70000330, 1: 0x31000000, 2: 0}, 0, 0)
    assert n.read(d.STATUS) & d.STATE_RUNNING


def test_finish_raises_status_and_counts_on_the_pmu():
    n = npu()
    n.write(d.PMCR, d.CNT_EN | d.EVENT_RST | d.CYCLE_RST)
    n.write(d.PMEVTYPER, 0x23)                # NPU_ACTIVE
    n.write(d.PMEVTYPER + 4, 0x182)           # AXI1_RD_DATA_BEAT_RECEIVED
    n.write(d.PMCNTENSET, d.CYCLE_COUNTER | 0b11)
    n.write(d.QSIZE, 680)
    n.write(d.CMD, d.TRANSITION_TO_RUNNING)
    n.finish({"cycles": 67268, "npu_active_cycles": 60000,
              "axi_read_beats": {"AXI0": 10, "AXI1": 3185}}, ["AXI0", "AXI1"])
    status = n.read(d.STATUS)
    assert status & d.IRQ_RAISED and status & d.CMD_END_REACHED and not status & d.STATE_RUNNING
    assert n.read(d.QREAD) == 680
    assert n.read(d.PMCCNTR_LO) == 67268 and n.read(d.PMEVCNTR) == 60000 and n.read(d.PMEVCNTR + 4) == 3185
    n.write(d.CMD, d.CLEAR_IRQ)
    assert not n.read(d.STATUS) & d.IRQ_RAISED and n.read(d.STATUS) & d.CMD_END_REACHED
    n.write(d.PMCNTENCLR, d.CYCLE_COUNTER)
    assert n.read(d.PMCNTENSET) == 0b11


def test_stub_is_what_the_assembler_makes(cross_toolchain, tmp_path):
    src = tmp_path / "stub.S"
    src.write_text(".syntax unified\n.thumb\nmovw r0, #0xe204\nmovt r0, #0xe000\nmovw r1, #0\n"
                   "movt r1, #0x100\nstr r1, [r0]\ndsb sy\nisb sy\n")
    obj, raw = tmp_path / "stub.o", tmp_path / "stub.bin"
    assert toolchain.run("gcc", [*toolchain.CPU_FLAGS, "-c", src, "-o", obj]).returncode == 0
    subprocess.run([toolchain.tool("objcopy"), "-O", "binary", "-j", ".text", str(obj), str(raw)], check=True)
    assert stub_code(0xE000E204, 1 << 24) == raw.read_bytes()

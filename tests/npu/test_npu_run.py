"""hang / ok / error on the U85 Dedicated_Sram_384KB model, the JSON contract and the CLI."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import npu.api
from npu.api import Base
from npu.cli import main
from npu.errors import InputError
from npu.read.model import load_model
from npu.readonly import read_only_size

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

DDR_WEIGHTS, DDR_SCRATCH, SRAM = 0x7000_0000, 0x7010_0000, 0x3100_0000


def _bases(fast_address, fast_size=0):
    return [Base(0, DDR_WEIGHTS), Base(1, DDR_SCRATCH), Base(2, fast_address, fast_size)]


def test_fast_scratch_at_zero_hangs_with_a_diagnosis(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(0))
    assert r.status == "hang" and r.exit_code == 1
    d = r.diagnosis
    for part in ("command offset 0x000124", "region 2", "base 0x00000000", "offset 0x0",
                 "address 0x00000000", "SRAM AXI port", "no memory on corstone-320 is mapped at 0x00000000"):
        assert part in d, part


def test_384kb_sram_array_completes(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(SRAM, 384 * 1024))
    assert r.status == "ok" and r.diagnosis is None and r.exit_code == 0
    assert r.cycles["total"] > 0 and r.bases[2].memory == "SRAM" and r.bases[2].port == "SRAM"
    again = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(SRAM, 384 * 1024))
    assert again.cycles == r.cycles                      # predictable: the same every time


def test_16kb_fast_scratch_is_out_of_bounds(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(SRAM, 16 * 1024))
    assert r.status == "error" and "out of bounds" in r.diagnosis and "16384 bytes" in r.diagnosis


def test_unreachable_beats_out_of_bounds_and_size_zero_is_not_judged(u85_tiny):
    assert npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(0, 16)).status == "hang"
    assert npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(SRAM, 0)).status == "ok"


def test_fast_scratch_in_ddr_completes_slower_and_says_what_it_assumes(u85_tiny):
    """Arm documents DDR behind the U85's EXT port only; that the SRAM port reaches it too is an
    assumption (ExecuTorch's Sram_Only runner relies on it), printed with the verdict. DDR
    traffic is timed as DDR (the Dram of the system config), so it costs more than SRAM."""
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(0x7020_0000))
    in_sram = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(SRAM, 384 * 1024))
    assert r.status == "ok" and r.bases[2].memory == "DDR" and r.bases[2].timed_as == "Dram"
    assert any("reaches DDR through its SRAM port" in a for a in r.assumptions)
    assert r.cycles["total"] > in_sram.cycles["total"] and in_sram.bases[2].timed_as == "Sram"
    assert not any("SRAM port" in a for a in in_sram.assumptions)      # documented: no assumption


@pytest.mark.parametrize("address, memory", [(0x3000_0000, "DTCM"), (0x1000_0000, "ITCM")])
def test_fast_scratch_in_a_cpu_tcm_hangs_and_says_why(u85_tiny, address, memory):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=_bases(address, 0x8000))
    assert r.status == "hang" and r.fault_region == 2
    assert f"is {memory}, the Cortex-M85's" in r.diagnosis and "private to the CPU" in r.diagnosis
    assert "waits for it forever" in r.diagnosis
    assert any("TCMs are out of the NPU's reach" in a for a in r.assumptions)


def test_omitted_region_reads_as_base_zero(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=[Base(0, DDR_WEIGHTS), Base(1, DDR_SCRATCH)])
    assert r.status == "hang" and "region 2" in r.diagnosis


def test_shared_sram_never_touches_region_2(compiled):
    c = next(c for c in compiled if c.network == "tiny" and c.memory_mode == "Shared_Sram")
    bases = [Base(0, 0x3800_0000), Base(1, SRAM), Base(2, 0, 0)]
    assert npu.api.run(c.blob, **c.config, bases=bases).status == "ok"


def test_cycle_budget_turns_a_long_run_into_a_hang(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, budget=1000)
    assert r.status == "hang" and "cycle budget of 1000" in r.diagnosis


def test_default_placement_is_where_vela_assumes(u85_tiny):
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config)
    assert [(b.region, b.memory, b.port) for b in r.bases] == [(0, "DDR", "EXT"), (1, "DDR", "EXT"),
                                                                (2, "SRAM", "SRAM")]


def test_run_json_contract(u85_tiny, capsys):
    code = main(["run", "--json", str(u85_tiny.blob), "--accelerator", "ethos-u85-256",
                 "--system-config", "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB",
                 "--soc", "corstone-320", "--base", "0=0x70000000", "--base", "1=0x70100000", "--base", "2=0"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["status"] == "hang" and out["schema_version"] == 1
    assert set(out) >= {"status", "diagnosis", "accelerator", "system_config", "memory_mode", "bases",
                        "cycles", "pmu", "traffic", "operations", "inference_time_s"}
    assert out["bases"][2] == {"region": 2, "address": 0, "size": None, "memory": None, "port": "SRAM",
                               "timed_as": "Sram"}
    assert any("never answered" in a for a in out["assumptions"])
    assert set(out["cycles"]) == {"total", "npu", "sram_access", "dram_access", "onchip_flash_access",
                                  "offchip_flash_access"}
    assert {"npu_active_cycles", "npu_idle_cycles", "npu_total_cycles"} <= set(out["pmu"])


def test_cli_exit_codes_and_plot(u85_tiny, tmp_path):
    args = [sys.executable, "-m", "npu.cli", "run", str(u85_tiny.blob), "--accelerator", "ethos-u85-256",
            "--system-config", "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB",
            "--base", "0=0x70000000", "--base", "1=0x70100000"]
    png = tmp_path / "t.png"
    ok = subprocess.run(args + ["--base", "2=0x31000000:384K", "--plot", str(png)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert subprocess.run(args + ["--base", "2=0"], capture_output=True).returncode == 1
    bad = subprocess.run(args + ["--base", "9=0"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("npu: error:") and "Traceback" not in bad.stderr


@pytest.mark.parametrize("accelerator", ["ethos-u55-128", "ethos-u65-256"])
def test_wrong_accelerator_fails_the_driver_check(u85_tiny, accelerator):
    config = dict(u85_tiny.config, accelerator=accelerator)
    r = npu.api.run(u85_tiny.blob, **config)
    assert r.status == "error" and r.diagnosis.startswith("driver:") and "optimizer config" in r.diagnosis


def test_every_fixture_fits_the_sizes_vela_gives(compiled):
    """Each region sized exactly as Vela's npz says: nothing is out of bounds (tiles of
    rolling buffers included), so the 16 KB verdict above is about the size, not the model.
    Region 0 reaches the last byte a weight stream reads: Vela leaves the read-only area's
    trailing zeros out of its output (npu.readonly)."""
    for c in compiled:
        result = npu.api.run(c.npz, **c.config)
        assert result.status == "ok", (c.id, result.diagnosis)
        sizes = {b.region: b.size for b in result.bases}
        model = load_model(c.npz)
        want = {**model.region_sizes, 0: read_only_size(model)}
        assert sizes == want and 0 <= want[0] - model.region_sizes[0] < 1024, c.id


def test_bad_bases_through_the_api(u85_tiny):
    with pytest.raises(InputError, match="regions are 0..7"):
        npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=[Base(8, 0)])
    with pytest.raises(InputError, match="same region"):
        npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=[Base(0, 0x70000000), Base(0, 0x70000000)])


def test_u55_basep_keeps_the_low_32_bits(compiled):
    c = next(c for c in compiled if c.network == "tiny" and c.accelerator == "ethos-u55-128")
    r = npu.api.run(c.blob, **c.config, bases=[Base(0, 0x1_3800_0000), Base(1, 0x1_3100_0000)])
    assert r.status == "ok" and [b.address for b in r.bases] == [0x3800_0000, 0x3100_0000]


def test_command_stream_fetch_goes_through_qconfig(u85_tiny):
    """Dedicated_Sram: QCONFIG 3 = EXT port. A stream in DDR is fetched (documented); one in
    SRAM is fetched on an assumption, printed; one in DTCM never is."""
    good = _bases(SRAM, 384 * 1024)
    ddr = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=good, stream_address=0x7020_0000)
    assert ddr.status == "ok" and not ddr.assumptions
    sram = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=good, stream_address=0x3120_0000)
    assert sram.status == "ok" and any("SRAM through its EXT port" in a for a in sram.assumptions)
    r = npu.api.run(u85_tiny.blob, **u85_tiny.config, bases=good, stream_address=0x3000_0000)
    assert r.status == "hang" and "command stream fetch" in r.diagnosis and "EXT AXI port (QCONFIG)" in r.diagnosis
    assert "DTCM" in r.diagnosis


def test_an_npu_the_soc_cannot_carry_is_exit_2(u85_tiny):
    """No Corstone-300 carries an Ethos-U85 (Arm's FVPs: SSE-300 with U55 or U65, SSE-320 with
    U85): one line, exit 2, nothing emulated."""
    args = [sys.executable, "-m", "npu.cli", "run", str(u85_tiny.blob), "--accelerator", "ethos-u85-256",
            "--system-config", "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB",
            "--soc", "corstone-300"]
    bad = subprocess.run(args, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "corstone-300 carries ethos-u55 or ethos-u65, not ethos-u85-256" in bad.stderr
    with pytest.raises(InputError, match="carries ethos-u85, not ethos-u55-128"):
        npu.api.run(u85_tiny.blob, **dict(u85_tiny.config, accelerator="ethos-u55-128"), soc="corstone-320")


@pytest.mark.parametrize("soc", ["himax-we2", "alif-e7-he", "FILE.toml"])
def test_run_soc_takes_every_preset_and_a_file(compiled, soc, capsys):
    """`npu run --soc` takes what `weaklink check --soc` takes: every preset of npu/data/soc.toml
    and a user's TOML file (here the WE2-shaped fixture's map, SRAM at 0x34000000)."""
    u55 = next(c for c in compiled if c.network == "tiny" and c.accelerator == "ethos-u55-128")
    given = str(FIXTURES / "firmware" / "boards" / "my-soc.toml") if soc == "FILE.toml" else soc
    bases = {"himax-we2": ("0x34000000", "0x34100000"), "alif-e7-he": ("0x02000000", "0x02200000")}
    weights, scratch = bases.get(soc, bases["himax-we2"])
    code = main(["run", "--json", str(u55.blob), "--accelerator", "ethos-u55-128",
                 "--system-config", u55.system_config, "--memory-mode", u55.memory_mode,
                 "--soc", given, "--base", f"0={weights}", "--base", f"1={scratch}",
                 "--stream-address", weights])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "ok", out["diagnosis"]
    assert out["bases"][1]["memory"] is not None

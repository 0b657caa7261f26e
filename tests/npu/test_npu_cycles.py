"""Total cycles against Vela's own "Total cycles", per model and config."""
from __future__ import annotations


import npu.api
from vela_oracle import total_cycles

TOLERANCE = 0.20


def test_total_cycles_within_20_percent_of_vela(compiled, capsys):
    rows, worst = [], 0.0
    for c in compiled:
        vela = total_cycles(c.vela_log)
        result = npu.api.run(c.blob, **c.config)
        assert result.status == "ok", (c.id, result.diagnosis)
        error = (result.cycles["total"] - vela) / vela
        worst = max(worst, abs(error))
        rows.append(f"{c.network:9} {c.accelerator:14} {c.memory_mode:21} {vela:>10} "
                    f"{result.cycles['total']:>10} {100 * error:>+7.1f}%")
    with capsys.disabled():
        print("\nnetwork   accelerator    memory mode           vela total   npu total   error")
        print("\n".join(rows))
    assert worst <= TOLERANCE, f"worst error {100 * worst:.1f}%"


def test_per_op_table_uses_vela_columns(u85_tiny):
    result = npu.api.run(u85_tiny.blob, **u85_tiny.config)
    ops = result.operations
    assert [o["op"] for o in ops] == ["CONV", "DMA", "DEPTHWISE", "CONV"]
    conv = ops[0]
    assert conv["macs"] == 32 * 32 * 16 * 3 * 3 * 8          # Vela's MAC count for conv_out
    assert conv["dram_access"] == conv["cycles"] > conv["npu"]  # DRAM bound, as Vela says
    assert "Op Cycles" in result.to_table() and "DRAM AC" in result.to_table()
    assert sum(o["cycles"] for o in ops if o["op"] != "DMA") <= result.cycles["total"]


def test_dma_overlaps_compute(compiled):
    c = next(c for c in compiled if c.network == "deep" and c.accelerator == "ethos-u55-128")
    result = npu.api.run(c.blob, **c.config)
    kernel_time = sum(o["cycles"] for o in result.operations if o["op"] != "DMA")
    dma_time = sum(o["cycles"] for o in result.operations if o["op"] == "DMA")
    assert dma_time > 0
    assert result.cycles["total"] < kernel_time + dma_time      # some DMA is hidden
    assert result.pmu["npu_active_cycles"] + result.pmu["npu_idle_cycles"] == result.pmu["npu_total_cycles"]


def test_traffic_and_pmu_per_memory(u85_tiny):
    result = npu.api.run(u85_tiny.blob, **u85_tiny.config)
    assert set(result.traffic) == {"DDR", "SRAM"}
    assert result.traffic["SRAM"]["write_bytes"] >= 32 * 32 * 16          # conv OFM in fast scratch
    assert result.traffic["DDR"]["read_bytes"] >= 51136 - 2048            # weights stream from DDR
    assert result.pmu["axi_read_beats"]["EXT"] > 0 and result.pmu["axi_write_beats"]["SRAM"] > 0
    assert abs(result.inference_time_s - result.cycles["total"] / 1e9) < 1e-12
    kinds = {k for r in result.region_traffic for k in r if k.endswith("_bytes")}
    assert {"feature_maps_read_bytes", "feature_maps_write_bytes", "weights_read_bytes", "scales_read_bytes",
            "dma_read_bytes", "dma_write_bytes"} <= kinds


def test_the_benchmark_network_has_200_operations(compiled):
    """benchmarks/bench_npu.py times this stream (performance lives there, not in tests)."""
    c = next(c for c in compiled if c.network == "deep" and c.memory_mode == "Sram_Only")
    assert len(npu.api.run(c.blob, **c.config).operations) >= 200


SYSTEM_FOR = {"ethos-u55": "Ethos_U55_High_End_Embedded", "ethos-u65": "Ethos_U65_High_End",
              "ethos-u85": "Ethos_U85_SYS_DRAM_Mid"}


def test_every_accelerator_config(generator, model_cache, capsys):
    """The tiny network on all eleven Vela accelerator configs: decode and cycles."""
    from npu.hw import accelerator_names
    from npu.read.model import load_model
    from vela_oracle import parse_listing
    rows = []
    for name in accelerator_names():
        system = SYSTEM_FOR[name.rsplit("-", 1)[0]]
        vela_dir = generator.compile_network("tiny", name, system, "Shared_Sram", model_cache)
        log = (vela_dir / "vela.log").read_text()
        model = load_model(vela_dir / "tiny_vela.npz")
        assert [(c.offset, c.command, c.param, c.payload) for c in model.commands] == \
               [(x["offset"], x["command"], x["param"], x["payload"]) for x in parse_listing(log)], name
        result = npu.api.run(model, accelerator=name, system_config=system, memory_mode="Shared_Sram")
        vela = total_cycles(log)
        error = (result.cycles["total"] - vela) / vela
        rows.append(f"{name:15} {vela:>8} {result.cycles['total']:>8} {100 * error:+6.1f}%")
        assert result.status == "ok" and abs(error) <= TOLERANCE, rows[-1]
    with capsys.disabled():
        print("\ntiny network, Shared_Sram, per accelerator: vela / npu / error\n" + "\n".join(rows))


def test_dma_wait_holds_the_next_kernel(u85_tiny):
    """Stream: CONV, DMA_START (weights for the depthwise), DMA_WAIT 0, DEPTHWISE."""
    from npu.driver import Base
    from npu.emulate.engine import execute
    from npu.emulate.ops import DmaOp, Wait, operations
    from npu.api import _bindings
    from npu.hw import accelerator, load_vela_ini
    from npu.socfile import load_soc
    result = npu.api.run(u85_tiny.blob, **u85_tiny.config)
    conv, dma, dw = result.operations[:3]
    assert (conv["op"], dma["op"], dw["op"]) == ("CONV", "DMA", "DEPTHWISE")
    assert dma["start"] == conv["start"]                       # issued while the conv runs
    assert dw["start"] >= dma["start"] + dma["cycles"]          # DMA_WAIT 0 before the depthwise
    # Without the wait, a slow DMA would no longer hold the depthwise back.
    acc, ini, soc = accelerator("ethos-u85-256"), load_vela_ini(), load_soc("corstone-320")
    ops = operations(npu.api.load_model(u85_tiny.blob).commands, acc.microblocks)
    slow = [DmaOp(o.offset, o.src, o.dst, o.length * 1000) if isinstance(o, DmaOp) else o for o in ops]
    bindings, _ = _bindings([Base(0, 0x70000000), Base(1, 0x70100000), Base(2, 0x31000000)], soc,
                         ini.system_config("Ethos_U85_SYS_DRAM_Mid"), ini.memory_mode("Dedicated_Sram_384KB"), {0, 1, 2})
    waited = execute(slow, acc, soc, bindings).records
    unwaited = execute([o for o in slow if not isinstance(o, Wait)], acc, soc, bindings).records
    assert waited[2].start == waited[1].end > unwaited[2].start

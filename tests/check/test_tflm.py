"""`weaklink check` on the TFLM-shaped fixture firmware: every verdict, and every base address
against the image (nm's symbol addresses; the weights buffer's offset in the flatbuffer, from
Vela's own flatbuffers classes)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from weaklink.builders import tflm as fixtures_tflm
from weaklink.check import check
from weaklink.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_oracle import buffer_offsets, nm  # noqa: E402

# variant: (verdict, findings, fast-memory source prefix, region 2's memory)
EXPECTED = {
    "fast-sram-u85": ("ok", set(), "DWARF call site", "SRAM"),
    "fast-sram-O0-u85": ("ok", set(), "literal pool", "SRAM"),
    "no-fast-u85": ("ok", {"region-not-in-assumed-memory"}, "DWARF call site", "DDR"),
    "fast-too-small-u85": ("error", {"fast-memory-too-small"}, "DWARF call site", "SRAM"),
    "fast-wrong-memory-u65": ("hang", {"fast-scratch-unreachable"}, "DWARF call site", "DTCM"),
    "fast-bram-u85": ("ok", {"region-not-in-assumed-memory"}, "DWARF call site", "BRAM"),
    "shared-sram-u55": ("ok", set(), "DWARF call site", "SRAM"),
    # the arena in DDR through AXI0 is timed as that port's Sram (Corstone-300's timing adapters)
    "arena-ddr-u55": ("ok", set(), "DWARF call site", "DDR"),
    "split-fast-sram-u85": ("ok", set(), "DWARF call site", "SRAM"),
}


@pytest.fixture(scope="module")
def tflm(cross_toolchain):
    return {im.variant.name: im for im in fixtures_tflm.build()}


def _check(im, **kw):
    t = im.target
    return check(im.elf, accelerator=t.accelerator, system_config=t.system_config,
                 memory_mode=t.memory_mode, map_path=im.map, **kw)


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_verdict_findings_and_fast_memory_source(tflm, variant):
    verdict, rules, source, memory = EXPECTED[variant]
    report = _check(tflm[variant])
    assert report.verdict == verdict
    assert {f.rule for f in report.findings} == rules
    assert report.table.binding == "tflm-ethosu"
    assert report.table.fast_memory.source.startswith(source)
    assert report.run.bases[2].memory == memory
    assert report.exit_code == (0 if verdict == "ok" else 1)


@pytest.mark.parametrize("variant", sorted(v.name for v in fixtures_tflm.VARIANTS))
def test_bases_against_the_image(tflm, variant):
    im = tflm[variant]
    syms = nm(im.elf)
    model, _ = syms["g_model"]
    arena, arena_size = syms["tensor_arena"]
    oracles = buffer_offsets(im.tflite.read_bytes())
    report = _check(im)
    assert len(report.operators) == len(oracles) == (3 if variant.startswith("split") else 1)
    for op, oracle in zip(report.operators, oracles):
        assert op.table.operator == oracles.index(oracle)
        _assert_table(op.table, oracle, syms, model, arena, arena_size)


def _assert_table(table, oracle, syms, model, arena, arena_size):
    assert model % 16 == 0 and table.model_address == model and table.model_symbol == "g_model"
    assert table.stream_address == model + oracle["stream"]
    weights = table.base(0)
    assert weights.address == model + oracle["weights"] and weights.size == oracle["sizes"][0]
    assert (table.arena.address, table.arena.size) == (arena, arena_size)
    fast = table.fast_memory.given             # the variants whose fast memory replaces region 2
    assert fast == ("ethosu_fast_memory" in syms and table.fast_memory.address is not None)
    assert [b.size for b in table.bases] == oracle["sizes"]
    for b in table.bases[1:]:
        offset = oracle["offsets"][b.region]
        if b.region == 2 and fast:
            assert b.address == syms["ethosu_fast_memory"][0] and b.arena is None
            assert table.fast_memory.size == syms["ethosu_fast_memory"][1]
        elif b.size == 0:
            assert b.address == 0 and "no memory" in b.note    # TFLM passes NULL
        elif offset is None:
            # no offline plan: TFLM's planner decides at run time; only the bounds are known
            assert b.arena == (arena, arena + arena_size) and b.offset is None
            assert "decided by TFLM's planner at run time" in b.note
        else:
            # Vela's offline plan, honoured by TFLM's planner: the arena's start aligned to 16
            assert b.arena == (arena, arena + arena_size) and offset is not None and offset >= 0
            assert (b.offset, b.address) == (offset, ((arena + 15) & ~15) + offset)
            assert "(offline memory plan)" in b.note


def test_no_fast_memory_is_read_as_zero_not_unknown(tflm):
    fast = _check(tflm["no-fast-u85"]).table.fast_memory
    assert (fast.address, fast.size, fast.given) == (0, 0, False)


def test_too_small_names_the_driver_check(tflm):
    report = _check(tflm["fast-too-small-u85"])
    finding = next(f for f in report.findings if f.rule == "fast-memory-too-small")
    assert '"Fast memory area too small"' in finding.message and "16384" in finding.message
    assert "Fast memory area too small" in report.diagnosis and report.diagnosis.endswith("→ error")


def test_cli_detects_the_preset_and_reports_operators(tflm, capsys):
    im = tflm["fast-sram-u85"]
    t = im.target
    code = main(["check", str(im.elf), "--accelerator", t.accelerator, "--system-config",
                 t.system_config, "--memory-mode", t.memory_mode, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["binding"] == "tflm-ethosu" and out["npu"] == "ok"
    assert out["fast_memory"]["source"].startswith("DWARF call site")
    [op] = out["operators"]
    assert (op["model_symbol"], op["operator"], op["verdict"]) == ("g_model", 0, "ok")
    assert [b["region"] for b in op["bases"]] == [0, 1, 2, 3, 4]
    # Vela's offline plan places the arena tensors: nothing is left to run time
    assert not any(b["decided_at_run_time"] for b in op["bases"])
    assert op["bases"][1]["arena_offset"] == 0 and op["bases"][0]["arena_offset"] is None
    for key in ("fast_scratch", "cycles", "findings", "bases", "model", "emulation"):
        assert key in out                       # today's fields stay


def test_binding_override_is_obeyed(tflm, capsys):
    im = tflm["fast-sram-u85"]
    t = im.target
    code = main(["check", str(im.elf), "--accelerator", t.accelerator, "--system-config",
                 t.system_config, "--memory-mode", t.memory_mode, "--binding", "executorch-arm"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no vela_bin_stream model blob" in err[0]


def test_executorch_images_still_detect_executorch(firmware):
    report = check(firmware["weak-example-u85"].elf, accelerator="ethos-u85-256",
                   system_config="Ethos_U85_SYS_DRAM_Mid", memory_mode="Dedicated_Sram_384KB")
    assert report.table.binding == "executorch-arm" and report.verdict == "ok"
    # the fixture never calls ethosu_init nor holds its address: the driver has no fast memory
    fast = report.table.fast_memory
    assert (fast.address, fast.given, fast.source) == (0, False, "never called")
    assert not report.assumptions
    assert [op.table.operator for op in report.operators] == [None]


def test_check_reads_the_image_once(tflm, monkeypatch):
    """One image object flows through analysis, binding and emulation."""
    import builtins

    im = tflm["fast-sram-u85"]
    reads = []
    real_open, real_read_bytes = builtins.open, Path.read_bytes

    def counting_open(file, *a, **kw):
        if str(file) == str(im.elf):
            reads.append("open")
        return real_open(file, *a, **kw)

    def counting_read_bytes(self):
        if str(self) == str(im.elf):
            reads.append("read_bytes")
        return real_read_bytes(self)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(Path, "read_bytes", counting_read_bytes)
    _check(im)
    assert len(reads) == 1, reads


def test_check_reads_the_map_once(tflm, monkeypatch):
    """The map is parsed once and its text serves every later question: the arena's input
    section (this image's arena is found there) and the defining files."""
    import builtins

    im = tflm["fast-sram-u85"]
    reads = []
    real_open, real_read_text = builtins.open, Path.read_text

    def counting_open(file, *a, **kw):
        if str(file) == str(im.map):
            reads.append("open")
        return real_open(file, *a, **kw)

    def counting_read_text(self, *a, **kw):
        if str(self) == str(im.map):
            reads.append("read_text")
        return real_read_text(self, *a, **kw)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(Path, "read_text", counting_read_text)
    report = _check(im)
    assert "map)" in report.table.arena.source
    assert len(reads) == 1, reads


def test_check_scans_ethosu_init_calls_once(tflm, code_scans):
    """The SoC choice (r1: the NPU base) and the fast memory (r2, r3) read the same calls of
    ethosu_init: its callers' code is followed once."""
    from weaklink.bind import callsite
    from weaklink.read.image import Image

    im = tflm["fast-sram-O0-u85"]
    report = _check(im)
    init, _ = callsite.callee_targets(Image.from_path(im.elf), "ethosu_init")
    assert init and report.table.fast_memory.given
    assert len([t for t in code_scans if t & init]) == 1, code_scans

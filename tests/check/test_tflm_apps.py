"""`weaklink check` on TFLM applications that hand TFLM its arena and model the ways real
projects do (weaklink.demo.fixtures.tflm_apps, built with arm-none-eabi-g++): the arena read
from the code where the code shows it, found by convention (and said to be assumed) where it
does not, unknown (never base 0) where neither tells; a model read from outside the image."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from weaklink.bind.tflmcalls import entries
from weaklink.check import check
from weaklink.cli import main
from weaklink.demo.fixtures import tflm_apps
from weaklink.read.image import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_oracle import buffer_offsets, nm  # noqa: E402

FLASH = tflm_apps.MODEL_FLASH_ADDRESS


@pytest.fixture(scope="module")
def apps(cross_toolchain):
    return tflm_apps.build()


def _target_args(im) -> list[str]:
    t = im.target
    return ["--accelerator", t.accelerator, "--system-config", t.system_config,
            "--memory-mode", t.memory_mode]


def _check(im, **kw):
    t = im.target
    return check(im.elf, accelerator=t.accelerator, system_config=t.system_config,
                 memory_mode=t.memory_mode, **kw)


def _assert_arena_bases(report, address: int, size: int, tflite: bytes):
    oracle = buffer_offsets(tflite)[0]
    a = report.table.arena
    assert (a.address, a.size) == (address, size) and not a.unknown
    for b in report.table.bases[1:]:
        offset = oracle["offsets"][b.region]
        assert not b.unknown and b.address == ((address + 15) & ~15) + offset


def test_tflm_entry_points_are_matched_demangled(apps):
    names = {e.name.split("(")[0]: e for e in entries(Image.from_path(apps["kit-static-arena"].elf)).values()}
    assert names["tflite::MicroAllocator::Create"].arena == 0
    ctor = names["tflite::MicroInterpreter::MicroInterpreter"]
    assert ctor.constructs


@pytest.mark.parametrize("variant,symbol", [
    ("himax-noinit-arena", "tensor_arena_buf"),            # a constant in r3 at the constructor
    ("himax-noinit-arena-O0", "tensor_arena_buf"),
    # through Model::Init's argument into MicroAllocator::Create; the larger
    # `image_scratch_arena` is never handed to TFLM
    ("kit-static-arena", "_ZN3arm3appL11tensorArenaE"),
])
def test_arena_from_the_code(apps, variant, symbol):
    im = apps[variant]
    address, size = nm(im.elf)[symbol]
    report = _check(im)
    assert report.verdict == "ok" and report.exit_code == 0
    _assert_arena_bases(report, address, size, im.tflite.read_bytes())
    assert report.table.arena.source.startswith("the code before the call")
    assert not any("tensor arena" in a for a in report.assumptions)
    if variant == "kit-static-arena":
        assert report.table.arena.name == "arm::app::tensorArena"
        assert "Model::Init" in report.table.arena.source


@pytest.mark.parametrize("with_map", [False, True])
def test_anonymous_namespace_arena_is_an_assumption(apps, with_map):
    """Zephyr's sample keeps the arena in an object's field: the code does not show it; the
    demangled name (or, with the map, the input section tflm_arena) finds it, said as assumed."""
    im = apps["zephyr-anon-arena"]
    address, size = nm(im.elf)["_ZN12_GLOBAL__N_127inferenceProcessTensorArenaE"]
    report = _check(im, map_path=im.map if with_map else None)
    assert report.verdict == "ok"
    _assert_arena_bases(report, address, size, im.tflite.read_bytes())
    assert report.table.arena.name == "(anonymous namespace)::inferenceProcessTensorArena"
    assert ("tflm_arena" in report.table.arena.source) == with_map
    [assumed] = [a for a in report.assumptions if "tensor arena" in a]
    assert "InferenceProcess::runJob" in assumed and "--arena" in assumed


def test_run_time_arena_is_unknown_not_zero(apps, capsys):
    im = apps["runtime-arena"]
    report = _check(im)
    assert report.verdict == "unknown" and report.exit_code == 1
    assert report.table.arena.unknown and "--arena" in report.cannot_tell
    assert "run_model" in report.cannot_tell
    assert report.run.status == "unknown" and report.cycles is None      # nothing emulated
    # what can still be told: the weights, the model's needs
    assert report.table.base(0).address == nm(im.elf)["g_model"][0] + buffer_offsets(
        im.tflite.read_bytes())[0]["weights"]
    assert report.needs and not report.findings
    code = main(["check", str(im.elf), *_target_args(im), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["npu"] == "unknown"
    assert out["arena"]["unknown"] is True and out["arena"]["option"].startswith("--arena")
    [op] = out["operators"]
    assert [b["address"] is None for b in op["bases"]] == [False, True, True, True, True]
    assert all(b["unknown"] for b in op["bases"][1:]) and op["bases"][0]["unknown"] is None
    code = main(["check", str(im.elf), *_target_args(im)])
    text = capsys.readouterr().out
    assert code == 1 and "NPU UNKNOWN" in text and "unknown" in text.split("region  name")[1]
    assert "0x00000000" not in text


@pytest.mark.parametrize("spec", ["mem_pool", "SECTION", "ADDR:SIZE"])
def test_arena_option_states_it(apps, spec):
    im = apps["runtime-arena"]
    address, size = nm(im.elf)["_ZL8mem_pool"]
    given = {"SECTION": ".sram.bss", "ADDR:SIZE": f"{address:#x}:{size}"}.get(spec, spec)
    report = _check(im, arena=given)
    assert report.verdict == "ok"
    _assert_arena_bases(report, address, size, im.tflite.read_bytes())
    assert report.table.arena.source.startswith(f"--arena {given}")


def test_arena_option_naming_nothing_is_bad_input(apps, capsys):
    im = apps["runtime-arena"]
    code = main(["check", str(im.elf), *_target_args(im), "--arena", "no_such_arena"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--arena no_such_arena" in err[0]


def test_model_outside_the_image_is_named(apps, capsys):
    im = apps["flash-model"]
    code = main(["check", str(im.elf), *_target_args(im)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert f"model read from {FLASH:#x}, not in the image" in err[0]
    assert err[0].endswith(f"give --model FILE@{FLASH:#x}")


@pytest.mark.parametrize("at", [True, False])
def test_model_placed_where_the_code_reads_it(apps, at):
    im = apps["flash-model"]
    tflite = im.tflite.read_bytes()
    report = _check(im, model_path=f"{im.tflite}@{FLASH:#x}" if at else im.tflite)
    assert report.table.binding == "tflm-ethosu" and report.verdict == "ok"
    assert report.table.model_address == FLASH
    oracle = buffer_offsets(tflite)[0]
    assert report.table.stream_address == FLASH + oracle["stream"]
    assert report.table.base(0).address == FLASH + oracle["weights"]     # used in place
    address, size = nm(im.elf)["tensor_arena_buf"]
    _assert_arena_bases(report, address, size, tflite)

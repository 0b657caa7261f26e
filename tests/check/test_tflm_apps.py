"""`weaklink check` on TFLM applications that hand TFLM its arena and model the ways real
projects do (weaklink.builders.tflm_apps, built with arm-none-eabi-g++): the arena read
from the code where the code shows it, found by convention (and said to be assumed) where it
does not, unknown (never base 0) where neither tells; a model read from outside the image."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from weaklink.bind.tflm import _objects as arena_objects
from weaklink.bind.tflmcalls import entries
from weaklink.check import check
from weaklink.cli import main
from weaklink.builders import tflm_apps
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


def test_one_scan_reads_ethosu_init_and_tflm_calls(apps, code_scans):
    """The calls of ethosu_init (the NPU base, the fast memory) and of TFLM's entry points (the
    arena) are read in one scan of the code; only the functions that pass an argument on to
    TFLM get a second one."""
    from weaklink.bind import callsite

    im = apps["kit-static-arena"]
    report = _check(im)
    image = Image.from_path(im.elf)
    init, _ = callsite.callee_targets(image, "ethosu_init")
    tflm = set(entries(image))
    assert report.table.arena.source.startswith("the code before the call")
    assert init and tflm and [t for t in code_scans if t & (init | tflm)] == [init | tflm], code_scans


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
    # the reader says why it could not follow: a load from an object's field, not run time
    assert "loaded from memory" in assumed and "a field of an object" in assumed
    assert "computed at run time" not in assumed


def test_arena_read_from_a_read_only_word(apps):
    """Himax's allon_sensor_tflm: r3 is loaded from `tensor_arena`, an integer initialised to
    the array's address and never written, which GCC puts in .rodata: evidence, not a name."""
    im = apps["himax-arena-pointer"]
    address, size = nm(im.elf)["tensor_arena_buf"]
    pointer, _ = nm(im.elf)["_ZN12_GLOBAL__N_112tensor_arenaE"]
    report = _check(im)
    assert report.verdict == "ok"
    _assert_arena_bases(report, address, size, im.tflite.read_bytes())
    source = report.table.arena.source
    assert source.startswith("the code before the call") and not report.table.arena.assumption
    assert f"read-only word at {pointer:#x} (`(anonymous namespace)::tensor_arena`)" in source
    assert not any("tensor arena" in a for a in report.assumptions)


def test_stored_run_time_arena_is_unknown_never_a_vtable(apps, capsys):
    """Himax's tflm_yolov8_od: mm_reserve_align's pointer stored to a global and loaded back
    for the constructor; a class named like an arena has the largest `arena` object (its
    vtable). The arena is unknown, computed at run time; no name is guessed."""
    im = apps["stored-runtime-arena"]
    assert "_ZTV26SingleArenaBufferAllocator" in nm(im.elf)
    report = _check(im)
    assert report.verdict == "unknown" and report.exit_code == 1
    a = report.table.arena
    assert a.unknown and a.run_time and a.name is None and not a.assumption
    assert "computed at run time" in a.source and "mm_reserve_align" in a.source
    assert not any("arena" in x for x in report.assumptions)
    assert report.run.status == "unknown"
    # the convention alone never takes a vtable (nor typeinfo, guards, code)
    names = [n for n, _, _ in arena_objects(Image.from_path(im.elf))]
    assert names and not any(n.startswith(("vtable", "typeinfo", "guard")) for n in names)
    code = main(["check", str(im.elf), *_target_args(im), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["npu"] == "unknown" and out["arena"]["decided_at_run_time"] is True
    [op] = out["operators"]
    assert [b["decided_at_run_time"] for b in op["bases"]] == [False, True, True, True, True]


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
    """No model in the image, read in place from flash: the verdict is unknown (exit 1) and
    says where from and which option supplies it; the rest of the report stands (the SoC, the
    NPU base, the arena, the fast memory), and nothing is emulated."""
    im = apps["flash-model"]
    code = main(["check", str(im.elf), *_target_args(im)])
    out = capsys.readouterr()
    assert code == 1 and not out.err
    lines = out.out.splitlines()
    assert lines[0].endswith("NPU UNKNOWN")
    assert f"binding tflm-ethosu: no model in the image, read from {FLASH:#x}" in lines
    assert any(line.startswith("NPU base: ") for line in lines)
    assert any(line.startswith("tensor arena: `tensor_arena_buf`") for line in lines)
    assert not any(line.startswith("region ") for line in lines)          # no table to show
    diagnosis = lines[-1]
    assert diagnosis.startswith(f"diagnosis: cannot tell: model read from {FLASH:#x}, not in the image")
    assert diagnosis.endswith(f"give --model FILE@{FLASH:#x}")

    code = main(["check", "--json", str(im.elf), *_target_args(im)])
    j = json.loads(capsys.readouterr().out)
    assert code == 1 and j["npu"] == "unknown" and j["cycles"] is None and j["bases"] == []
    assert j["model_missing"] == j["cannot_tell"] and j["cannot_tell"].endswith(f"FILE@{FLASH:#x}")
    assert j["model"]["address"] == FLASH and j["emulation"]["status"] == "unknown"
    assert [op["verdict"] for op in j["operators"]] == ["unknown"]
    embedded = json.loads(_json_of(main, apps["kit-static-arena"], capsys))
    assert "model_missing" not in embedded      # only when the image holds no model


def _json_of(main, im, capsys) -> str:
    main(["check", "--json", str(im.elf), *_target_args(im)])
    return capsys.readouterr().out


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


def test_check_run_without_the_model_cannot_compare(apps, capsys):
    """The image runs on QEMU (its model is not where it reads it), but check has no table to
    hold against the run's: the comparison says it cannot be made, never a mismatch."""
    im = apps["flash-model"]
    code = main(["check", str(im.elf), *_target_args(im), "--run", "--timeout", "20", "--json"])
    j = json.loads(capsys.readouterr().out)
    assert code == 1 and j["npu"] == "unknown" and "run-mismatch" not in j["findings"]
    assert j["comparison"]["agree"] is False
    assert j["comparison"]["cannot_compare"].startswith("the image holds no model")
    assert [r["field"] for r in j["comparison"]["rows"]] == ["model"]


def test_one_lookup_by_demangled_name_serves_analyze_and_check(apps, capsys):
    """A static C++ array is a local symbol known by its mangled name only: `analyze --symbol`
    and `check --arena` both find `arm::app::tensorArena` by its demangled name, through the
    image's one lookup (weaklink.read.symbols)."""
    im = apps["kit-static-arena"]
    address, size = nm(im.elf)["_ZN3arm3appL11tensorArenaE"]
    assert main(["analyze", str(im.elf), "--json", "--symbol", "arm::app::tensorArena"]) == 0
    q = json.loads(capsys.readouterr().out)["queried"]["arm::app::tensorArena"]
    assert q["found"] and q["binding"] == "local" and (q["address"], q["size"]) == (address, size)
    assert q["name"] == "_ZN3arm3appL11tensorArenaE"
    report = _check(im, arena="arm::app::tensorArena")
    assert (report.table.arena.address, report.table.arena.size) == (address, size)


def test_the_arena_through_a_long_branch_stub_is_read(apps):
    """Model::Init sits in another memory than its caller, which calls it through GNU ld's
    long-branch stub (Alif's RTSS images: MainLoop in the TCM, Model::Init in MRAM): the call of
    the stub is a call of Model::Init, so the arena it hands on to MicroAllocator::Create is
    read from the code, never guessed by name (`image_scratch_arena` is the larger one)."""
    im = apps["kit-far-init"]
    symbols = nm(im.elf)
    assert "___ZN5Model4InitEPhmm_veneer" in symbols            # the trait: the stub is there
    report = _check(im)
    a = report.table.arena
    assert (a.address, a.size) == symbols["_ZN3arm3appL11tensorArenaE"]
    assert "Model::Init" in a.source and "hands it on to tflite::MicroAllocator::Create" in a.source
    assert a.assumption is None and report.verdict == "ok"

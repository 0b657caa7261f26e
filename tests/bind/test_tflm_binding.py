"""The tflm-ethosu preset, its tables, and what a binding may name (arena, fast memory)."""
from __future__ import annotations

from pathlib import Path

import pytest

from weaklink.builders import tflm as fixtures_tflm
from weaklink.bind import load_binding, resolve_tables
from weaklink.errors import InputError
from weaklink.read.image import Image


def test_preset():
    b = load_binding("tflm-ethosu")
    assert b.model_format == "tflite" and b.model_symbol is None
    assert b.arena.input_section == ".bss.tensor_arena" and b.arena.symbol_suffix == "arena"
    assert b.fast_memory.callee == "ethosu_init"
    assert [r.source for r in b.regions] == ["tflite-tensor"] * 5


@pytest.mark.parametrize("text,key", [
    ("schema_version = 1\narena = 3\n[[region]]\nindex = 0\nsource = 'tflite-tensor'\n", "arena"),
    ("schema_version = 1\n[model]\nformat = 'onnx'\n[[region]]\nindex = 0\nsource = 'tflite-tensor'\n",
     "model.format"),
    ("schema_version = 1\n[fast_memory]\nsymbols = [2]\n[[region]]\nindex = 0\nsource = 'tflite-tensor'\n",
     "fast_memory.symbols"),
])
def test_bad_tflm_keys_name_the_key(tmp_path, text, key):
    path = tmp_path / "b.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_binding(path)
    assert key in str(err.value) and str(path) in str(err.value)


@pytest.fixture(scope="module")
def no_dwarf_O0(cross_toolchain, tmp_path_factory):
    """The -O0 fixture, stripped of DWARF: the code before the call is the only source."""
    from weaklink import toolchain

    im = fixtures_tflm.build_variant(fixtures_tflm.VARIANTS[1])
    out = tmp_path_factory.mktemp("strip") / "nodwarf.elf"
    done = toolchain.run("objcopy", ["--strip-debug", im.elf, out])
    assert done.returncode == 0, done.stderr
    return out


def test_binding_names_the_arena_and_the_fast_memory(tmp_path, no_dwarf_O0):
    path = tmp_path / "b.toml"
    preset = Path(load_binding("tflm-ethosu").path).read_text()
    path.write_text(preset.replace("symbols = []\ninput_section", 'symbols = ["tensor_arena"]\ninput_section')
                    .replace("symbols = []\nsize_symbols = []", 'symbols = ["ethosu_fast_memory"]\nsize_symbols = []'))
    [table] = resolve_tables(Image.from_path(no_dwarf_O0), load_binding(path))
    assert table.arena.source == "symbol `tensor_arena` named by the binding"
    assert table.fast_memory.source == "symbol `ethosu_fast_memory` named by the binding"
    assert table.fast_memory.size == 0x60000


def test_without_dwarf_the_code_before_the_call_tells(no_dwarf_O0):
    [table] = resolve_tables(Image.from_path(no_dwarf_O0), load_binding("tflm-ethosu"))
    assert table.fast_memory.source.startswith("literal pool")
    assert (table.fast_memory.symbol, table.fast_memory.size) == ("ethosu_fast_memory", 0x60000)


def test_never_called_means_no_fast_memory(firmware):
    """The ExecuTorch fixture links ethosu_init but nothing calls it or holds its address: the
    driver keeps the fast memory it starts with, none. A fact from the image, not a guess."""
    [table] = resolve_tables(Image.from_path(firmware["weak-custom-u85"].elf),
                             load_binding("executorch-arm"))
    fast = table.fast_memory
    assert (fast.address, fast.given, fast.unknown, fast.source) == (0, False, False, "never called")
    assert "nothing calls it or holds its address" in fast.note and not fast.assumption


def test_thumb_constant_tracking_encodings():
    """Hand-assembled Thumb encodings (Armv8-M ARM): what each does to the r2/r3 constants."""
    from weaklink.bind.consttrack import step
    from weaklink.read import thumb

    def run(regs, pc, hw1, hw2=0, word=None):
        step(regs, thumb.decode(hw1, hw2, pc), word)

    regs: dict = {}
    run(regs, 0x100, 0x4A09, word=lambda a: 0x31000000 if a == 0x100 + 4 + 36 else None)  # ldr r2, [pc, #36]
    assert regs[2] == 0x31000000
    run(regs, 0x102, 0xB2D2)                            # uxtb r2, r2: unknown from here
    assert 2 not in regs
    run(regs, 0x104, 0xF44F, 0x23C0)                    # mov.w r3, #0x60000 (modified immediate)
    run(regs, 0x108, 0x461A)                            # mov r2, r3
    assert regs == {2: 0x60000, 3: 0x60000}
    run(regs, 0x10A, 0xBC0C)                            # pop {r2, r3}
    assert regs == {}
    run(regs, 0x10C, 0xF240, 0x0234)                    # movw r2, #0x34
    run(regs, 0x110, 0xF2C3, 0x1200)                    # movt r2, #0x3100
    assert regs == {2: 0x31000034}
    run(regs, 0x114, 0xB580)                            # push {r7, lr}
    run(regs, 0x116, 0x9301)                            # str r3, [sp, #4]
    assert regs == {2: 0x31000034}
    run(regs, 0x118, 0x3201)                            # adds r2, #1: a known sum
    assert regs == {2: 0x31000035}
    run(regs, 0x11A, 0xF2C3, 0x1300)                    # movt r3, #0x3100 with r3 unknown
    run(regs, 0x11E, 0xF2C3, 0x1300)                    # again: no None & 0xFFFF
    assert regs == {2: 0x31000035}


def test_planned_tensors_start_at_the_arena_aligned_to_16():
    """TFLM aligns the arena's start up to 16 bytes and adds the plan's offset; a tensor past
    the arena's end makes AllocateTensors fail, which the note says; -1 is left to run time."""
    from npu.read.tflite import TflTensor
    from weaklink.bind.tflm import Arena, EmbeddedModel, tensor_base

    model = EmbeddedModel(0x70000000, "g_model", b"", (), "present")
    arena = Arena("tensor_arena", 0x31000004, 0x1000, "symbol")
    planned = TflTensor(3, "input", (1, 8, 8, 8), 0, None, 0, 9, 0x200)
    address, size, note, bounds, offset = tensor_base(3, "input", planned, model, arena, None)
    assert (address, size, offset, bounds) == (0x31000010 + 0x200, 512, 0x200, (0x31000004, 0x31001004))
    assert "(offline memory plan)" in note and "AllocateTensors" not in note
    past = TflTensor(3, "input", (1, 64, 64, 8), 0, None, 0, 9, 0x200)
    assert "AllocateTensors fails" in tensor_base(3, "input", past, model, arena, None)[2]
    online = TflTensor(3, "input", (1, 8, 8, 8), 0, None, 0, 9, -1)
    address, _, note, bounds, offset = tensor_base(3, "input", online, model, arena, None)
    assert (address, offset) == (arena.address, None) and "-1 in the offline plan" in note
    empty = TflTensor(2, "scratch_fast", (0,), 0, None, 0, 3, 0)
    assert tensor_base(2, "fast", empty, model, arena, None)[:2] == (0, 0)

"""Binding files and the base-address table resolved from the real fixture images."""
from __future__ import annotations

import pytest

from npu.read.blob import read_blob
from weaklink.bind import load_binding, resolve_bases
from weaklink.bind.evidence import ReaderEvidence
from weaklink.errors import InputError
from weaklink.read.image import Image

SRAM = range(0x31000000, 0x31400000)


def test_preset_describes_three_regions():
    b = load_binding("executorch-arm")
    assert [r.index for r in b.regions] == [0, 1, 2]
    assert [r.source for r in b.regions] == ["model-weights", "symbol", "pointer"]
    assert b.region(2).symbols[0] == "ethosu_fast_scratch"


@pytest.mark.parametrize("text,key", [
    ("schema_version = 2\n", "schema_version"),
    ("schema_version = 1\n", "region"),
    ("schema_version = 1\n[[region]]\nindex = 9\nsource = 'symbol'\nsymbols = ['x']\n", "region[0].index"),
    ("schema_version = 1\n[[region]]\nindex = 0\nsource = 'magic'\n", "region[0].source"),
    ("schema_version = 1\n[[region]]\nindex = 1\nsource = 'pointer'\n", "region[0]"),
    ("schema_version = 1\n[[region]]\nindex = 1\nsource = 'symbol'\nsymbols = [1]\n", "region[0].symbols"),
    ("not toml [", "not valid TOML"),
])
def test_bad_binding_files_name_the_key(tmp_path, text, key):
    path = tmp_path / "b.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_binding(path)
    assert key in str(err.value) and str(path) in str(err.value)


def test_missing_preset_lists_the_presets():
    with pytest.raises(InputError, match="executorch-arm"):
        load_binding("no-such-runtime")


@pytest.mark.parametrize("variant", ["weak-example-u85", "weak-custom-u55"])
def test_region0_is_the_blob_weight_data_in_place(firmware, variant):
    image = Image.from_path(firmware[variant].elf)
    table = resolve_bases(image, load_binding("executorch-arm"))
    model = image.symbol_named("network_model")
    assert table.model_address == model.address
    blob = read_blob(image.bytes_at(model.address, model.size))
    weights = table.base(0)
    assert weights.size == len(blob.weight_data) > 0
    assert image.bytes_at(weights.address, weights.size) == blob.weight_data
    assert weights.address % 16 == 0


def test_region1_is_the_tensor_arena(firmware):
    image = Image.from_path(firmware["weak-example-u85"].elf)
    table = resolve_bases(image, load_binding("executorch-arm"))
    scratch = table.base(1)
    assert scratch.symbol.name == "temp_allocation_pool" and scratch.symbol.size == 0x4000000
    # the backend passes the blob's scratch size, allocated from the pool's start
    assert scratch.address >= 0x70000000 and scratch.size == table.model.scratch_size < 0x4000000
    assert f"{table.model.scratch_size} of its {0x4000000} bytes" in scratch.note


@pytest.mark.parametrize("variant,address,size,binding", [
    ("weak-example-u85", "sram", 0x60000, "global"),
    ("weak-custom-u85", 0, 0, "weak"),
    ("weak-near-miss-u85", 0, 0, "weak"),
    ("weak-override-in-archive-u85", 0, 0, "weak"),
    ("weak-too-small-u85", "sram", 0x4000, "global"),
    ("extern-example-u85", "sram", 0x60000, "global"),
    ("extern-example-u55", 0, 0, "global"),
    ("removed-custom-u85", 0, 0, None),
])
def test_region2_follows_the_winning_definition(firmware, variant, address, size, binding):
    image = Image.from_path(firmware[variant].elf)
    fast = resolve_bases(image, load_binding("executorch-arm")).base(2)
    assert (fast.address in SRAM) if address == "sram" else fast.address == address
    assert fast.size == size
    assert (fast.symbol.binding if fast.symbol else None) == binding


def test_image_without_a_model_is_bad_input(firmware, tmp_path):
    # The U85 image with its blob header bytes clobbered: nothing to bind.
    elf = Image.from_path(firmware["weak-custom-u85"].elf).elf
    at = elf.shdrs[elf.find_section(".ddr.rodata")].sh_offset  # network_model is the first thing there
    data = bytearray(elf.data)
    assert data[at:at + 15] == b"vela_bin_stream"
    data[at:at + 15] = b"x" * 15
    path = tmp_path / "nomodel.elf"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="vela_bin_stream"):
        resolve_bases(Image.from_path(path), load_binding("executorch-arm"))


def test_blob_found_by_scanning_when_the_binding_names_no_symbol(firmware, tmp_path):
    preset = load_binding("executorch-arm")
    text = open(preset.path).read().replace('symbol = "network_model"', "")
    path = tmp_path / "noscan.toml"
    path.write_text(text)
    image = Image.from_path(firmware["weak-example-u85"].elf)
    scanned = resolve_bases(image, load_binding(path))
    named = resolve_bases(image, preset)
    assert load_binding(path).model_symbol is None
    assert scanned.model_address == named.model_address
    assert scanned.base(0) == named.base(0)


def test_removed_backend_passes_zero_even_when_the_runner_defines_a_fast_scratch(firmware):
    outcome = firmware["removed-example-u85"]
    image = Image.from_path(outcome.elf)
    binding = load_binding("executorch-arm")
    # Symbols alone: the runner's strong 384 KB array is there.
    assert resolve_bases(image, binding).base(2).address in SRAM
    # DWARF shows that EthosUBackend.cpp never mentions the pointer: the backend passes 0/0.
    fast = resolve_bases(image, binding, references=ReaderEvidence(image)).base(2)
    assert (fast.address, fast.size) == (0, 0)
    assert "passes 0/0" in fast.note


@pytest.mark.parametrize("variant", ["weak-example-u85", "extern-example-u85", "weak-custom-u85"])
def test_dwarf_references_keep_the_pointer_the_backend_reads(firmware, variant):
    outcome = firmware[variant]
    image = Image.from_path(outcome.elf)
    binding = load_binding("executorch-arm")
    assert resolve_bases(image, binding, references=ReaderEvidence(image)) == resolve_bases(image, binding)

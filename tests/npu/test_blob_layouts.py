"""The vela_bin_stream blob in both descriptor layouts: four-entry shapes (ExecuTorch < 1.0)
and six-entry shapes (>= 1.0), told apart by the blocks' lengths; anything else refused in
one line."""
from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from npu.cli import main
from npu.read.blob import BLOCK_HEAD, FLAGS_AT, read_blob, write_blob


@pytest.fixture(scope="module")
def blobs(cross_toolchain):
    from weaklink.builders import firmware as fixtures, release as fixtures_release

    return fixtures.model_blob("u85").read_bytes(), fixtures_release.blob("u85").read_bytes()


def _blocks(data: bytes) -> dict[str, int]:
    """Offset of each block's header."""
    pos, out = 0, {}
    while pos < len(data):
        name, size = BLOCK_HEAD.unpack_from(data, pos)
        out[name.rstrip(b"\0").decode()] = pos
        pos += BLOCK_HEAD.size + ((size + 15) & ~15)
    return out


def test_both_layouts_read_to_the_same_network(blobs):
    old, new = (read_blob(b) for b in blobs)
    assert (old.shape_dims, new.shape_dims) == (4, 6)
    assert (old.cmd_data, old.weight_data, old.scratch_size) == \
        (new.cmd_data, new.weight_data, new.scratch_size)
    for a, b in zip(old.inputs + old.outputs, new.inputs + new.outputs):
        assert len(a.shape) == 4 and len(b.shape) == 6
        assert b.shape[:2] == (1, 1) and a.shape == b.shape[2:]      # Vela's leading 1s
        assert (a.elem_size, a.offset, a.region) == (b.elem_size, b.offset, b.region)
    assert write_blob(new) == blobs[1] and write_blob(old) == blobs[0]


def test_a_layout_change_shows_in_the_block_length(blobs):
    new = blobs[1]
    at = _blocks(new)["inputs"]
    _, size = BLOCK_HEAD.unpack_from(new, at)
    (count,) = struct.unpack_from("<i", new, at + BLOCK_HEAD.size)
    assert size == 4 + count * 36


def _bad(tmp_path, data: bytes):
    path = tmp_path / "bad.bin"
    path.write_bytes(data)
    return path


def test_descriptors_that_fit_no_layout_are_one_line_exit_2(blobs, tmp_path, capsys):
    new = bytearray(blobs[1])
    at = _blocks(new)["inputs"] + BLOCK_HEAD.size
    struct.pack_into("<i", new, at, 2)           # two tensors claimed, room for one
    path = _bad(tmp_path, bytes(new))
    assert main(["decode", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "inputs block holds 40 bytes for 2 tensor descriptor(s), which fits no known " \
           "layout (expected 60 for 4-entry shapes (ExecuTorch < 1.0), 76 for 6-entry " \
           "shapes (ExecuTorch >= 1.0))" in err


def test_inputs_and_outputs_of_different_layouts_are_refused(blobs, tmp_path, capsys):
    old, new = (read_blob(b) for b in blobs)
    mixed = bytearray(write_blob(new))
    at = _blocks(mixed)["outputs"]
    tail = write_blob(old)
    old_at = _blocks(tail)["outputs"]
    mixed = bytes(mixed[:at]) + tail[old_at:]
    assert main(["decode", str(_bad(tmp_path, mixed))]) == 2
    assert "inputs use 6-entry shapes (ExecuTorch >= 1.0) but outputs 4-entry shapes" in \
        capsys.readouterr().err


def test_a_block_held_outside_the_blob_says_so(blobs, tmp_path, capsys):
    new = read_blob(blobs[1])
    key = b"ab" * 32
    data = bytearray(write_blob(replace(new, weight_data=key)))
    data[_blocks(data)["weight_data"] + FLAGS_AT] = 1
    assert main(["decode", str(_bad(tmp_path, bytes(data)))]) == 2
    err = capsys.readouterr().err
    assert "block 'weight_data' is not in the blob: its data is stored in the program's named " \
           f"data under key '{key.decode()}'" in err
    data[_blocks(data)["weight_data"] + FLAGS_AT] = 7
    assert main(["decode", str(_bad(tmp_path, bytes(data)))]) == 2
    assert "has flags 0x7" in capsys.readouterr().err


def test_run_on_the_six_entry_blob(blobs, tmp_path, capsys):
    path = tmp_path / "v1.bin"
    path.write_bytes(blobs[1])
    assert main(["run", str(path), "--accelerator", "ethos-u85-256", "--system-config",
                 "Ethos_U85_SYS_DRAM_Mid", "--memory-mode", "Dedicated_Sram_384KB"]) == 0

"""Bad input: one clear line, exit 2, no traceback."""
from __future__ import annotations

import io
import struct
import subprocess
import sys

import numpy as np
import pytest

from npu.cli import main
from npu.read.blob import VelaBlob, read_blob, write_blob
from npu.read.model import load_model


def _cop1(stream_words, config=0x20000118, ident=0x20007000):
    head = [0x31504F43, 0x00100001, config, ident, 5, 5, 5, 2 | (len(stream_words) << 16)]
    return struct.pack(f"<{len(head) + len(stream_words)}I", *head, *stream_words)


STOP = 0xFFFF0000
CASES = {
    "bad magic": (lambda p: b"XOP1" + p[4:], "bad magic"),
    "truncated payload": (lambda p: p[:-8], "truncated payload"),
    "unknown opcode": (lambda p: _cop1([0x000003FE, STOP]), "unknown opcode"),
    "region above 7": (lambda p: _cop1([0x0009010F, STOP]), "above 7"),
    "missing stop": (lambda p: _cop1([0x0001010F]), "without NPU_OP_STOP"),
    "cmd1 without payload": (lambda p: _cop1([0x00004000]), "no payload word"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_stream_is_one_line_exit_2(u85_tiny, tmp_path, capsys, case):
    mutate, message = CASES[case]
    good = read_blob(u85_tiny.blob.read_bytes())
    bad = VelaBlob(mutate(good.cmd_data), good.weight_data, good.scratch_size, good.inputs, good.outputs)
    path = tmp_path / "bad.bin"
    path.write_bytes(write_blob(bad))
    assert main(["decode", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"npu: error: {path}: ") and message in err[0]
    assert "(at offset " in err[0]


def test_npz_missing_keys(u85_tiny, tmp_path, capsys):
    with np.load(u85_tiny.npz, allow_pickle=True) as npz:
        keep = {k: npz[k] for k in npz.files if k not in ("weight_data", "scratch_shape")}
    path = tmp_path / "missing.npz"
    np.savez(path, **keep)
    assert main(["decode", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing keys: weight_data, scratch_shape" in err


@pytest.mark.parametrize("content", [b"", b"hello world", b"PK\x03\x04broken zip", b"TFL3" * 2,
                                     b"vela_bin_stream\0" + b"\xff" * 20])
def test_junk_files(tmp_path, capsys, content):
    path = tmp_path / "junk.bin"
    path.write_bytes(content)
    assert main(["decode", str(path)]) == 2
    assert capsys.readouterr().err.startswith("npu: error:")


def test_missing_file_and_unknown_config(u85_tiny, capsys):
    assert main(["decode", "/nonexistent/model.npz"]) == 2
    assert main(["run", str(u85_tiny.blob), "--accelerator", "ethos-u85-256", "--system-config", "Nope",
                 "--memory-mode", "Sram_Only"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "no such file" in err[0] and "no [System_Config.Nope]" in err[1]
    assert "--vela-ini" in err[1]           # the stock vela.ini: say how to give the project's own


def test_a_projects_own_ini_is_not_told_to_give_itself(u85_tiny, tmp_path, capsys):
    ini = tmp_path / "board_vela.ini"
    ini.write_text("[System_Config.Board]\ncore_clock=400e6\naxi0_port=Sram\naxi1_port=OffChipFlash\n"
                   "Sram_clock_scale=1.0\nSram_burst_length=32\nSram_read_latency=16\n"
                   "Sram_write_latency=16\nOffChipFlash_clock_scale=0.25\n"
                   "OffChipFlash_burst_length=128\nOffChipFlash_read_latency=64\n"
                   "OffChipFlash_write_latency=64\n")
    assert main(["run", str(u85_tiny.blob), "--accelerator", "ethos-u85-256", "--system-config", "Nope",
                 "--memory-mode", "Sram_Only", "--vela-ini", str(ini)]) == 2
    err = capsys.readouterr().err
    assert "no [System_Config.Nope]" in err and "--vela-ini" not in err


def test_no_traceback_from_the_console_script(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(_cop1([0x0009010F, STOP]))
    proc = subprocess.run([sys.executable, "-m", "npu.cli", "decode", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == f"npu: error: {path}: NPU_SET_IFM_REGION selects region 9, above 7 (at offset 0)\n"


def test_blob_round_trip(u85_tiny):
    data = u85_tiny.blob.read_bytes()
    blob = read_blob(data)
    assert write_blob(blob) == data and len(data) % 16 == 0
    with np.load(u85_tiny.npz, allow_pickle=True) as npz:
        assert blob.cmd_data == npz["cmd_data"].item() and blob.scratch_size == int(npz["scratch_size"])
        assert blob.inputs[0].shape == (1, 32, 32, 8) and blob.inputs[0].region == int(npz["input_region"][0])
    assert load_model(io.BytesIO(data).getvalue()).container == "blob"

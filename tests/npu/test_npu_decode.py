"""The decoder against Vela's own --verbose-register-command-stream listing."""
from __future__ import annotations

import json

import numpy as np
import pytest

from npu.cli import main
from npu.read.model import load_model
from vela_oracle import parse_listing


def _as_listed(cmd) -> dict:
    return {"offset": cmd.offset, "command": cmd.command, "param": cmd.param, "code": cmd.code,
            "payload": cmd.payload,
            "fields": {k: (hex(v) if k == "addr" else str(v)) for k, v in cmd.fields.items()}}


def test_every_compiled_stream_decodes_exactly_as_vela_lists_it(compiled):
    agreed = []
    for c in compiled:
        listing = parse_listing(c.vela_log)
        assert len(listing) > 50, c.id
        ours = [_as_listed(cmd) for cmd in load_model(c.blob).commands]
        for i, (a, b) in enumerate(zip(ours, listing)):
            assert a == b, f"{c.id}: command {i} differs"
        assert len(ours) == len(listing), c.id
        agreed.append(c.id)
    assert len(agreed) >= 15


def test_containers_agree(compiled, vela_tflite):
    c = next(c for c in compiled if c.network == "tiny" and c.memory_mode.startswith("Dedicated"))
    from_blob, from_npz = load_model(c.blob), load_model(c.npz)
    from_tflite = load_model(vela_tflite)
    assert from_blob.commands == from_npz.commands == from_tflite.commands
    assert (from_blob.container, from_npz.container, from_tflite.container) == ("blob", "npz", "tflite")
    with np.load(c.npz, allow_pickle=True) as npz:
        assert from_npz.region_sizes[2] == int(npz["scratch_fast_size"]) > 16 * 1024
    assert from_tflite.region_sizes[2] == from_npz.region_sizes[2]
    assert from_blob.cop1.data == from_npz.cop1.data


def test_json_contract(u85_tiny, capsys):
    assert main(["decode", "--json", str(u85_tiny.blob)]) == 0
    commands = json.loads(capsys.readouterr().out)
    assert commands[0] == {"offset": 0, "command": "NPU_SET_BLOCKDEP", "param": 0, "payload": None,
                           "fields": {"blockdep": 0}}
    region = next(c for c in commands if c["command"] == "NPU_SET_OFM_REGION" and c["param"] == 2)
    assert region["fields"] == {"region": 2}
    assert all(set(c) == {"offset", "command", "param", "payload", "fields"} for c in commands)
    assert commands[-1]["command"] == "NPU_OP_STOP"


def test_npu_decode_prints_velas_lines_verbatim(compiled, capsys):
    for c in compiled:
        assert main(["decode", str(c.blob)]) == 0
        ours = [line for line in capsys.readouterr().out.splitlines() if line.startswith("0x")]
        vela = [line.rstrip() for line in c.vela_log.splitlines() if line.startswith("0x")]
        assert ours == vela, c.id


@pytest.mark.parametrize("addr", [0x12_3456_7890, 0xFF_FFFF_FFF0])
def test_u85_addresses_are_40_bit(addr):
    from npu.decode import command_table, decode_stream
    table = command_table("ethos_u85_commands.toml")
    word = table.opcode["NPU_SET_IFM_BASE0"] | 0x4000 | ((addr >> 32) << 16)
    stream = np.array([word, addr & 0xFFFFFFFF, 0xFFFF0000], dtype="<u4").tobytes()
    cmds = decode_stream(stream, table)
    assert cmds[0].fields["addr"] == addr and cmds[0].payload == addr & 0xFFFFFFFF

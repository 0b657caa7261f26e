"""npu.read.tflite on Vela's real .tflite output: agreement with Vela's own generated schema
classes, every ethos-u operator decoded and run, and no crash on mutated or truncated bytes."""
from __future__ import annotations

import random

import pytest
from ethosu.vela.tflite.Model import Model as VelaModel

import npu.api
from npu.cli import main as npu_main
from npu.errors import InputError
from npu.read.model import load_models
from npu.read.tflite import read_tflite
from weaklink.builders import firmware as fixtures

U85 = ("--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
       "--memory-mode", "Dedicated_Sram_384KB")


@pytest.fixture(scope="module")
def tflites():
    return {(t, n): fixtures.vela_tflite(t, n) for t in ("u55", "u85") for n in ("tiny", "split")}


def _vela_view(data: bytes):
    """The ethos-u operators as Vela's flatbuffers classes see them (the oracle)."""
    m = VelaModel.GetRootAs(data, 0)
    sg = m.Subgraphs(0)
    out = []
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        if m.OperatorCodes(op.OpcodeIndex()).CustomCode() != b"ethos-u":
            continue
        ids = [op.Inputs(j) for j in range(op.InputsLength())] + \
              [op.Outputs(j) for j in range(op.OutputsLength())]
        tensors = [sg.Tensors(i) for i in ids]
        out.append((k, [t.Name().decode() for t in tensors],
                    [tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else () for t in tensors],
                    bytes(m.Buffers(tensors[0].Buffer()).DataAsNumpy()),
                    bytes(m.Buffers(tensors[1].Buffer()).DataAsNumpy())))
    return out


@pytest.mark.parametrize("key", [("u55", "tiny"), ("u85", "tiny"), ("u85", "split"), ("u55", "split")])
def test_reader_agrees_with_vela_classes(tflites, key):
    data = tflites[key].read_bytes()
    ours, theirs = read_tflite(data).operators, _vela_view(data)
    assert len(ours) == len(theirs) == (1 if key[1] == "tiny" else 3)
    for op, (index, names, shapes, stream, weights) in zip(ours, theirs):
        assert op.index == index
        assert [op.command_stream.name, *(t.name for t in op.entries)] == names
        assert [op.command_stream.shape, *(t.shape for t in op.entries)] == shapes
        s, w = op.command_stream, op.weights
        assert data[s.data_offset:s.data_offset + s.data_size] == stream
        assert data[w.data_offset:w.data_offset + w.data_size] == weights
        assert w.data_offset % 16 == 0            # Vela aligns buffer data for in-place use
        # Shared_Sram: Vela passes the scratch tensor again as the fast scratch entry
        fast = "scratch_fast" if key[0] == "u85" else "scratch"
        assert [t.name for t in op.entries[:3]] == ["read_only", "scratch", fast]


def test_every_operator_is_loaded_and_run(tflites):
    models = load_models(tflites[("u85", "split")])
    assert [m.operator for m in models] == [0, 1, 2]
    assert len({m.cop1.data for m in models}) == 3
    for m in models:
        assert m.region_sizes[0] > 0 and m.region_sizes[1] > 0
        result = npu.api.run(m, accelerator=U85[1], system_config=U85[3], memory_mode=U85[5])
        assert result.status == "ok" and result.cycles["total"] > 0


def test_decode_and_run_op_option(tflites, capsys):
    path = str(tflites[("u85", "split")])
    assert npu_main(["decode", path]) == 0
    text = capsys.readouterr().out
    assert [line for line in text.splitlines() if line.startswith("// ethos-u operator")] == [
        "// ethos-u operator 0", "// ethos-u operator 1", "// ethos-u operator 2"]
    assert npu_main(["decode", path, "--op", "1"]) == 0
    one = capsys.readouterr().out
    assert "ethos-u operator" not in one and one in text
    assert npu_main(["run", path, *U85]) == 0
    assert capsys.readouterr().out.count("== ethos-u operator") == 3
    assert npu_main(["decode", path, "--op", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"npu: error: {path}: --op 3: expected 0..2 (3 ethos-u operator(s))"]


def test_plain_tflite_has_no_ethos_u_operator(tflites):
    source = tflites[("u85", "tiny")].parent.parent / "tiny.tflite"
    with pytest.raises(InputError, match="no 'ethos-u' custom operator"):
        npu.api.load_model(source)


def test_mutated_and_truncated_bytes_give_a_result_or_one_input_error(tflites):
    data = tflites[("u85", "split")].read_bytes()
    rng = random.Random(10)
    errors = 0
    for n in range(400):
        b = bytearray(data[:rng.randrange(8, len(data))] if n % 4 == 0 else data)
        for _ in range(rng.randrange(1, 6)):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        try:
            model = read_tflite(bytes(b), "fuzz.tflite", 0x1000)
        except InputError as e:
            errors += 1
            assert str(e).startswith("fuzz.tflite") and "\n" not in str(e)
            continue
        for op in model.operators:
            assert 0 <= op.command_stream.data_offset <= len(b)
    assert errors > 50


def test_error_names_offset_and_expectation():
    data = bytearray(b"\x10\x00\x00\x00TFL3" + bytes(8))
    with pytest.raises(InputError) as e:
        read_tflite(bytes(data), "x.tflite", 0x100)
    assert str(e.value).startswith("x.tflite") and "(at offset 2" in str(e.value) and "expected" in str(e.value)
    with pytest.raises(InputError, match="file identifier"):
        read_tflite(b"\0" * 16, "x.tflite")

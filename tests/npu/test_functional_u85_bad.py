"""Bad Ethos-U85 weight streams are one clear line (InputError; exit 2 from the CLI, nothing
written): a truncated stream, a stream length that disagrees with the weight order, a fast-format
header with impossible fields; and mutated streams (hypothesis) never end the process or raise
anything else."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu.cli import main as npu_main
from npu.errors import InputError
from npu.functional import run_functional
from npu.functional.u85_weights import decode_fast, fast_header, fast_length
from npu.hw import accelerator
from npu.read.blob import read_blob, write_blob
from npu.read.model import load_model

from test_functional import U85_SYSTEM, placement

FAST = ("op_conv", "ethos-u85-256", "Sram_Only")                     # WEIGHT_FORMAT_FWD, raw bytes
DEFAULT_TWO_CORES = ("op_conv", "ethos-u85-512", "Dedicated_Sram_384KB")   # SWD, WEIGHT and WEIGHT1


def _model(generator, model_cache, network, acc, mode):
    vdir = generator.compile_network(network, acc, U85_SYSTEM, mode, model_cache)
    return load_model(vdir / f"{network}_vela.npz"), vdir


def _zeros(model):
    return [np.zeros(int(np.prod([d for d in io.shape if d])), dtype=np.int8) for io in model.inputs]


def _with_fields(model, command: str, **fields):
    """The model with every `command` given new field values."""
    cmds = tuple(dataclasses.replace(c, fields={**c.fields, **fields}) if c.command == command else c
                 for c in model.commands)
    return dataclasses.replace(model, commands=cmds)


def _field(model, command: str, name: str) -> int:
    return next(c.fields[name] for c in model.commands if c.command == command)


def _run(model, acc):
    return run_functional(model, accelerator(acc), placement(model), _zeros(model))


def _one_line(e: InputError) -> str:
    text = str(e)
    assert "\n" not in text and e.path
    return text


def test_the_fixtures_have_the_formats_they_are_chosen_for(generator, model_cache):
    fast, _ = _model(generator, model_cache, *FAST)
    assert _field(fast, "NPU_SET_WEIGHT_FORMAT", "weight_format") == "WEIGHT_FORMAT_FWD"
    two, _ = _model(generator, model_cache, *DEFAULT_TWO_CORES)
    assert _field(two, "NPU_SET_WEIGHT_FORMAT", "weight_format") == "WEIGHT_FORMAT_SWD"
    assert _field(two, "NPU_SET_WEIGHT1_LENGTH", "length") > 0


@pytest.mark.parametrize("shorten", [16, 0.5])
def test_a_truncated_default_stream(generator, model_cache, shorten):
    model, _ = _model(generator, model_cache, *DEFAULT_TWO_CORES)
    length = _field(model, "NPU_SET_WEIGHT1_LENGTH", "length")
    short = length - shorten if isinstance(shorten, int) else int(length * shorten) // 16 * 16
    with pytest.raises(InputError) as e:
        _run(_with_fields(model, "NPU_SET_WEIGHT1_LENGTH", length=short), DEFAULT_TWO_CORES[1])
    assert "(core 1)" in _one_line(e.value) and "not a decodable mlw weight stream" in str(e.value)


def test_a_default_stream_length_that_disagrees_with_the_order(generator, model_cache):
    """Another micro-block depth (ACC_FORMAT: 1x2 is 32 deep on U85-512, where Vela chose a
    16-deep one) is another order: the stream decodes to a count the order does not need."""
    model, _ = _model(generator, model_cache, *DEFAULT_TWO_CORES)
    assert _field(model, "NPU_SET_ACC_FORMAT", "microblock") in ("MICROBLOCK_U2X2", "MICROBLOCK_U1X4")
    other = "MICROBLOCK_U1X2"
    with pytest.raises(InputError, match=r"decodes to \d+ weights, the weight order of these registers needs \d+"):
        _run(_with_fields(model, "NPU_SET_ACC_FORMAT", microblock=other), DEFAULT_TWO_CORES[1])


@pytest.mark.parametrize("delta", [-32, 32, -16])
def test_a_fast_stream_length_that_disagrees_with_the_order(generator, model_cache, delta):
    model, _ = _model(generator, model_cache, *FAST)
    length = _field(model, "NPU_SET_WEIGHT_LENGTH", "length")
    with pytest.raises(InputError) as e:
        _run(_with_fields(model, "NPU_SET_WEIGHT_LENGTH", length=length + delta), FAST[1])
    assert f"WEIGHT_LENGTH {length + delta} disagrees with the weight order" in _one_line(e.value)


@pytest.mark.parametrize("edit,message", [
    (lambda h: h.__setitem__(0, h[0] | 3), "both raw mode and the 2-bit table"),
    (lambda h: h.__setitem__(5, h[5] | 0x10), "are reserved and not zero"),
    (lambda h: h.__setitem__(14, 1) or h.__setitem__(15, h[15] & 0xFE), "negative zero"),   # entry 0: |0|, sign
])
def test_impossible_fast_headers_exit_2_in_one_line(generator, model_cache, tmp_path, capsys, edit, message):
    """Through the CLI: the header is in the blob's weight data."""
    model, vdir = _model(generator, model_cache, *FAST)
    blob = read_blob((vdir.parent / f"{vdir.name}.bin").read_bytes())
    weights = bytearray(blob.weight_data)
    base = _field(model, "NPU_SET_WEIGHT_BASE", "addr")
    header = weights[base:base + 32]
    edit(header)
    weights[base:base + 32] = header
    bad = tmp_path / "bad.bin"
    bad.write_bytes(write_blob(dataclasses.replace(blob, weight_data=bytes(weights))))
    np.save(tmp_path / "x.npy", np.zeros((1, 16, 16, 12), dtype=np.int8))
    code = npu_main(["run", str(bad), "--accelerator", FAST[1], "--system-config", U85_SYSTEM,
                     "--memory-mode", FAST[2], "--functional", "--input", str(tmp_path / "x.npy"),
                     "--outputs", str(tmp_path / "out")])
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0] and "bad.bin" in err[0], out
    assert not (tmp_path / "out").exists() and out.out == ""


def test_fast_format_tables_and_raw_bytes():
    """A stream written from the format's facts (not by Vela) decodes: 2-bit and 4-bit tables,
    raw bytes with a zero adjust."""
    def stream(raw, small, adjust, table, width, fields):
        bits = (raw | small << 1) | ((adjust & 0xFF) << 104)
        for i, v in enumerate(table):
            bits |= ((abs(v) << 1) | (v < 0)) << (112 + 9 * i)
        for i, f in enumerate(fields):
            bits |= f << (256 + width * i)
        return bits.to_bytes(fast_length(len(fields), width), "little")

    order = np.arange(40)
    table = [0, -3, 7, 90] + [0] * 12
    idx = [i % 4 for i in range(40)]
    assert decode_fast(stream(0, 1, 0, table, 2, idx), order, "w").tolist() == [table[i] for i in idx]
    table = list(range(-8, 8))
    idx = [(i * 7) % 16 for i in range(40)]
    assert decode_fast(stream(0, 0, 0, table, 4, idx), order, "w").tolist() == [table[i] for i in idx]
    values = list(range(-200, 50, 7))                        # needs a zero adjust of 72 to fit a byte
    order = np.arange(len(values))
    adjust = -128 - min(values)
    raw = [(v + adjust) & 0xFF for v in values]
    s = stream(1, 0, adjust, [0] * 16, 8, raw)
    assert fast_header(s, "w")[:3] == (True, 8, adjust)
    assert decode_fast(s, order, "w").tolist() == values


def test_a_fast_stream_that_stops_inside_real_weights_is_one_clear_error():
    data = bytes(32) + bytes(range(1, 41))
    order = np.arange(60)
    with pytest.raises(InputError, match=r"truncated: the weights of 60 8-bit fast-format values need 92 bytes, 72 given"):
        decode_fast(bytes([1]) + data[1:], order, "CONV weights")
    order[40:] = -1                                          # only padding past the end: zeros
    assert decode_fast(bytes([1]) + data[1:], order, "w")[40:].tolist() == [0] * 20


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from([FAST, DEFAULT_TWO_CORES]),
       edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=8),
       length=st.one_of(st.none(), st.integers(0, 1 << 12)))
def test_mutated_weight_streams_are_a_result_or_one_line(generator, model_cache, case, edits, length):
    model, _ = _model(generator, model_cache, *case)
    weights = bytearray(model.weight_data)
    for pos, value in edits:
        weights[pos % len(weights)] = value
    model = dataclasses.replace(model, weight_data=bytes(weights))
    if length is not None:
        model = _with_fields(model, "NPU_SET_WEIGHT_LENGTH", length=length)
    try:
        result = _run(model, case[1])
    except InputError as e:
        _one_line(e)
        return
    assert result.outputs and result.outputs[0].dtype == np.int8


@pytest.mark.parametrize("fields,message", [
    ({"weight_format": "WEIGHT_FORMAT_FWD"}, "fast-format depthwise weights"),
    ({"weight_sparsity": "WEIGHT_SPARSITY_SPARSE_2_4"}, "2:4 sparsity on depthwise weights"),
])
def test_weight_formats_vela_never_writes_for_depthwise(generator, model_cache, fields, message):
    model, _ = _model(generator, model_cache, "op_depthwise", "ethos-u85-256", "Sram_Only")
    with pytest.raises(InputError) as e:
        _run(_with_fields(model, "NPU_SET_WEIGHT_FORMAT", **fields), "ethos-u85-256")
    assert message in _one_line(e.value)

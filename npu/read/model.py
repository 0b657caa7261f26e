"""Load a compiled network from any container Vela or ExecuTorch writes.

Accepted: Vela's raw ``.npz`` (``--output-format raw``), the Vela-compiled ``.tflite``
(the ``ethos-u`` custom operator's tensors), the ExecuTorch ``vela_bin_stream`` blob, or a
bare COP1 payload. The result is a :class:`Model`: the COP1 payload, the decoded commands,
and what the container says about each region's size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from npu.decode import Command, command_table, decode_stream
from npu.errors import InputError, read_input
from npu.hw import commands_for_product
from npu.read.blob import VelaIO, is_blob, read_blob
from npu.read.cop1 import Cop1Payload, parse_cop1
from npu.read.npz import read_npz
from npu.read.tflite import read_tflite


@dataclass(frozen=True)
class Model:
    path: str | None
    container: str                      # npz | tflite | blob | cop1
    cop1: Cop1Payload
    commands: tuple[Command, ...]
    region_sizes: dict[int, int] = field(default_factory=dict)   # region -> bytes Vela needs
    inputs: tuple[VelaIO, ...] = ()
    outputs: tuple[VelaIO, ...] = ()
    operator: int | None = None         # which ethos-u operator of a tflite
    weight_data: bytes | None = None    # region 0's bytes, when the container holds them

    @property
    def product(self) -> int | None:
        return self.cop1.product

    def regions_used(self) -> set[int]:
        return {c.fields["region"] for c in self.commands
                if c.command.endswith("_REGION") and "region" in c.fields}


def _tflite(data: bytes, path) -> list[tuple[bytes, dict[int, int]]]:
    """(command stream, region sizes) of every ethos-u operator: region i is base entry i."""
    ops = read_tflite(data, path).operators
    if not ops:
        raise InputError(path, "tflite has no 'ethos-u' custom operator: not compiled by Vela?")
    out = []
    for op in ops:
        s = op.command_stream
        out.append((data[s.data_offset:s.data_offset + s.data_size],
                    {i: size for i, size in enumerate(op.sizes) if size}))
    return out


def _decoded(container, cmd, sizes, ios, path, operator=None, weights=None) -> Model:
    cop1 = parse_cop1(cmd, path)
    if cop1.product is None:
        raise InputError(path, "COP1 payload has no OPTIMIZER_CONFIG: cannot tell the NPU", 4)
    try:
        table = command_table(commands_for_product(cop1.product))
    except KeyError:
        raise InputError(path, f"OPTIMIZER_CONFIG names unknown product {cop1.product}", 8) from None
    commands = decode_stream(cop1.stream, table, path)
    return Model(path, container, cop1, tuple(commands), sizes, *ios, operator=operator, weight_data=weights)


def load_models(source: str | Path | bytes, path: str | Path | None = None) -> list[Model]:
    """Every command stream in a container: one per ethos-u operator of a tflite, else one."""
    if isinstance(source, (str, Path)):
        path = str(source)
        data = read_input(source, what="model file")
    else:
        data = bytes(source)
    if data[4:8] == b"TFL3":
        return [_decoded("tflite", cmd, sizes, ((), ()), path, k)
                for k, (cmd, sizes) in enumerate(_tflite(data, path))]
    sizes, ios, weights = {}, ((), ()), None
    if data[:2] == b"PK":
        container, (cmd, sizes, ios, weights) = "npz", read_npz(data, path)
    elif is_blob(data):
        blob = read_blob(data, path)
        container, cmd = "blob", blob.cmd_data
        sizes, ios = {0: len(blob.weight_data), 1: blob.scratch_size}, (blob.inputs, blob.outputs)
        weights = blob.weight_data
    elif data[:4] == b"COP1":
        container, cmd = "cop1", data
    else:
        raise InputError(path, "not a Vela npz, Vela tflite, vela_bin_stream blob or COP1 payload", 0)
    return [_decoded(container, cmd, sizes, ios, path, weights=weights)]


def load_model(source: str | Path | bytes, path: str | Path | None = None, op: int = 0) -> Model:
    """Load a compiled network from a path or from bytes; bad input raises InputError. For a
    tflite, `op` picks the ethos-u operator (0-based, in model order)."""
    models = load_models(source, path)
    if not 0 <= op < len(models):
        raise InputError(models[0].path, f"--op {op}: expected 0..{len(models) - 1} "
                         f"({len(models)} ethos-u operator(s))")
    return models[op]

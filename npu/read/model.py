"""Load a compiled network from any container Vela or ExecuTorch writes.

Accepted: Vela's raw ``.npz`` (``--output-format raw``), the Vela-compiled ``.tflite``
(the ``ethos-u`` custom operator's tensors), the ExecuTorch ``vela_bin_stream`` blob, or a
bare COP1 payload. The result is a :class:`Model`: the COP1 payload, the decoded commands,
and what the container says about each region's size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from npu.decode import Command, command_table, decode_stream
from npu.errors import InputError, read_input, require
from npu.hw import commands_for_product
from npu.read.blob import VelaIO, is_blob, read_blob
from npu.read.cop1 import Cop1Payload, parse_cop1
from npu.read.npz import read_npz



@dataclass(frozen=True)
class Model:
    path: str | None
    container: str                      # npz | tflite | blob | cop1
    cop1: Cop1Payload
    commands: tuple[Command, ...]
    region_sizes: dict[int, int] = field(default_factory=dict)   # region -> bytes Vela needs
    inputs: tuple[VelaIO, ...] = ()
    outputs: tuple[VelaIO, ...] = ()

    @property
    def product(self) -> int | None:
        return self.cop1.product

    def regions_used(self) -> set[int]:
        return {c.fields["region"] for c in self.commands
                if c.command.endswith("_REGION") and "region" in c.fields}


def _tflite(data: bytes, path) -> tuple[bytes, dict[int, int]]:
    TflModel = require("ethosu.vela.tflite.Model", "reading a .tflite", "vela", "ethos-u-vela").Model
    try:
        m = TflModel.GetRootAs(data, 0)
        sg = m.Subgraphs(0)
        for k in range(sg.OperatorsLength()):
            op = sg.Operators(k)
            code = m.OperatorCodes(op.OpcodeIndex())
            if (code.CustomCode() or b"") != b"ethos-u":
                continue
            tensors = [sg.Tensors(op.Inputs(j)) for j in range(op.InputsLength())]
            raw = lambda t: m.Buffers(t.Buffer()).DataAsNumpy()  # noqa: E731
            cmd = bytes(raw(tensors[0]))
            sizes = {0: int(np.size(raw(tensors[1]))) if tensors[1].Buffer() else 0,
                     1: int(np.prod(tensors[2].ShapeAsNumpy()))}
            if len(tensors) > 3 and tensors[3].Name() == b"scratch_fast":
                sizes[2] = int(np.prod(tensors[3].ShapeAsNumpy()))
            return cmd, sizes
    except InputError:
        raise
    except Exception as e:      # a corrupt flatbuffer raises anything from struct to IndexError
        raise InputError(path, f"corrupt tflite flatbuffer: {type(e).__name__}: {e}") from None
    raise InputError(path, "tflite has no 'ethos-u' custom operator: not compiled by Vela?")


def load_model(source: str | Path | bytes, path: str | Path | None = None) -> Model:
    """Load a compiled network from a path or from bytes; bad input raises InputError."""
    if isinstance(source, (str, Path)):
        path = str(source)
        data = read_input(source, what="model file")
    else:
        data = bytes(source)
    sizes, ios = {}, ((), ())
    if data[:2] == b"PK":
        container, (cmd, sizes) = "npz", read_npz(data, path)
    elif data[4:8] == b"TFL3":
        container, (cmd, sizes) = "tflite", _tflite(data, path)
    elif is_blob(data):
        blob = read_blob(data, path)
        container, cmd = "blob", blob.cmd_data
        sizes, ios = {0: len(blob.weight_data), 1: blob.scratch_size}, (blob.inputs, blob.outputs)
    elif data[:4] == b"COP1":
        container, cmd = "cop1", data
    else:
        raise InputError(path, "not a Vela npz, Vela tflite, vela_bin_stream blob or COP1 payload", 0)
    cop1 = parse_cop1(cmd, path)
    if cop1.product is None:
        raise InputError(path, "COP1 payload has no OPTIMIZER_CONFIG: cannot tell the NPU", 4)
    try:
        table = command_table(commands_for_product(cop1.product))
    except KeyError:
        raise InputError(path, f"OPTIMIZER_CONFIG names unknown product {cop1.product}", 8) from None
    commands = decode_stream(cop1.stream, table, path)
    return Model(path, container, cop1, tuple(commands), sizes, *ios)

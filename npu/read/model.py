"""Load a compiled network from any container Vela or ExecuTorch writes.

Accepted: Vela's raw ``.npz`` (``--output-format raw``), the Vela-compiled ``.tflite``
(the ``ethos-u`` custom operator's tensors), the ExecuTorch ``vela_bin_stream`` blob, or a
bare COP1 payload. The result is a :class:`Model`: the COP1 payload, the decoded commands,
and what the container says about each region's size.

A ``.tflite`` holds what a functional run needs too. Vela's operator inputs are the command
stream, the weights ("read_only", a buffer of the flatbuffer: region 0), the scratch tensor
(TFLM's arena, region 1), the fast scratch (region 2), then the input feature maps; its
outputs are the output feature maps. The command stream addresses every feature map through
region 1, at the offset Vela gave it inside the scratch area; the offline memory plan (the
``OfflineMemoryAllocation`` metadata TFLM honours) holds those offsets: a feature map sits at
its planned offset minus the scratch tensor's. Without the plan there is no placement, and
``Model.missing`` says so.
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
    missing: str = ""                   # what a functional run needs that the container lacks

    @property
    def product(self) -> int | None:
        return self.cop1.product

    def regions_used(self) -> set[int]:
        return {c.fields["region"] for c in self.commands
                if c.command.endswith("_REGION") and "region" in c.fields}


SCRATCH_ENTRY, FIRST_FEATURE_MAP = 1, 3     # Vela's entries: weights, scratch, fast scratch, IFMs


def _tflite(data: bytes, path) -> list[tuple[bytes, dict[int, int], tuple, bytes | None, str]]:
    """(command stream, region sizes, (inputs, outputs), weights, what is missing) of every
    ethos-u operator: region i is base entry i."""
    model = read_tflite(data, path)
    if not model.operators:
        raise InputError(path, "tflite has no 'ethos-u' custom operator: not compiled by Vela?")
    out = []
    for op in model.operators:
        s = op.command_stream
        weights = op.weights
        blob = (data[weights.data_offset:weights.data_offset + weights.data_size]
                if weights is not None and weights.data_offset is not None else None)
        ios, missing = _feature_maps(op, model.offline_plan)
        if blob is None:
            missing = "the weights: the operator's first entry holds no buffer data"
        out.append((data[s.data_offset:s.data_offset + s.data_size],
                    {i: size for i, size in enumerate(op.sizes) if size}, ios, blob, missing))
    return out


def _feature_maps(op, plan: str) -> tuple[tuple, str]:
    """The input and output feature maps as region-1 placements, from the offline plan."""
    if op.num_inputs <= FIRST_FEATURE_MAP or len(op.entries) <= op.num_inputs:
        return ((), ()), (f"Vela's operator layout (command stream, weights, scratch, fast scratch, "
                          f"inputs; outputs): operator {op.number} has {op.num_inputs} base "
                          f"entries from its inputs and {len(op.entries) - op.num_inputs} from its outputs")
    if plan != "present":
        why = "absent" if plan == "absent" else plan
        return ((), ()), (f"the feature maps' offsets in the arena: the OfflineMemoryAllocation "
                          f"metadata is {why}, so TFLM's planner places them at run time")
    scratch = op.entries[SCRATCH_ENTRY]
    ios = ([], [])
    for k, t in enumerate(op.entries[FIRST_FEATURE_MAP:], FIRST_FEATURE_MAP):
        where = ios[0] if k < op.num_inputs else ios[1]
        if t.offline_offset is None or t.offline_offset < 0 or scratch.offline_offset is None \
                or scratch.offline_offset < 0 or t.element_size is None:
            return ((), ()), (f"the offset of tensor `{t.name}` in the arena: the offline plan "
                              f"gives {t.offline_offset} for it and {scratch.offline_offset} for "
                              f"the scratch tensor `{scratch.name}` (-1: placed at run time)")
        where.append(VelaIO(shape=t.shape, elem_size=t.element_size,
                            offset=t.offline_offset - scratch.offline_offset, region=SCRATCH_ENTRY))
    return (tuple(ios[0]), tuple(ios[1])), ""


def _decoded(container, cmd, sizes, ios, path, operator=None, weights=None, missing="") -> Model:
    cop1 = parse_cop1(cmd, path)
    if cop1.product is None:
        raise InputError(path, "COP1 payload has no OPTIMIZER_CONFIG: cannot tell the NPU", 4)
    try:
        table = command_table(commands_for_product(cop1.product))
    except KeyError:
        raise InputError(path, f"OPTIMIZER_CONFIG names unknown product {cop1.product}", 8) from None
    commands = decode_stream(cop1.stream, table, path)
    return Model(path, container, cop1, tuple(commands), sizes, *ios, operator=operator,
                 weight_data=weights, missing=missing)


def load_models(source: str | Path | bytes, path: str | Path | None = None) -> list[Model]:
    """Every command stream in a container: one per ethos-u operator of a tflite, else one."""
    if isinstance(source, (str, Path)):
        path = str(source)
        data = read_input(source, what="model file")
    else:
        data = bytes(source)
    if data[4:8] == b"TFL3":
        return [_decoded("tflite", cmd, sizes, ios, path, k, weights, missing)
                for k, (cmd, sizes, ios, weights, missing) in enumerate(_tflite(data, path))]
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

"""A bounds-checked reader for Vela's ``.tflite`` output: the ``ethos-u`` operators only.

Safe on arbitrary bytes: the image scanner runs it on every ``TFL3`` hit in a firmware section.
Every offset and vector length is checked against the buffer before it is followed, and a
failure is one InputError naming the file, the offset and what was expected. The walk has a
fixed depth (model -> subgraphs -> operators -> tensors -> buffers) and reads only what the
``ethos-u`` operators reference, so a crafted file cannot make it loop or allocate much.

Flatbuffer facts: the root table's uoffset is at byte 0 and the file identifier at 4..8. A
table starts with an soffset to its vtable (vtable = table - soffset); the vtable is uint16
vtable size, uint16 table size, then one uint16 field offset per field (0 = absent). A
reference field holds a uoffset relative to the field's own position. A vector is a uint32
count followed by its elements; a string is a vector of bytes.

TFLite schema field slots (schema.fbs, by declaration order):
Model: 1 operator_codes, 2 subgraphs, 4 buffers, 6 metadata. OperatorCode: 1 custom_code.
SubGraph: 0 tensors, 3 operators. Tensor: 0 shape, 1 type, 2 buffer, 3 name, 5 is_variable.
Operator: 0 opcode_index, 1 inputs, 2 outputs, 5 custom_options.
Buffer: 0 data, 1 offset, 2 size (offset/size: data stored after the flatbuffer, >2 GB models).
Metadata: 0 name, 1 buffer.

The offline memory plan: Vela writes a metadata entry named ``OfflineMemoryAllocation`` whose
buffer is int32 [version, subgraph count, tensor count, one offset per tensor of every subgraph
in order]. TFLM's planner places a tensor with an offset >= 0 at that offset from the start of
its arena (aligned up to 16 bytes); -1 means planned online, at run time. TFLM refuses the model
when the count differs from the model's tensor count.

TFLM's ``ethos-u`` kernel: the custom options are a flexbuffer whose root, as int8, is 1
(CO_TYPE_ETHOSU). Input 0 is the command stream. Inputs 1… then the outputs are the
base-address entries, in order, each sized as the product of its tensor's dims, at most 8.
Vela's inputs are weights ("flash"), scratch, fast scratch, then the input feature maps.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from npu.errors import InputError

IDENTIFIER = b"TFL3"
CUSTOM_CODE = b"ethos-u"
CO_TYPE_ETHOSU = 1
MAX_BASE_ENTRIES = 8                 # the kernel passes at most 8 base addresses
MAX_DIMS = 16

# field slots, from the TFLite schema
MODEL_OPCODES, MODEL_SUBGRAPHS, MODEL_BUFFERS, MODEL_METADATA = 1, 2, 4, 6
OPCODE_CUSTOM = 1
SUBGRAPH_TENSORS, SUBGRAPH_OPERATORS = 0, 3
TENSOR_SHAPE, TENSOR_TYPE, TENSOR_BUFFER, TENSOR_NAME, TENSOR_IS_VARIABLE = 0, 1, 2, 3, 5
OP_OPCODE, OP_INPUTS, OP_OUTPUTS, OP_CUSTOM_OPTIONS = 0, 1, 2, 5
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 0, 1, 2
METADATA_NAME, METADATA_BUFFER = 0, 1
OFFLINE_PLAN = b"OfflineMemoryAllocation"
ONLINE = -1                          # an offline-plan offset TFLM's planner decides at run time
# Bytes per element of the schema's TensorType values (INT4 and STRING have no fixed size).
TYPE_SIZE = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8,
             15: 4, 16: 2, 18: 2}

# flexbuffer type codes (packed type >> 2) whose value is a plain integer
FBT_INT, FBT_UINT = 1, 2


@dataclass(frozen=True)
class TflTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    buffer: int
    data_offset: int | None     # where the buffer's bytes start in the flatbuffer (None: empty)
    data_size: int
    type: int = 9               # TensorType (9: INT8)
    offline_offset: int | None = None   # the offline plan's offset (-1: online; None: no plan)

    @property
    def elements(self) -> int:
        return math.prod(max(d, 0) for d in self.shape)

    @property
    def element_size(self) -> int | None:
        return TYPE_SIZE.get(self.type)

    @property
    def nbytes(self) -> int | None:
        """What TFLM allocates for it: elements times the type's size (None: no fixed size)."""
        size = self.element_size
        return None if size is None else self.elements * size


@dataclass(frozen=True)
class EthosuOperator:
    """One ``ethos-u`` custom operator: its command stream and its base-address entries."""

    number: int                     # n-th ethos-u operator in the model (0-based)
    subgraph: int
    index: int                      # operator index inside its subgraph
    command_stream: TflTensor
    entries: tuple[TflTensor, ...]  # base_addr[i] <- entries[i] (inputs 1…, then outputs)
    num_inputs: int = 0             # how many entries come from the inputs (the rest: outputs)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(t.elements for t in self.entries)

    @property
    def weights(self) -> TflTensor | None:
        return self.entries[0] if self.entries else None


@dataclass(frozen=True)
class TfliteModel:
    operators: tuple[EthosuOperator, ...]
    extent: int                     # bytes from the start that the read objects reach
    offline_plan: str = "absent"    # "present", "absent", or why TFLM would refuse it


def looks_like_tflite(data: bytes, at: int = 0) -> bool:
    return data[at + 4:at + 8] == IDENTIFIER


class _Reader:
    def __init__(self, data: bytes, path, origin: int):
        self.data, self.path, self.origin = data, path, origin
        self.extent = 8

    def fail(self, offset: int, expected: str):
        raise InputError(self.path, f"tflite flatbuffer: expected {expected}", self.origin + offset)

    def _need(self, offset: int, size: int, what: str) -> None:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            self.fail(offset, f"{what} ({size} bytes) inside the {len(self.data)}-byte buffer")
        self.extent = max(self.extent, offset + size)

    def read(self, fmt: str, offset: int, what: str) -> int:
        """One little-endian value of struct format `fmt` (B, H, I, i, Q), checked to lie in the buffer."""
        self._need(offset, struct.calcsize("<" + fmt), what)
        return struct.unpack_from("<" + fmt, self.data, offset)[0]

    def table(self, offset: int, what: str) -> "_Table":
        vtable = offset - self.read("i", offset, f"{what} table")
        size = self.read("H", vtable, f"{what} vtable size")
        if size < 4 or size % 2:
            self.fail(vtable, f"{what} vtable size >= 4 and even, got {size}")
        self._need(vtable, size, f"{what} vtable")
        self._need(offset, self.read("H", vtable + 2, f"{what} table size"), f"{what} table")
        return _Table(self, offset, vtable, size, what)

    def vector(self, offset: int, elem: int, what: str) -> tuple[int, int]:
        """(start of the elements, count), the whole vector checked to lie in the buffer."""
        count = self.read("I", offset, f"{what} vector length")
        if count * elem > len(self.data) - offset - 4:
            self.fail(offset, f"{what} vector of {count} x {elem} bytes inside the buffer")
        self._need(offset + 4, count * elem, f"{what} vector")
        return offset + 4, count


class _Table:
    def __init__(self, r: _Reader, offset: int, vtable: int, vsize: int, what: str):
        self.r, self.offset, self.vtable, self.vsize, self.what = r, offset, vtable, vsize, what

    def field(self, slot: int) -> int | None:
        at = 4 + 2 * slot
        if at + 2 > self.vsize:
            return None
        rel = self.r.read("H", self.vtable + at, f"{self.what} field {slot}")
        return self.offset + rel if rel else None

    def scalar(self, slot, fmt: str, default=0):
        at = self.field(slot)
        if at is None:
            return default
        return self.r.read(fmt, at, f"{self.what} field {slot}")

    def ref(self, slot: int) -> int | None:
        at = self.field(slot)
        return None if at is None else at + self.r.read("I", at, f"{self.what} field {slot} offset")

    def vector(self, slot: int, elem: int) -> tuple[int, int]:
        at = self.ref(slot)
        return (0, 0) if at is None else self.r.vector(at, elem, f"{self.what} field {slot}")

    def ints(self, slot: int, limit: int | None = None) -> tuple[int, ...]:
        start, count = self.vector(slot, 4)
        if limit is not None and count > limit:
            self.r.fail(start - 4, f"{self.what} field {slot}: at most {limit} entries, got {count}")
        return struct.unpack_from(f"<{count}i", self.r.data, start)

    def string(self, slot: int) -> bytes:
        start, count = self.vector(slot, 1)
        return bytes(self.r.data[start:start + count])

    def element(self, slot: int, index: int, what: str) -> _Table:
        start, count = self.vector(slot, 4)
        if not 0 <= index < count:
            self.r.fail(start - 4, f"{what} index {index} below the count {count}")
        at = start + 4 * index
        return self.r.table(at + self.r.read("I", at, f"{what} offset"), what)


def _flex_root_int(data: bytes) -> int | None:
    """A flexbuffer's root as an integer: the last byte is the root's width, the one before
    it the packed type (type << 2 | bit width)."""
    if len(data) < 3:
        return None
    width, packed = data[-1], data[-2]
    if width not in (1, 2, 4, 8) or len(data) < 2 + width or packed >> 2 not in (FBT_INT, FBT_UINT):
        return None
    return int.from_bytes(data[-2 - width:-2], "little", signed=packed >> 2 == FBT_INT)


def _offline_plan(r: _Reader, model: _Table, tensors: int) -> tuple[tuple[int, ...] | None, str]:
    """The offsets of Vela's OfflineMemoryAllocation metadata, one per tensor of every subgraph,
    and its state: "present", "absent", or why TFLM would refuse it."""
    _, count = model.vector(MODEL_METADATA, 4)
    for k in range(count):
        meta = model.element(MODEL_METADATA, k, f"metadata {k}")
        if meta.string(METADATA_NAME) != OFFLINE_PLAN:
            continue
        index = meta.scalar(METADATA_BUFFER, "I")
        start, size = model.element(MODEL_BUFFERS, index, f"buffer {index}").vector(BUFFER_DATA, 1)
        if size < 12 or size % 4:
            return None, f"its {size}-byte buffer is not int32 [version, subgraphs, count, offsets...]"
        words = struct.unpack_from(f"<{size // 4}i", r.data, start)
        if words[2] != tensors or len(words) - 3 < tensors:
            return None, (f"it has {words[2]} offsets for {tensors} tensors: TFLM refuses the model "
                          f"(\"Nbr of offline buffer offsets ... not equal nbr tensors\")")
        return tuple(words[3:3 + tensors]), "present"
    return None, "absent"


def _tensor(r: _Reader, model: _Table, subgraph: _Table, index: int, plan=None) -> TflTensor:
    t = subgraph.element(SUBGRAPH_TENSORS, index, f"tensor {index}")
    shape = t.ints(TENSOR_SHAPE, MAX_DIMS)
    buffer = t.scalar(TENSOR_BUFFER, "I")
    offset, size = None, 0
    if buffer:
        b = model.element(MODEL_BUFFERS, buffer, f"buffer {buffer}")
        start, count = b.vector(BUFFER_DATA, 1)
        if count:
            offset, size = start, count
        elif b.scalar(BUFFER_OFFSET, "Q") > 1:   # data after the flatbuffer (offset 1 = none)
            offset, size = b.scalar(BUFFER_OFFSET, "Q"), b.scalar(BUFFER_SIZE, "Q")
            r._need(offset, size, f"buffer {buffer} data")
    name = t.string(TENSOR_NAME).decode("utf-8", "replace")
    return TflTensor(index, name, tuple(shape), buffer, offset, size, t.scalar(TENSOR_TYPE, "B"),
                     plan[index] if plan is not None else None)


def read_tflite(data: bytes, path=None, origin: int = 0) -> TfliteModel:
    """Every ``ethos-u`` operator of a Vela-compiled flatbuffer. `origin` is added to the
    offsets in error messages (the flatbuffer's position inside a larger file)."""
    r = _Reader(bytes(data), path, origin)
    if not looks_like_tflite(r.data):
        r.fail(4, "the file identifier 'TFL3'")
    root = r.read("I", 0, "root table offset")
    if root + 4 > len(r.data):
        r.fail(0, f"a root table offset inside the {len(r.data)}-byte buffer, got {root:#x}")
    model = r.table(root, "Model")
    _, ncodes = model.vector(MODEL_OPCODES, 4)
    custom = []
    for k in range(ncodes):
        code = model.element(MODEL_OPCODES, k, f"operator code {k}")
        custom.append(code.string(OPCODE_CUSTOM) == CUSTOM_CODE)
    ops = []
    _, nsub = model.vector(MODEL_SUBGRAPHS, 4)
    subgraphs = [model.element(MODEL_SUBGRAPHS, s, f"subgraph {s}") for s in range(nsub)]
    counts = [sg.vector(SUBGRAPH_TENSORS, 4)[1] for sg in subgraphs]
    try:
        offsets, plan_state = _offline_plan(r, model, sum(counts))
    except InputError as e:              # TFLM would not read it either: no plan, and why
        offsets, plan_state = None, f"unreadable: {e.what}"
    for s, sg in enumerate(subgraphs):
        first = sum(counts[:s])         # the plan lists every subgraph's tensors in order
        plan = offsets[first:first + counts[s]] if offsets is not None else None
        _, nops = sg.vector(SUBGRAPH_OPERATORS, 4)
        for k in range(nops):
            op = sg.element(SUBGRAPH_OPERATORS, k, f"operator {k}")
            opcode = op.scalar(OP_OPCODE, "I")
            if opcode >= ncodes:
                r.fail(op.offset, f"operator {k}'s opcode index below {ncodes}, got {opcode}")
            if not custom[opcode]:
                continue
            start, count = op.vector(OP_CUSTOM_OPTIONS, 1)
            if _flex_root_int(r.data[start:start + count]) != CO_TYPE_ETHOSU:
                r.fail(start, f"operator {k}: ethos-u custom options with root int8 {CO_TYPE_ETHOSU}")
            inputs, outputs = op.ints(OP_INPUTS), op.ints(OP_OUTPUTS)
            if not inputs:
                r.fail(op.offset, f"operator {k}: an ethos-u operator with a command-stream input")
            from_inputs = [i for i in inputs[1:] if i >= 0]
            indices = [*from_inputs, *(i for i in outputs if i >= 0)][:MAX_BASE_ENTRIES]
            stream = _tensor(r, model, sg, inputs[0])
            if stream.data_offset is None:
                r.fail(op.offset, f"operator {k}: a command-stream tensor with data")
            entries = tuple(_tensor(r, model, sg, i, plan) for i in indices)
            ops.append(EthosuOperator(len(ops), s, k, stream, entries,
                                      min(len(from_inputs), MAX_BASE_ENTRIES)))
    return TfliteModel(tuple(ops), r.extent, plan_state)

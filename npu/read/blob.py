"""The ExecuTorch ``vela_bin_stream`` blob (docs/npu.md §4), read and written.

A blob is a sequence of blocks. Each block is a 16-byte NUL-padded name and a 16-byte head
(a little-endian uint32 length, then 12 bytes), then the data zero-padded to a multiple of 16.
The order is fixed by ExecuTorch's ``backends/arm/arm_vela.py``: vela_bin_stream, cmd_data,
weight_data, scratch_size, inputs, outputs, vela_end_stream; its reader
``backends/arm/runtime/VelaBinStream.cpp`` rejects unknown block names and wants
``vela_end_stream`` last.

The layouts differ by ExecuTorch version (pytorch/executorch history):
- the inputs/outputs blocks are ``int32 count`` then one descriptor per tensor,
  ``shape[N], elem_size, offset, region`` (int32 each). Up to v0.7 N is 4 (the shape padded
  with zeros, ``VelaIO::shape[4]``); from v1.0 (commit 6789f75457, "Update to vela 4.4.0") N
  is 6, Vela's raw 6-D shape as it is (``shapeDim = 6``). The blob does not say which: the
  block's unpadded length does, as ``4 + count * 28`` or ``4 + count * 36`` bytes; a length
  that fits neither is refused.
- byte 0 of the 12 after the length was padding until commit 943554a57a ("Store external
  Vela blocks in named data"); there it became a flag, 1 meaning that the block's data is a
  64-character key of a payload stored in the program's named data, outside the blob.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from npu.errors import InputError

HEADER = "vela_bin_stream"
FOOTER = "vela_end_stream"
BLOCK_ORDER = (HEADER, "cmd_data", "weight_data", "scratch_size", "inputs", "outputs", FOOTER)
BLOCK_HEAD = struct.Struct("<16si12x")   # name[16], size, 12 bytes (flags, reserved)
FLAGS_AT = 20                            # the byte after the size
EXTERNAL = 1                             # the block's data is a key into the named data
EXTERNAL_KEY_BYTES = 64                  # a sha256 digest in hex
# Descriptor layouts by the number of shape entries: the older 4 and the 6 of ExecuTorch >= 1.0.
IO_ENTRY = {4: struct.Struct("<7i"), 6: struct.Struct("<9i")}
LAYOUT_NAMES = {4: "4-entry shapes (ExecuTorch < 1.0)", 6: "6-entry shapes (ExecuTorch >= 1.0)"}


@dataclass(frozen=True)
class VelaIO:
    shape: tuple[int, ...]       # 4 or 6 entries, as the blob holds them
    elem_size: int
    offset: int
    region: int


@dataclass(frozen=True)
class VelaBlob:
    cmd_data: bytes
    weight_data: bytes
    scratch_size: int
    inputs: tuple[VelaIO, ...] = field(default_factory=tuple)
    outputs: tuple[VelaIO, ...] = field(default_factory=tuple)
    shape_dims: int = 4          # the descriptor layout (IO_ENTRY); 0 when no descriptor says


def _pad16(n: int) -> int:
    return (n + 15) & ~15


def _block(name: str, data: bytes) -> bytes:
    head = BLOCK_HEAD.pack(name.encode()[:15], len(data))
    return head + data + b"\0" * (_pad16(len(data)) - len(data))


def _pack_io(ios, dims: int) -> bytes:
    out = struct.pack("<i", len(ios))
    for io in ios:
        if len(io.shape) != dims:
            raise ValueError(f"a {len(io.shape)}-entry shape in a blob of {dims}-entry shapes")
        out += IO_ENTRY[dims].pack(*io.shape, io.elem_size, io.offset, io.region)
    return out


def fit_shape(shape: list[int], dims: int) -> tuple[int, ...]:
    """A Vela shape in `dims` entries: the older writer padded a shorter one with zeros and
    Vela's leading 1s are dropped from a longer one; the newer keeps Vela's 6 entries."""
    return tuple(shape[-dims:] if len(shape) > dims else shape + [0] * (dims - len(shape)))


def _io_from_npz(npz, prefix: str, dims: int) -> tuple[VelaIO, ...]:
    return tuple(VelaIO(fit_shape([int(d) for d in shape], dims), int(npz[prefix + "_elem_size"][i]),
                        int(npz[prefix + "_offset"][i]), int(npz[prefix + "_region"][i]))
                 for i, shape in enumerate(npz[prefix + "_shape"]))


def blob_from_npz(npz, shape_dims: int = 4) -> VelaBlob:
    """Build the blob contents from a loaded Vela raw npz (a mapping of arrays), with the
    descriptor layout of `shape_dims` (4: ExecuTorch < 1.0, 6: >= 1.0)."""
    if shape_dims not in IO_ENTRY:
        raise ValueError(f"shape_dims must be one of {sorted(IO_ENTRY)}")
    # the whole bytes, as ExecuTorch's arm_vela.py copies them (`.tobytes()`): a 0-d bytes
    # array's item() drops its trailing NULs, often the last zeros of the weights
    return VelaBlob(cmd_data=npz["cmd_data"].tobytes(),
                    weight_data=npz["weight_data"].tobytes(),
                    scratch_size=int(npz["scratch_shape"][0]),
                    inputs=_io_from_npz(npz, "input", shape_dims),
                    outputs=_io_from_npz(npz, "output", shape_dims), shape_dims=shape_dims)


def write_blob(blob: VelaBlob) -> bytes:
    """Serialise as ``arm_vela.py::vela_compile`` does, in the blob's descriptor layout."""
    dims = blob.shape_dims or 4
    return b"".join([
        _block(HEADER, b""),
        _block("cmd_data", blob.cmd_data),
        _block("weight_data", blob.weight_data),
        _block("scratch_size", struct.pack("<I", blob.scratch_size)),
        _block("inputs", _pack_io(blob.inputs, dims)),
        _block("outputs", _pack_io(blob.outputs, dims)),
        _block(FOOTER, b""),
    ])


def is_blob(data: bytes) -> bool:
    return data[:16].rstrip(b"\0") == HEADER.encode()


def _io_layout(path, name: str, data: bytes, base: int) -> tuple[int, int]:
    """(count, shape entries) of an inputs/outputs block, from its count and length; 0
    entries when the block lists no tensor (both layouts fit)."""
    if len(data) < 4:
        raise InputError(path, f"{name} block of {len(data)} bytes is shorter than its count", base)
    (count,) = struct.unpack_from("<i", data)
    if count == 0 and len(data) == 4:
        return 0, 0
    fits = [d for d, s in IO_ENTRY.items() if count >= 0 and len(data) == 4 + count * s.size]
    if not fits:
        sizes = ", ".join(f"{4 + max(count, 0) * s.size} for {LAYOUT_NAMES[d]}"
                          for d, s in IO_ENTRY.items())
        raise InputError(path, f"{name} block holds {len(data)} bytes for {count} tensor "
                         f"descriptor(s), which fits no known layout (expected {sizes})", base)
    return count, fits[0]


def _read_io(data: bytes, count: int, dims: int) -> tuple[VelaIO, ...]:
    if not count:
        return ()
    entry = IO_ENTRY[dims]
    return tuple(VelaIO(tuple(v[:dims]), v[dims], v[dims + 1], v[dims + 2])
                 for v in entry.iter_unpack(data[4:4 + count * entry.size]))


def read_blob(data: bytes, path: str | Path | None = None) -> VelaBlob:
    """Parse a blob with the checks of ``vela_bin_validate``/``vela_bin_read``, in whichever
    descriptor layout it was written (see the module docstring)."""
    blocks: dict[str, tuple[int, bytes]] = {}
    pos, last = 0, None
    while pos < len(data):
        if pos + BLOCK_HEAD.size > len(data):
            raise InputError(path, "truncated vela_bin_stream block header", pos)
        raw_name, size = BLOCK_HEAD.unpack_from(data, pos)
        name = raw_name.split(b"\0", 1)[0].decode("ascii", "replace")
        if pos == 0 and name != HEADER:
            raise InputError(path, f"not a vela_bin_stream blob (first block {name!r})", 0)
        if name not in BLOCK_ORDER:
            raise InputError(path, f"unknown vela_bin_stream block {name!r}", pos)
        start = pos + BLOCK_HEAD.size
        if size < 0 or start + size > len(data):
            raise InputError(path, f"block {name!r} of {size} bytes runs past the end", pos)
        flags = data[pos + FLAGS_AT]
        if flags == EXTERNAL:
            key = bytes(data[start:start + size]).decode("ascii", "replace")
            raise InputError(path, f"block {name!r} is not in the blob: its data is stored in "
                             f"the program's named data under key {key!r} (give the model "
                             "with --model)", pos)
        if flags:
            raise InputError(path, f"block {name!r} has flags {flags:#x}; known: 0 (data in "
                             f"place) and {EXTERNAL} (data in the program's named data)",
                             pos + FLAGS_AT)
        blocks[name] = (start, data[start:start + size])
        pos, last = start + _pad16(size), name
        if name == FOOTER:
            break
    if last != FOOTER:
        raise InputError(path, "vela_bin_stream has no vela_end_stream footer", pos)
    for name in BLOCK_ORDER[1:-1]:
        if name not in blocks:
            raise InputError(path, f"vela_bin_stream lacks the {name!r} block", None)
    start, scratch = blocks["scratch_size"]
    if len(scratch) < 4:
        raise InputError(path, "scratch_size block shorter than 4 bytes", start)
    (n_in, dims_in), (n_out, dims_out) = (_io_layout(path, k, blocks[k][1], blocks[k][0])
                                          for k in ("inputs", "outputs"))
    if dims_in and dims_out and dims_in != dims_out:
        raise InputError(path, f"inputs use {LAYOUT_NAMES[dims_in]} but outputs "
                         f"{LAYOUT_NAMES[dims_out]}: not one writer's blob", blocks["outputs"][0])
    return VelaBlob(cmd_data=blocks["cmd_data"][1], weight_data=blocks["weight_data"][1],
                    scratch_size=struct.unpack_from("<I", scratch)[0],
                    inputs=_read_io(blocks["inputs"][1], n_in, dims_in or dims_out),
                    outputs=_read_io(blocks["outputs"][1], n_out, dims_out or dims_in),
                    shape_dims=dims_in or dims_out)

"""The ExecuTorch ``vela_bin_stream`` blob (research brief §5e), read and written.

A blob is a sequence of blocks. Each block is a 16-byte NUL-padded name, a little-endian
int32 length followed by 12 zero bytes, then the data zero-padded to a multiple of 16.
The order is fixed by ``arm_vela.py``: vela_bin_stream, cmd_data, weight_data,
scratch_size, inputs, outputs, vela_end_stream. ``VelaBinStream.cpp`` rejects unknown
block names and wants ``vela_end_stream`` last.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from npu.errors import InputError

HEADER = "vela_bin_stream"
FOOTER = "vela_end_stream"
BLOCK_ORDER = (HEADER, "cmd_data", "weight_data", "scratch_size", "inputs", "outputs", FOOTER)
BLOCK_HEAD = struct.Struct("<16si12x")   # name[16], size, _pad[12]
IO_ENTRY = struct.Struct("<7i")          # shape[4], elem_size, offset, region


@dataclass(frozen=True)
class VelaIO:
    shape: tuple[int, int, int, int]
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


def _pad16(n: int) -> int:
    return (n + 15) & ~15


def _block(name: str, data: bytes) -> bytes:
    head = BLOCK_HEAD.pack(name.encode()[:15], len(data))
    return head + data + b"\0" * (_pad16(len(data)) - len(data))


def _pack_io(ios) -> bytes:
    out = struct.pack("<i", len(ios))
    for io in ios:
        out += IO_ENTRY.pack(*io.shape, io.elem_size, io.offset, io.region)
    return out


def _io_from_npz(npz, prefix: str) -> tuple[VelaIO, ...]:
    ios = []
    for i, shape in enumerate(npz[prefix + "_shape"]):
        dims = [int(d) for d in shape]
        # Vela's raw output gives 6-D shapes with leading 1s; the blob has room for 4.
        dims = (dims[-4:] if len(dims) > 4 else dims + [0] * (4 - len(dims)))
        ios.append(VelaIO(tuple(dims), int(npz[prefix + "_elem_size"][i]),
                          int(npz[prefix + "_offset"][i]), int(npz[prefix + "_region"][i])))
    return tuple(ios)


def blob_from_npz(npz) -> VelaBlob:
    """Build the blob contents from a loaded Vela raw npz (a mapping of arrays)."""
    return VelaBlob(cmd_data=bytes(npz["cmd_data"].item()),
                    weight_data=bytes(npz["weight_data"].item()),
                    scratch_size=int(npz["scratch_shape"][0]),
                    inputs=_io_from_npz(npz, "input"), outputs=_io_from_npz(npz, "output"))


def write_blob(blob: VelaBlob) -> bytes:
    """Serialise as ``arm_vela.py::vela_compile`` does."""
    return b"".join([
        _block(HEADER, b""),
        _block("cmd_data", blob.cmd_data),
        _block("weight_data", blob.weight_data),
        _block("scratch_size", struct.pack("<I", blob.scratch_size)),
        _block("inputs", _pack_io(blob.inputs)),
        _block("outputs", _pack_io(blob.outputs)),
        _block(FOOTER, b""),
    ])


def is_blob(data: bytes) -> bool:
    return data[:16].rstrip(b"\0") == HEADER.encode()


def _read_io(path, data: bytes, base: int) -> tuple[VelaIO, ...]:
    if len(data) < 4:
        raise InputError(path, "io block shorter than its count", base)
    (count,) = struct.unpack_from("<i", data)
    if count < 0 or 4 + count * IO_ENTRY.size > len(data):
        raise InputError(path, f"io block claims {count} entries but holds {len(data)} bytes", base)
    return tuple(VelaIO(tuple(v[:4]), v[4], v[5], v[6])
                 for v in IO_ENTRY.iter_unpack(data[4:4 + count * IO_ENTRY.size]))


def read_blob(data: bytes, path: str | Path | None = None) -> VelaBlob:
    """Parse a blob with the checks of ``vela_bin_validate``/``vela_bin_read``."""
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
    return VelaBlob(cmd_data=blocks["cmd_data"][1], weight_data=blocks["weight_data"][1],
                    scratch_size=struct.unpack_from("<I", scratch)[0],
                    inputs=_read_io(path, blocks["inputs"][1], blocks["inputs"][0]),
                    outputs=_read_io(path, blocks["outputs"][1], blocks["outputs"][0]))

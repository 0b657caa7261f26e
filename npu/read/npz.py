"""Read Vela's raw output (``--output-format raw``): a zip of ``.npy`` members, checked.

Only the members the emulator needs are read, without pickle, and each is checked before any
allocation: the zip entry (CRC, size against what the file holds), the ``.npy`` magic and
header, the dtype kind and that the header's shape times the item size is exactly the data the
member holds. Every failure is one InputError naming the member.
"""
from __future__ import annotations

import ast
import io
import math
import struct
import zipfile
import zlib

import numpy as np

from npu.errors import InputError
from npu.read.blob import VelaIO, fit_shape

NPY_MAGIC = b"\x93NUMPY"
REQUIRED = ("cmd_data", "weight_data", "scratch_shape", "scratch_fast_shape")
# Deflate cannot expand data more than ~1032:1 (RFC 1951 block limits): a member whose stated
# size is larger than that is not backed by the file.
MAX_DEFLATE_RATIO = 1032
# Region sizes are NPU addresses: 40 bits on the widest Ethos-U (U65/U85 AXI).
MAX_REGION_BYTES = 1 << 40
# What zipfile raises for a damaged archive (a bad CRC, an unknown method or version, ...).
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, OSError,
              EOFError, ValueError, RuntimeError, struct.error, KeyError, IndexError)


def read_npz(data: bytes, path) -> tuple[bytes, dict[int, int], tuple, bytes]:
    """(COP1 payload, {region: bytes Vela needs}, (inputs, outputs), weight data) of a Vela
    raw npz."""
    members = _members(data, path)
    missing = [k for k in REQUIRED if f"{k}.npy" not in members]
    if missing:
        raise InputError(path, f"npz is missing keys: {', '.join(missing)} (not Vela's raw output?)")
    cmd = _array(members, "cmd_data", "S", path)
    weights = _array(members, "weight_data", "S", path)
    if cmd.shape != () or weights.shape != ():
        raise InputError(path, "npz member cmd_data/weight_data: expected a 0-d bytes array")
    # a 0-d bytes array's item() drops trailing NULs (numpy's S type pads with them): the
    # weights keep their full length, their last bytes are often zeros of a constant
    weight_bytes = weights.tobytes()
    sizes = {0: len(weight_bytes),
             1: _volume(_array(members, "scratch_shape", "iu", path), "scratch_shape", path)}
    fast = _volume(_array(members, "scratch_fast_shape", "iu", path), "scratch_fast_shape", path)
    if fast:
        region = 2
        if "scratch_fast_region.npy" in members:
            r = _array(members, "scratch_fast_region", "iu", path)
            if r.size != 1 or not 0 <= int(r.reshape(-1)[0]) < 8:
                raise InputError(path, "npz member scratch_fast_region: expected one region number 0-7")
            region = int(r.reshape(-1)[0])
        sizes[region] = fast
    ios = tuple(_ios(members, p, path) if f"{p}_shape.npy" in members else () for p in ("input", "output"))
    return cmd.item(), sizes, ios, weight_bytes


def _ios(members, prefix: str, path) -> tuple[VelaIO, ...]:
    """The network's inputs or outputs: Vela's 6-D shapes (leading 1s), element size, offset
    and region; kept as the blob keeps them, the last 4 dimensions."""
    shapes = _array(members, f"{prefix}_shape", "iu", path)
    columns = [_array(members, f"{prefix}_{k}", "iu", path).reshape(-1)
               for k in ("elem_size", "offset", "region")]
    if shapes.ndim != 2 or any(len(c) != len(shapes) for c in columns):
        raise InputError(path, f"npz members {prefix}_*: expected one shape row and one element "
                         f"size, offset and region per {prefix}")
    out = []
    for shape, size, offset, region in zip(shapes.tolist(), *(c.tolist() for c in columns)):
        if min(shape, default=0) < 0 or min(size, offset) < 0 or not 0 <= region < 8 \
                or size * math.prod(shape) + offset > MAX_REGION_BYTES:
            raise InputError(path, f"npz {prefix} {len(out)}: shape {shape}, element size {size}, "
                             f"offset {offset}, region {region} is not a tensor in an NPU region")
        out.append(VelaIO(fit_shape(shape, 4), size, offset, region))
    return tuple(out)


def _members(data: bytes, path) -> dict[str, zipfile.ZipInfo | tuple]:
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except ZIP_ERRORS as e:
        raise InputError(path, f"not a readable npz (zip): {e}", 0) from None
    out = {}
    for info in infos:
        if info.filename in out:
            raise InputError(path, f"npz member {info.filename} appears twice", info.header_offset)
        out[info.filename] = (z, info)
    return out


def _read_member(members, name: str, path) -> bytes:
    z, info = members[name]
    stored = info.compress_type == zipfile.ZIP_STORED
    limit = info.compress_size if stored else info.compress_size * MAX_DEFLATE_RATIO
    if info.file_size > limit or info.header_offset + info.compress_size > z.fp.getbuffer().nbytes:
        raise InputError(path, f"npz member {name}: stated size {info.file_size} is more than "
                         f"the file holds", info.header_offset)
    try:
        return z.read(info)
    except ZIP_ERRORS as e:
        raise InputError(path, f"npz member {name}: {e}", info.header_offset) from None


def _array(members, key: str, kinds: str, path) -> np.ndarray:
    name = f"{key}.npy"
    if name not in members:
        raise InputError(path, f"npz has no member {name}: not Vela's raw output?")
    raw = _read_member(members, name, path)
    where = f"npz member {name}"
    if raw[:6] != NPY_MAGIC or len(raw) < 10:
        raise InputError(path, f"{where}: expected the .npy magic \\x93NUMPY")
    major = raw[6]
    if major == 1:
        (hlen,), start = struct.unpack_from("<H", raw, 8), 10
    elif major in (2, 3) and len(raw) >= 12:
        (hlen,), start = struct.unpack_from("<I", raw, 8), 12
    else:
        raise InputError(path, f"{where}: .npy version {major}, expected 1, 2 or 3")
    if start + hlen > len(raw):
        raise InputError(path, f"{where}: .npy header of {hlen} bytes runs past the member "
                         f"({len(raw)} bytes)", 8)
    try:
        header = ast.literal_eval(raw[start:start + hlen].decode("latin-1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
        dtype = np.dtype(descr)
    except Exception:       # literal_eval and np.dtype reject bad text with many types
        raise InputError(path, f"{where}: bad .npy header (expected a dict with descr, "
                         f"fortran_order and shape)", start) from None
    if (not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape)
            or not isinstance(fortran, bool)):
        raise InputError(path, f"{where}: bad .npy shape {shape!r}", start)
    if dtype.kind not in kinds or dtype.hasobject or dtype.fields:
        raise InputError(path, f"{where}: dtype {descr!r}, expected kind {'/'.join(kinds)}", start)
    count = math.prod(shape)
    body = len(raw) - start - hlen
    if count * dtype.itemsize != body:
        raise InputError(path, f"{where}: shape {shape} of {descr} needs {count * dtype.itemsize} "
                         f"bytes, the member holds {body}", start)
    return np.frombuffer(raw, dtype, count=count, offset=start + hlen).reshape(
        shape, order="F" if fortran else "C")


def _volume(shape: np.ndarray, key: str, path) -> int:
    dims = [int(d) for d in shape.reshape(-1)]
    for d in dims:
        if d < 0:
            raise InputError(path, f"npz member {key}.npy: negative dimension {d}")
    total = math.prod(dims)
    if total > MAX_REGION_BYTES:
        raise InputError(path, f"npz member {key}.npy: {total} bytes, more than an NPU "
                         f"region can address (2^40)")
    return total

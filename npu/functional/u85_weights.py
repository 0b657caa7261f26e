"""Ethos-U85 weight streams: the default (mlw) streams, one per core, and the fast format.

Facts (ethos-u-vela 5.2.0 sources):
- ``NPU_SET_WEIGHT_FORMAT`` selects the default format (``WEIGHT_FORMAT_SWD``) or the fast one
  (``WEIGHT_FORMAT_FWD``), and 2:4 sparsity, which changes only the order
  (``ethos_u85_register_cs_generator.cpp``, GenerateWeights; ``ethos_u85_weight_encoder.cpp``).
- Default format: one independent mlw stream per core at ``WEIGHT_BASE/LENGTH`` and
  ``WEIGHT1..3_BASE/LENGTH``; it is the bitstream U55 uses, so ``ethosu.mlw_codec.decode`` reads
  it. Each decodes to exactly the values of its core's order.
- Fast format (``mlw_codec/source/mlw_encode_fwd.cpp``): one stream whatever the core count.
  A 256-bit header, bits packed least significant first: bit 0 raw mode, bit 1 a 2-bit table
  (else 4-bit), bits 2-103 zero, bits 104-111 a signed zero adjust, bits 112-255 sixteen
  9-bit table entries ``|v| << 1 | sign``. Then one table index (2 or 4 bits) per value, or
  in raw mode the byte ``(w + zero_adjust) & 0xFF``, zero-padded to a multiple of 256 bits.
  The header holds no count: the order gives it.
"""
from __future__ import annotations

import functools

import numpy as np

from npu.errors import InputError
from npu.functional.u85_order import U85Traversal, core_order, fast_order
from npu.functional.weights import mlw_values

HEADER_BITS = 256
RESERVED = (2, 104)           # header bits that are always zero
TABLE_START, TABLE_ENTRIES, ENTRY_BITS = 112, 16, 9
FAST_ALIGN = 32               # the payload is padded to 256 bits


def _bits(data: np.ndarray, start: int, width: int, count: int) -> np.ndarray:
    """`count` little-endian bit fields of `width` bits from bit `start` (width 2, 4 or 8)."""
    if width == 8:
        return data[start // 8:start // 8 + count].astype(np.int64)
    per = 8 // width
    first = start // 8
    raw = data[first:first + -(-count // per)]
    fields = (raw[:, None] >> (np.arange(per) * width)[None, :]) & ((1 << width) - 1)
    return fields.ravel()[:count].astype(np.int64)


def _field(data: bytes, start: int, width: int) -> int:
    value = int.from_bytes(data[start // 8:(start + width + 7) // 8 + 1], "little")
    return (value >> (start % 8)) & ((1 << width) - 1)


def fast_header(data: bytes, where: str) -> tuple[bool, int, int, np.ndarray]:
    """(raw, index bits, zero adjust, table) of a fast-format header; InputError when a field
    is impossible (the encoder never writes it)."""
    if len(data) < HEADER_BITS // 8:
        raise InputError(None, f"{where}: {len(data)} bytes, a fast-format header needs {HEADER_BITS // 8}")
    raw, small = bool(data[0] & 1), bool(data[0] & 2)
    if raw and small:
        raise InputError(None, f"{where}: fast-format header sets both raw mode and the 2-bit table")
    if _field(data, RESERVED[0], RESERVED[1] - RESERVED[0]):
        raise InputError(None, f"{where}: fast-format header bits {RESERVED[0]}..{RESERVED[1] - 1} are "
                               "reserved and not zero")
    adjust = _field(data, RESERVED[1], 8)
    adjust = adjust - 256 if adjust & 0x80 else adjust
    folded = np.array([_field(data, TABLE_START + i * ENTRY_BITS, ENTRY_BITS) for i in range(TABLE_ENTRIES)])
    if np.any(folded == 1):
        raise InputError(None, f"{where}: fast-format table entry {int(np.argmax(folded == 1))} is a negative zero")
    table = np.where(folded & 1, -(folded >> 1), folded >> 1)
    return raw, (8 if raw else 2 if small else 4), adjust, table


def fast_length(count: int, width: int) -> int:
    """Bytes of a fast-format stream of `count` values of `width` bits, padded."""
    bits = HEADER_BITS + count * width
    return -(-bits // HEADER_BITS) * FAST_ALIGN


def decode_fast(data: bytes, order: np.ndarray, where: str) -> np.ndarray:
    """The values of a fast-format stream for `order`. `data` may stop short of the stream's end
    (the end of the region): only padding values may lie past it."""
    raw, width, adjust, table = fast_header(data, where)
    count = len(order)
    whole = (len(data) * 8 - HEADER_BITS) // width           # values entirely inside `data`
    if whole < count and np.any(order[max(whole, 0):] >= 0):
        need = (HEADER_BITS + (int(np.flatnonzero(order >= 0)[-1]) + 1) * width + 7) // 8
        raise InputError(None, f"{where}: truncated: the weights of {count} {width}-bit fast-format values "
                               f"need {need} bytes, {len(data)} given")
    end = (HEADER_BITS + count * width + 7) // 8
    padded = np.zeros(end, dtype=np.uint8)
    padded[:min(len(data), end)] = np.frombuffer(data, dtype=np.uint8)[:end]
    fields = _bits(padded, HEADER_BITS, width, count)
    if raw:
        return fields.astype(np.uint8).view(np.int8).astype(np.int64) - adjust
    return table[fields]


def decode_u85(streams: tuple[bytes, ...], fast: bool, t: U85Traversal, where: str,
               lengths: tuple[int, ...] | None = None) -> np.ndarray:
    """The (cout, kh, kw, source_cin) int32 weights (zero point removed) of one operation.
    `streams`: the bytes at each WEIGHTn_BASE (one for the fast format) up to its programmed
    `lengths` (WEIGHTn_LENGTH) or the end of the region, whichever comes first: Vela 5.2.0
    programs some lengths past the end of its weight buffer, over the encoder's zero padding.
    Cached by the streams' bytes."""
    return _decode(tuple(bytes(s) for s in streams), fast, t, where,
                   tuple(lengths) if lengths is not None else tuple(len(s) for s in streams))


@functools.lru_cache(maxsize=512)
def _decode(streams, fast, t, where, lengths) -> np.ndarray:
    why = t.check()
    if why:
        raise InputError(None, f"{where}: no weight order: {why}")
    out = np.zeros(t.cout * t.kh * t.kw * t.source_cin, dtype=np.int32)
    for order, values in _values(streams, fast, t, where, lengths):
        used = order >= 0
        out[order[used]] = values[used]
    out = out.reshape(t.cout, t.kh, t.kw, t.source_cin)
    out.flags.writeable = False
    return out


def _values(streams, fast, t, where, lengths) -> list[tuple[np.ndarray, np.ndarray]]:
    """(order, values) of each stream."""
    if fast:
        if t.kind == "depthwise":
            raise InputError(None, f"{where}: fast-format depthwise weights (Vela encodes depthwise weights in "
                                   "the default format only)")
        order = fast_order(t)
        _, width, _, _ = fast_header(streams[0], where)
        expect = -(-fast_length(len(order), width) // 16) * 16
        if lengths[0] != expect:
            raise InputError(None, f"{where}: WEIGHT_LENGTH {lengths[0]} disagrees with the weight order: "
                                   f"{len(order)} {width}-bit values make a {expect}-byte fast-format stream")
        return [(order, decode_fast(streams[0], order, where))]
    if len(streams) < t.cores:
        raise InputError(None, f"{where}: {t.cores} cores need {t.cores} weight streams, {len(streams)} programmed")
    pairs = []
    for core in range(t.cores):
        order = core_order(t, core)
        name = f"{where} (core {core})" if t.cores > 1 else where
        values = mlw_values(streams[core], name)
        if len(values) != len(order):
            raise InputError(None, f"{name}: decodes to {len(values)} weights, the weight order of these "
                                   f"registers needs {len(order)}")
        pairs.append((order, values))
    return pairs

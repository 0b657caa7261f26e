"""Decode mlw weight streams: the default Ethos-U weight bitstream (U55/U65, and each U85
default-format core stream).

The format, as Vela's reference decoder reads it (ethos-u-vela, ``ethosu/mlw_codec/
mlw_decode.c``, identical from Vela 3.x to 5.2; its encoder ``mlw_encode.c``). Fields are
read least significant bit first; a stream is a sequence of slices:
- ``ZDIV`` (3 bits): the zero-run Golomb-Rice divisor, 6 = no zero runs, 7 = end of stream.
  An end of stream is followed by padding up to the next byte; the encoder then pads with
  0xff bytes up to 16 bytes (each 0xff byte reads as another end of stream). A stream may
  hold several streams end to end (older Vela concatenated one per OFM depth slice); after an
  end of stream the next slice must bring its palette again. The stream ends at its last byte.
- ``SLICELEN`` (15 bits, + 1): the slice's non-zero-run values; ``WDIV`` (3 bits): the
  weights' divisor, 7 = uncompressed (each value a fixed-width index); ``WTRUNC`` (1 bit):
  truncated unary (a quotient of 2 ends the symbol); ``NEWPAL`` (1 bit): a palette follows.
- With a new palette: ``DIROFS`` (5 bits) added to values past the palette, ``PALSIZE`` (5
  bits, + 1 unless 0), ``PALBITS`` (3 bits, + 2), then the palette entries.
- The slice body is chunks: each chunk has the weights' unary part (12 bits), the zero runs'
  unary part (12 bits, or 8 at divisors of 3 and more), the weights' second unary bits (one
  per set first bit), then the remainders of the previous chunk's symbols (weights, then zero
  runs). A flow-control balance keeps the zero runs at most 8 symbols behind the weights.
- A value ``v`` is ``palette[v]`` when ``v`` is inside the palette, else
  ``v - palsize + dirofs``; that is ``|w| << 1 | sign``. With zero runs, a slice with a new
  palette starts with a run of zeros, and every weight is followed by its run.

Vela's decoder calls ``exit(1)`` when a stream stops inside its data and checks its other
rules with ``assert`` (compiled out in the Python module, built with ``-DNDEBUG``): this one
raises :class:`MlwError` with the bit position instead, and otherwise decodes what that build
decodes, value for value (``tests/npu/test_mlw.py``).
"""
from __future__ import annotations

import numpy as np

ZDIV_DISABLE = 6          # mlw_common.h: not alternating (no zero runs)
ZDIV_EOS = 7              # end of stream
WDIV_UNCOMPRESSED = 7
MAX_VALUES = 1 << 26      # more than any Ethos-U operation's weights (64 Mi values)


class MlwError(ValueError):
    """The stream cannot be decoded; the message says where and why."""


class _Bits:
    """A little-endian bit reader over one stream."""

    __slots__ = ("data", "pos", "nbits")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.nbits = 8 * len(data)

    def get(self, n: int, name: str) -> int:
        if n <= 0:
            return 0
        pos = self.pos
        if pos + n > self.nbits:
            raise MlwError(f"the stream ends inside its data: {name} needs {n} bits at bit {pos}, "
                           f"the stream has {self.nbits} (byte {pos >> 3} of {len(self.data)})")
        start = pos >> 3
        word = int.from_bytes(self.data[start:start + ((pos & 7) + n + 7 >> 3)], "little")
        self.pos = pos + n
        return (word >> (pos & 7)) & ((1 << n) - 1)

    def fields(self, count: int, width: int, name: str) -> list[int]:
        """count consecutive fields of width bits."""
        if count <= 0:
            return []
        if width <= 0:
            return [0] * count
        word = self.get(count * width, name)
        mask = (1 << width) - 1
        return [(word >> (i * width)) & mask for i in range(count)]


def _symbols(unary: int, length: int, carry: int) -> tuple[list[int], int]:
    """Zero-run quotients from one unary field: each 1 adds one, each 0 ends a symbol."""
    out = []
    for i in range(length):
        if unary >> i & 1:
            carry += 1
        else:
            out.append(carry)
            carry = 0
    return out, carry


def _weight_symbols(unary0: int, unary1: int, count: int, trunc: int, carry: int) -> tuple[list[int], int]:
    """Weight quotients: a first-unary 0 is code 0; a 1 takes a second bit, code 1 or 2;
    a code below 2 (or any code, truncated) ends the symbol."""
    out = []
    for i in range(count):
        code = 0
        if unary0 >> i & 1:
            code = 1 + (unary1 & 1)
            unary1 >>= 1
        carry += code
        if code < 2 or trunc:
            out.append(carry)
            carry = 0
    return out, carry


class _Palette:
    __slots__ = ("entries", "size", "bits", "offset")

    def __init__(self):
        self.entries, self.size, self.bits, self.offset = [], 0, 0, 0


def _slice(bb: _Bits, zdiv: int, pal: _Palette):
    """One slice after its ZDIV: (weights, zero runs or None, new palette)."""
    use_zero_run = zdiv != ZDIV_DISABLE
    nvalues = bb.get(15, "SLICELEN") + 1
    wdiv = bb.get(3, "WDIV")
    trunc = bb.get(1, "WTRUNC")
    new_palette = bb.get(1, "NEWPAL")
    if new_palette:
        pal.offset = bb.get(5, "DIROFS")
        size = bb.get(5, "PALSIZE")
        pal.size = size + 1 if size > 0 else 0
        pal.bits = bb.get(3, "PALBITS") + 2
        pal.entries = bb.fields(pal.size, pal.bits, "PALETTE")
    uncompressed = wdiv == WDIV_UNCOMPRESSED
    if uncompressed:                    # the remainder alone: an index of fixed width
        wdiv = max(pal.size - 1, 0).bit_length() if pal.size > 0 else pal.bits
    z_nvalues = nvalues + (1 if new_palette else 0)
    z_unary_len = 12 if zdiv < 3 else 8
    max_w = 8 if uncompressed and wdiv > 5 else 12
    w_values: list[int] = []
    z_values: list[int] = []
    w_pos = z_pos = 0
    w_carry = z_carry = 0
    w_prev: list[int] | None = None
    z_prev: list[int] | None = None
    while True:
        balance = w_pos - z_pos if use_zero_run else 0
        w_enable = (balance < 8 or not use_zero_run) and w_pos < nvalues
        z_enable = balance >= 0 and use_zero_run and z_pos < z_nvalues
        w_unary0 = bb.get(12, "WUNARY0") if w_enable and not uncompressed else 0
        z_q = None
        if z_enable:
            z_q, z_carry = _symbols(bb.get(z_unary_len, "ZUNARY"), z_unary_len, z_carry)
            z_pos += len(z_q)
        w_q = None
        if w_enable:
            ones = bin(w_unary0 & ((1 << max_w) - 1)).count("1")
            w_q, w_carry = _weight_symbols(w_unary0, bb.get(ones, "WUNARY1"), max_w, trunc, w_carry)
            w_pos += len(w_q)
        if w_prev is not None:
            take = w_prev[:nvalues - len(w_values)]
            rem = bb.fields(len(take), wdiv, "WREMAIN")
            w_values.extend((q << wdiv) + r for q, r in zip(take, rem))
        if z_prev is not None:
            take = z_prev[:z_nvalues - len(z_values)]
            rem = bb.fields(len(take), zdiv, "ZREMAIN")
            z_values.extend((q << zdiv) + r for q, r in zip(take, rem))
        w_prev, z_prev = w_q, z_q
        if w_prev is None and z_prev is None:
            break
    return w_values, (z_values if use_zero_run else None), new_palette


def _values(w_values: list[int], pal: _Palette) -> np.ndarray:
    """Sign-magnitude weights from palette indices and direct values (int16, as Vela stores)."""
    w = np.asarray(w_values, dtype=np.int64)
    table = np.asarray(pal.entries, dtype=np.int64)
    val = np.where(w < pal.size, table[np.minimum(w, max(pal.size - 1, 0))] if pal.size else 0,
                   w - pal.size + pal.offset)
    out = np.where(val & 1, -(val >> 1), val >> 1)
    return out.astype(np.int16).astype(np.int64)       # Vela's output is int16_t


def decode(data: bytes) -> np.ndarray:
    """The values of one mlw stream (int64), or MlwError."""
    bb = _Bits(bytes(data))
    pal = _Palette()
    pieces: list[np.ndarray] = []
    total = 0
    while True:
        zdiv = bb.get(3, "ZDIV")
        while zdiv == ZDIV_EOS:
            bb.get(-bb.pos & 7, "BYTEALIGN")
            if bb.pos >> 3 == len(bb.data):
                break
            zdiv = bb.get(3, "ZDIV")
        if bb.pos >> 3 == len(bb.data):
            break
        weights, runs, new_palette = _slice(bb, zdiv, pal)
        w = _values(weights, pal)
        if runs is None:
            piece = w
        else:
            lead = runs[0] if new_palette else 0
            after = np.asarray(runs[1:] if new_palette else runs, dtype=np.int64)
            piece = np.zeros(lead + len(w) + int(after.sum()), dtype=np.int64)
            piece[lead + np.arange(len(w)) + np.concatenate(([0], np.cumsum(after)[:-1]))] = w
        total += len(piece)
        if total > MAX_VALUES:
            raise MlwError(f"the stream decodes to more than {MAX_VALUES} values (bit {bb.pos})")
        pieces.append(piece)
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)

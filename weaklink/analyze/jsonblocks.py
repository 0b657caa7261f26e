"""Vectorised JSON encoding of many flat records with numpy (the `symbols` array of large images).

A record is a row of pieces: constant bytes, a string slice of one shared source buffer, a
row of a small table (categorical values such as `"binding":"weak","type":"object",`), or an
unsigned decimal. Rows are built in blocks as a zero-padded 2-D uint8 array, one column range
per piece, and the zero padding is dropped in one boolean pass. JSON text never contains a
raw NUL byte, and string slices come from .strtab, whose names cannot contain NUL, so zero is a
safe filler.
"""
from __future__ import annotations

import os
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

BLOCK = 8192
THREADED_FROM = 4       # blocks: fewer are encoded in this thread
# Four decimal digits per lookup: row v of _QUADS is the ASCII of v, zero-padded to 4 places.
_QUADS = (np.arange(10000)[:, None] // np.array([1000, 100, 10, 1]) % 10 + 48).astype(np.uint8)
_QUADS32 = _QUADS.view("<u4").ravel()                  # the same four bytes as one word
_TENS = 10 ** np.arange(1, 20, dtype=np.uint64)        # 10^1 .. 10^19

# The pieces of a row (named tuples: dataclasses' import costs more than they give here).
Const = namedtuple("Const", "text")
Const.__doc__ = "The same bytes in every row."
Slice = namedtuple("Slice", "offset length")
Slice.__doc__ = "Strings as (offset, length) into the source buffer; the caller has escaped them."
Table = namedtuple("Table", "texts ids")
Table.__doc__ = "Row `ids[i]` of a small tuple of byte strings (categorical columns)."
Decimal = namedtuple("Decimal", "value")
Decimal.__doc__ = "Unsigned integers below 10^20, in decimal."


def _table_array(texts) -> np.ndarray:
    width = max(map(len, texts), default=0)
    out = np.zeros((len(texts), width), np.uint8)
    for i, t in enumerate(texts):
        out[i, :len(t)] = np.frombuffer(t, np.uint8)
    return out


def _digit_count(value: np.ndarray) -> np.ndarray:
    if value.dtype.itemsize <= 4:             # nine comparisons beat a search here
        value = value.astype(np.uint32, copy=False)
        count = np.ones(len(value), np.int64)
        for power in _TENS[:9].astype(np.uint32):
            count += value >= power
        return count
    return np.searchsorted(_TENS, value.astype(np.uint64), side="right") + 1


class Padded(namedtuple("Padded", "array size")):
    """A source buffer already copied into a uint8 array with zeros after its `size` bytes:
    encodings whose slices are at most `len(array) - size - 1` long use it without copying
    it again (padded_source)."""


def padded_source(source, longest: int, *more) -> Padded:
    """`source` and `more` (bytes-like) one after the other, followed by longest + 1 zero
    bytes."""
    parts = [np.frombuffer(p, np.uint8) for p in (source, *more)]
    size = sum(map(len, parts))
    out = np.empty(size + longest + 1, np.uint8)
    at = 0
    for p in parts:
        out[at:at + len(p)] = p
        at += len(p)
    out[size:] = 0
    return Padded(out, size)


class _Scratch:
    """Working memory reused from block to block by one thread: fresh arrays of a megabyte
    or more are new pages from the kernel each time, and their page faults cost as much as
    the encoding. A `pool` (a list) hands it on to the next encoding when a thread is done."""

    def __init__(self):
        self.data = np.empty(0, np.uint8)
        self.mask = np.empty(0, bool)

    def block(self, count: int, width: int) -> np.ndarray:
        if len(self.data) < count * width:
            self.data = np.empty(count * width, np.uint8)
            self.mask = np.empty(count * width, bool)
        return self.data[:count * width].reshape(count, width)

    def nonzero(self, data: np.ndarray) -> np.ndarray:
        """The bytes of `data` (a block) that are not zero, in order, as a new array."""
        flat = data.reshape(-1)
        mask = np.not_equal(flat, 0, out=self.mask[:len(flat)])
        return flat[mask]


class _Block:
    """One block of rows (a slice of the whole range) being filled left to right."""

    def __init__(self, rows: slice, count: int, template: np.ndarray, scratch: _Scratch):
        """Every row starts as `template`: the constants in their columns, zeros elsewhere."""
        self.rows = rows
        self.data = scratch.block(count, len(template))
        flat = self.data.reshape(-1)
        if count:                       # doubling copies: a few large memcpys, not one per row
            flat[:len(template)] = template
            done = len(template)
            while done < len(flat):
                step = min(done, len(flat) - done)
                flat[done:done + step] = flat[:step]
                done += step
        self.col = 0

    def skip(self, width: int) -> None:
        self.col += width

    def table(self, texts: np.ndarray, ids: np.ndarray) -> None:
        width = texts.shape[1]
        np.take(texts, ids, axis=0, out=self.data[:, self.col:self.col + width], mode="clip")
        self.col += width

    def slice(self, piece: Slice, window: np.ndarray, width: int) -> None:
        if width == 0:
            return
        grabbed = window[piece.offset[self.rows], :width]   # one contiguous row per string
        keep = np.arange(width) < piece.length[self.rows][:, None]
        np.multiply(grabbed, keep, out=self.data[:, self.col:self.col + width])
        self.col += width

    def decimal(self, piece: Decimal, digits: np.ndarray, width: int) -> None:
        value = piece.value[self.rows]
        quads = (width + 3) // 4
        text = np.empty((len(value), quads), np.uint32)
        if value.dtype.itemsize <= 4 and quads <= 3:            # u32: three quads at most
            v = value.astype(np.int64)
            groups = [v // 100_000_000, v // 10_000 % 10_000, v % 10_000][3 - quads:]
        else:
            v = value.astype(np.uint64)
            groups = [(v // np.uint64(10 ** (4 * q))) % np.uint64(10000)
                      for q in range(quads - 1, -1, -1)]
        for k, g in enumerate(groups):
            text[:, k] = _QUADS32[g]
        text8 = text.view(np.uint8)[:, -width:]
        lead = width - digits[self.rows]                  # leading zeros become padding
        np.multiply(text8, np.arange(width) >= lead[:, None],
                    out=self.data[:, self.col:self.col + width])
        self.col += width


# Two adjacent tables become one when their product has at most this many rows.
FUSED_TABLE_ROWS = 4096


def fuse(pieces: list) -> list:
    """Fold constants into their neighbours: Const+Const is one Const, and a Const before or
    after a Table becomes part of every row of the table (one gather instead of three); two
    adjacent small Tables become one table of their pairs."""
    out: list = []
    for p in pieces:
        last = out[-1] if out else None
        if isinstance(p, Const) and isinstance(last, Const):
            out[-1] = Const(last.text + p.text)
        elif isinstance(p, Const) and isinstance(last, Table):
            out[-1] = Table(tuple(t + p.text for t in last.texts), last.ids)
        elif isinstance(p, Table) and isinstance(last, Const):
            out[-1] = Table(tuple(last.text + t for t in p.texts), p.ids)
        elif isinstance(p, Table) and isinstance(last, Table) \
                and len(last.texts) * len(p.texts) <= FUSED_TABLE_ROWS:
            out[-1] = Table(tuple(a + b for a in last.texts for b in p.texts),
                            last.ids.astype(np.int64) * len(p.texts) + p.ids)
        else:
            out.append(p)
    return out


def encode_rows(pieces: list, count: int, source, sep: bytes = b",") -> bytes:
    """The rows joined by `sep` (one byte): each row is the concatenation of `pieces`, whose
    slices are of `source` (bytes, a uint8 array, or a Padded)."""
    return b"".join(encode_stream(pieces, count, source, sep))


def encode_stream(pieces: list, count: int, source, sep: bytes = b",",
                  pool: list | None = None):
    """encode_rows as an iterator of chunks (bytes-like uint8 arrays), built block by block
    as they are asked for: by two threads when there are many blocks (numpy releases the GIL),
    each at most two blocks ahead. Written as they come (file.writelines), the whole text
    never exists at once and the memory of the blocks already written is used again: fresh
    pages cost the kernel a fault and a zeroing each, as much as the encoding itself.
    `pool`: a list of scratch memory shared by the encodings of one document."""
    if count == 0:
        return
    pool = [] if pool is None else pool
    enc = _Encoder(pieces, count, source, sep)
    if enc.blocks < THREADED_FROM or (os.cpu_count() or 1) < 2:
        scratch = _take(pool)
        for k in range(enc.blocks):
            yield enc.block(k, scratch)
        pool.append(scratch)
        return
    from weaklink.threads import in_order
    yield from in_order(enc.block, enc.blocks, state=lambda: _take(pool), release=pool.append)


def _take(pool: list) -> _Scratch:
    try:
        return pool.pop()
    except IndexError:
        return _Scratch()


class _Encoder:
    """The pieces of `count` rows, ready to be encoded block by block (BLOCK rows each)."""

    def __init__(self, pieces: list, count: int, source, sep: bytes):
        self.pieces = pieces = fuse(pieces)
        self.count, self.sep = count, sep
        self.blocks = -(-count // BLOCK)
        longest = max([int(p.length.max()) for p in pieces if isinstance(p, Slice)] or [0])
        if not isinstance(source, Padded) or len(source.array) - source.size <= longest:
            source = padded_source(source.array[:source.size] if isinstance(source, Padded)
                                   else source, longest)
        # window[i] views array[i : i + longest]: gathering a string is gathering one row.
        self.window = as_strided(source.array, (source.size + 1, max(longest, 1)), (1, 1),
                                 writeable=False)
        self.tables = {id(p): _table_array(p.texts) for p in pieces if isinstance(p, Table)}
        self.digits = {id(p): _digit_count(p.value) for p in pieces if isinstance(p, Decimal)}
        # Each piece's width in each block, for all blocks at once: per-block maxima of 8192
        # values are small calls that hold the GIL, against the threads encoding blocks.
        starts = np.arange(0, count, BLOCK)
        self.widths = list(zip(*[_piece_widths(p, starts, self.tables, self.digits, self.blocks)
                                 for p in pieces]))

    def block(self, k: int, scratch: _Scratch) -> np.ndarray:
        """The text of block k (a new array), rows joined and followed by `sep` (but the
        last row of all)."""
        rows = slice(k * BLOCK, min((k + 1) * BLOCK, self.count))
        pieces, tables, digits = self.pieces, self.tables, self.digits
        widths = self.widths[k]
        template = np.zeros(sum(widths) + 1, np.uint8)
        col = 0
        for p, w in zip(pieces, widths):
            if isinstance(p, Const):
                template[col:col + w] = np.frombuffer(p.text, np.uint8)
            col += w
        template[-1] = self.sep[0]
        block = _Block(rows, rows.stop - rows.start, template, scratch)
        for p, w in zip(pieces, widths):
            if isinstance(p, Const):
                block.skip(w)
            elif isinstance(p, Slice):
                block.slice(p, self.window, w)
            elif isinstance(p, Table):
                block.table(tables[id(p)], p.ids[rows])
            else:
                block.decimal(p, digits[id(p)], w)
        if rows.stop == self.count:
            block.data[-1, -1] = 0                  # no separator after the last row
        return scratch.nonzero(block.data)


def _piece_widths(piece, starts: np.ndarray, tables, digits, blocks: int) -> list[int]:
    """The columns `piece` takes in each block (blocks begin at `starts`)."""
    if isinstance(piece, Const):
        return [len(piece.text)] * blocks
    if isinstance(piece, Table):
        return [tables[id(piece)].shape[1]] * blocks
    values = digits[id(piece)] if isinstance(piece, Decimal) else piece.length
    return np.maximum.reduceat(np.asarray(values), starts).tolist()

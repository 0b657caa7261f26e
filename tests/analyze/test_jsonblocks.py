"""The numpy block encoder against the rows built one by one in Python, on random pieces:
block boundaries, threads, constants folded into tables, adjacent tables fused or not."""
from __future__ import annotations

import numpy as np
import pytest

from weaklink.analyze import jsonblocks as J
from weaklink.analyze.jsonblocks import Const, Decimal, Slice, Table


def _reference(pieces, count, source, sep):
    rows = []
    for i in range(count):
        row = b""
        for p in pieces:
            if isinstance(p, Const):
                row += p.text
            elif isinstance(p, Slice):
                row += source[p.offset[i]:p.offset[i] + p.length[i]]
            elif isinstance(p, Table):
                row += p.texts[p.ids[i]]
            else:
                row += str(int(p.value[i])).encode()
        rows.append(row)
    return sep.join(rows)


def _random_pieces(rng, count, source, table_sizes):
    words = [bytes(rng.integers(97, 123, rng.integers(1, 9)).astype(np.uint8))
             for _ in range(max(table_sizes))]
    offsets = rng.integers(0, len(source) - 20, count)
    pieces = [Const(b'{"a":"'), Slice(offsets, rng.integers(0, 20, count)), Const(b'",')]
    for size in table_sizes:            # adjacent tables: fused when their product is small
        pieces.append(Table(tuple(words[:size]), rng.integers(0, size, count)))
    pieces += [Const(b'"n":'), Decimal(rng.integers(0, 2**32, count, dtype=np.uint32)),
               Const(b',"m":'), Decimal(rng.integers(0, 10**19, count, dtype=np.uint64)),
               Const(b"}")]
    return pieces


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threaded", [False, True])
def test_blocks_equal_rows_built_one_by_one(seed, threaded, monkeypatch):
    monkeypatch.setattr(J, "BLOCK", 64)
    monkeypatch.setattr(J, "THREADED_FROM", 4 if threaded else 10**9)
    rng = np.random.default_rng(seed)
    source = bytes(rng.integers(33, 127, 4000).astype(np.uint8))
    count = int(rng.integers(1, 700))
    sizes = [(3, 5), (70, 70), (1,), (2, 3, 4)][seed % 4]     # 70 x 70 is past the fused limit
    pieces = _random_pieces(rng, count, source, sizes)
    monkeypatch.setattr(J, "FUSED_TABLE_ROWS", 4096)
    assert J.encode_rows(pieces, count, source) == _reference(pieces, count, source, b",")


def test_adjacent_tables_fuse_only_when_small():
    ids = np.zeros(3, np.int64)
    small = J.fuse([Table((b"a", b"b"), ids), Table((b"x", b"y", b"z"), ids + 2)])
    assert len(small) == 1 and small[0].texts[small[0].ids[0]] == b"az"
    big = J.fuse([Table(tuple(b"%d" % i for i in range(100)), ids),
                  Table(tuple(b"%d" % i for i in range(100)), ids)])
    assert len(big) == 2


def test_empty_and_single_row():
    source = b"hello"
    pieces = [Const(b"["), Slice(np.array([1]), np.array([3])), Const(b"]")]
    assert J.encode_rows(pieces, 1, source) == b"[ell]"
    assert J.encode_rows([Const(b"x")], 0, source) == b""


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_decimals_at_powers_of_ten(dtype):
    top = np.iinfo(dtype).max
    values = sorted({v for p in range(20) for v in (10**p - 1, 10**p, 10**p + 1) if v <= top}
                    | {0, top})
    pieces = [Decimal(np.array(values, dtype))]
    assert J.encode_rows(pieces, len(values), b"") == b",".join(b"%d" % v for v in values)


@pytest.mark.parametrize("threaded", [False, True])
def test_a_shared_pool_and_a_padded_source_give_the_same_text(threaded, monkeypatch):
    """Two encodings of one document share their scratch memory (handed back to the pool
    when each is done) and a source padded once; a source padded too little for the longest
    slice is padded again, not read past its end."""
    monkeypatch.setattr(J, "BLOCK", 64)
    monkeypatch.setattr(J, "THREADED_FROM", 4 if threaded else 10**9)
    rng = np.random.default_rng(7)
    source = bytes(rng.integers(33, 127, 3000).astype(np.uint8))
    pool: list = []
    for short_pad in (False, True):
        pieces = _random_pieces(rng, 500, source, (3, 5))
        longest = max(int(p.length.max()) for p in pieces if isinstance(p, Slice))
        padded = J.padded_source(source[:1000], 3 if short_pad else longest, source[1000:])
        assert padded.size == len(source) and not padded.array[padded.size:].any()
        text = b"".join(J.encode_stream(pieces, 500, padded, pool=pool))
        assert text == _reference(pieces, 500, source, b",")
        assert 1 <= len(pool) <= 2          # one scratch per thread, back in the pool


def test_in_order_releases_each_lanes_state_when_done():
    from weaklink.threads import in_order
    released = []
    states = iter(["lane-a", "lane-b"])
    out = list(in_order(lambda k, s: k, 7, state=states.__next__, release=released.append))
    assert out == list(range(7)) and sorted(released) == ["lane-a", "lane-b"]

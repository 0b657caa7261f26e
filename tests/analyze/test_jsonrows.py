"""The vectorised JSON encoder against json.dumps, row for row."""
from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings, strategies as st

from weaklink.analyze import jsonrows as J

names = st.lists(st.text(st.characters(min_codepoint=33, max_codepoint=126,
                                       blacklist_characters='"\\'), min_size=1, max_size=40),
                 min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(names, st.data())
def test_rows_match_json_dumps(words, data):
    n = len(words)
    values = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n)),
                      np.uint32)
    source = b"\0".join(w.encode() for w in words) + b"\0"
    offs = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
    lens = np.array([len(w) for w in words])
    cats = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    texts = (b'"a"', b"null", b'"long category"')
    pieces = [J.Const(b'{"n":"'), J.Slice(offs, lens), J.Const(b'","v":'), J.Decimal(values),
              J.Const(b',"c":'), J.Table(texts, cats), J.Const(b"}")]
    got = json.loads(b"[" + J.encode_rows(pieces, n, source) + b"]")
    want = [{"n": w, "v": int(v), "c": json.loads(texts[c])} for w, v, c in zip(words, values, cats)]
    assert got == want


def test_blocks_and_64_bit_values():
    n = J.BLOCK * 2 + 7
    values = np.arange(n, dtype=np.uint64) * np.uint64(10**12)
    body = J.encode_rows([J.Const(b"["), J.Decimal(values), J.Const(b"]")], n, b"")
    assert json.loads(b"[" + body + b"]") == [[int(v)] for v in values]


def test_empty():
    assert J.encode_rows([J.Const(b"{}")], 0, b"") == b""

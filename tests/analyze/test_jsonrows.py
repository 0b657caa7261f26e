"""The %-format JSON encoder against json.dumps, row for row."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from weaklink.analyze import jsonrows as J

names = st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b),
                 min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(names, st.data())
def test_rows_match_json_dumps(words, data):
    n = len(words)
    values = data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n))
    cats = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    texts = (b'"a"', b"null", b'"long % category"')
    template = b'{"n":"%s","v":%d,"c":%s,"pct":"100%%"}'
    body = b"".join(J.format_rows(template, [J.escaped_all(words), values,
                                             [texts[c] for c in cats]], n))
    got = json.loads(b"[" + body + b"]")
    want = [{"n": w.decode("utf-8", "replace"), "v": v, "c": json.loads(texts[c]), "pct": "100%"}
            for w, v, c in zip(words, values, cats)]
    assert got == want


def test_chunks_are_joined_by_the_separator():
    n = J.CHUNK * 2 + 7
    body = b"".join(J.format_rows(b"[%d]", [range(n)], n))
    assert json.loads(b"[" + body + b"]") == [[v] for v in range(n)]


def test_empty():
    assert J.format_rows(b"{}", [], 0) == []


def test_escaping_only_where_needed():
    plain = [b"f0", b"_ZN2ns1xE"]
    assert J.escaped_all(plain) is plain
    assert J.escaped(b'a"b\\c\x01') == b'a\\"b\\\\c\\u0001'
    assert J.escaped(b"caf\xc3\xa9") == "café".encode()       # valid UTF-8 stays as it is
    assert J.escaped(b"bad\xff") == "bad\ufffd".encode()

"""JSON encoding of many flat records (the `symbols` array of 200k+ entries).

Every record of an array has the same shape, so a row is one bytes %-format template and the
whole array is that template repeated, applied to the columns interleaved into one argument
tuple: the formatting loop runs in C, with no Python call per row. Arguments are bytes that
are already JSON text (names escaped by the caller, constants such as `null` or
`"section":".text",`) or ints (`%d`). Rows go in chunks to bound the size of one tuple.
"""
from __future__ import annotations

import json
import re

CHUNK = 65536

# Bytes JSON cannot carry raw: '"', '\', control characters, and (to be safe with invalid
# UTF-8) anything non-ASCII. NUL cannot occur: names are NUL-terminated.
NEEDS_ESCAPE = re.compile(rb'["\\\x00-\x1f\x80-\xff]')


def escaped(raw: bytes) -> bytes:
    """The JSON string body of a name (without the quotes); invalid UTF-8 is replaced."""
    if NEEDS_ESCAPE.search(raw) is None:
        return raw
    return json.dumps(raw.decode("utf-8", "replace"), ensure_ascii=False)[1:-1].encode()


def escaped_all(names: list[bytes]) -> list[bytes]:
    """escaped() of every name; one regular-expression scan when none needs it."""
    if NEEDS_ESCAPE.search(b"".join(names)) is None:
        return names
    return [escaped(n) for n in names]


def format_rows(template: bytes, columns: list, count: int, sep: bytes = b",") -> list[bytes]:
    """`template % (columns[0][i], columns[1][i], ...)` for every row i, joined by `sep`, as
    chunks to join. A template with a literal `%` must write it `%%`."""
    width = len(columns)
    out: list[bytes] = []
    for start in range(0, count, CHUNK):
        stop = min(start + CHUNK, count)
        n = stop - start
        args: list = [None] * (n * width)
        for k, col in enumerate(columns):
            args[k::width] = col[start:stop]
        if out:
            out.append(sep)
        out.append(((template + sep) * (n - 1) + template) % tuple(args))
    return out

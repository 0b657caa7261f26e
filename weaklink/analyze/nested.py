"""In-process demangling of the simplest Itanium names: nested data names.

A namespace-scope or static-member variable is mangled as `_Z N <source-name>+ E`, where a
<source-name> is a decimal length followed by that many identifier characters (Itanium C++
ABI, "Mangling"; docs/linker-semantics.md §4): `_ZN10executorch8backends3arm14dedicated_sramE` is
`executorch::backends::arm::dedicated_sram`. With no substitutions (`S_`, `St`), templates
(`I…E`), qualifiers, operators, constructors or parameters, the demangled text is the
components joined by `::`. Such names are decoded here: one name at a time with a few string
operations (demangle_nested), or a whole table at once with numpy (demangle_nested_many, for
large images); both follow the same rules. Every other mangled name is left to the real
demangler.
"""
from __future__ import annotations

import re

MAX_PARTS = 12          # deeper nesting goes to the real demangler
ANONYMOUS = b"_GLOBAL__N"   # `(anonymous namespace)`: needs the real demangler
_MAX_DIGITS = 4          # identifiers up to 9999 characters
_LENGTH = re.compile(rb"[1-9][0-9]{0,%d}" % (_MAX_DIGITS - 1))


def demangle_nested(name: bytes) -> bytes | None:
    """`ns::inner::x` for `_ZN2ns5inner1xE`, or None when the name is not that simple."""
    if len(name) < 5 or not name.startswith(b"_ZN") or not name.endswith(b"E") \
            or ANONYMOUS in name:
        return None
    pos, end, parts = 3, len(name) - 1, []
    while pos < end:
        m = _LENGTH.match(name, pos)
        if m is None or len(parts) == MAX_PARTS:
            return None
        pos, size = m.end(), int(m.group())
        if name[pos:pos + 1].isdigit() or pos + size > end:     # more than 4 digits, or short
            return None
        parts.append(name[pos:pos + size])
        pos += size
    return b"::".join(parts) if parts else None


def demangle_nested_many(strtab: bytes, off, length):
    """The names at (off, length) of `strtab` decoded at once with numpy, for large tables:
    (ok, text), where `ok[i]` says name i was decoded and `text` holds one line per name, in
    input order (the line of a name not decoded is meaningless)."""
    import numpy as np

    from weaklink.analyze.jsonblocks import Slice, encode_rows
    src = np.zeros(len(strtab) + _MAX_DIGITS + 4, np.uint8)     # room to read past a name
    src[:len(strtab)] = np.frombuffer(strtab, np.uint8)
    src[-2:] = np.frombuffer(b"::", np.uint8)
    colons = len(src) - 2
    end = off + length - 1                               # index of the final 'E'
    ok = (length >= 5) & (src[off] == 95) & (src[off + 1] == 90) & (src[off + 2] == 78)
    ok &= src[np.maximum(end, 0)] == 69                  # "_ZN" … "E"
    pos = off + 3
    parts = []
    for _ in range(MAX_PARTS):
        active = ok & (pos < end)
        if not active.any():
            break
        size, pos_after = _source_name_length(src, pos, active)
        more = (src[pos_after] >= 48) & (src[pos_after] <= 57)   # > _MAX_DIGITS digits
        good = active & (size > 0) & ~more & (pos_after + size <= end)
        ok &= ~active | good
        part_len = np.where(good, size, 0)
        parts.append((np.where(good, pos_after, 0), part_len))
        pos = np.where(good, pos_after + part_len, pos)
    ok &= (pos == end) & (len(parts) > 0)
    if not ok.any():
        return ok, b"\n" * len(off)
    pieces = []
    for k, (start, size) in enumerate(parts):
        size = np.where(ok, size, 0)
        if k:
            pieces.append(Slice(np.full(len(off), colons), np.where(size > 0, 2, 0)))
        pieces.append(Slice(start, size))
    text = encode_rows(pieces, len(off), src, sep=b"\n") + b"\n"
    return _reject_anonymous(ok, text), text


def _source_name_length(src, pos, active):
    """The decimal <source-name> length at `pos`: (value, position after the digits).
    Value 0 means no valid number (a leading zero or no digit at all)."""
    import numpy as np
    value = np.zeros(len(pos), np.int64)
    digits = np.zeros(len(pos), np.int64)
    running = active & (src[pos] >= 49) & (src[pos] <= 57)      # '1'..'9' first
    for k in range(_MAX_DIGITS):
        d = src[pos + k].astype(np.int64) - 48
        running &= (d >= 0) & (d <= 9)
        value = np.where(running, value * 10 + d, value)
        digits += running
    return value, pos + digits


def _reject_anonymous(ok, text: bytes):
    if ANONYMOUS not in text:
        return ok
    lines = text.split(b"\n")
    bad = [i for i, line in enumerate(lines[:len(ok)]) if ANONYMOUS in line]
    ok = ok.copy()
    ok[bad] = False
    return ok

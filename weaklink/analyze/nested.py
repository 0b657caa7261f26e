"""In-process demangling of the simplest Itanium names: nested data names.

A namespace-scope or static-member variable is mangled as `_Z N <source-name>+ E`, where a
<source-name> is a decimal length followed by that many identifier characters (Itanium C++
ABI, "Mangling"; docs/linker-semantics.md §4): `_ZN10executorch8backends3arm14dedicated_sramE` is
`executorch::backends::arm::dedicated_sram`. With no substitutions (`S_`, `St`), templates
(`I…E`), qualifiers, operators, constructors or parameters, the demangled text is the
components joined by `::`. Such names are decoded here, one name at a time with a few string
operations (demangle_nested). Every other mangled name is left to the real demangler.
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


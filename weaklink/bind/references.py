"""Who mentions a symbol: the compilation units that declare or define it, from DWARF.

A pointer rule needs to know whether the backend's translation unit reads the pointer at all:
the `removed` backend passes 0/0 even when the runner still defines a fast scratch. In DWARF
(-g), a unit that declares or defines a variable has a DW_TAG_variable for it (a block-scope
`extern` gives a declaration DIE, a definition a full one). ld's --cref table cannot answer
this: a file that defines a name weakly after another file defined it is not listed at all,
even when it also reads it (ld 2.40, measured on the fixtures).
"""
from __future__ import annotations

import functools
import io
from pathlib import Path

from weaklink.demangle import unqualified
from weaklink.errors import InputError, read_input


def from_dwarf(elf: str | Path | bytes, name: str | None = None):
    """References from DWARF: the names of the compilation units that mention each variable.
    `elf` is the image's path or its bytes (already read; `name` then names it in errors).
    Returns None when the image has no DWARF (the caller then cannot tell); corrupt DWARF is
    one InputError."""
    shown = name or (str(elf) if isinstance(elf, (str, Path)) else "image")
    data = bytes(elf) if isinstance(elf, (bytes, bytearray, memoryview)) else read_input(elf)
    try:
        mentions = _mentions(data)
    except (MemoryError, InputError):
        raise
    except Exception as exc:    # pyelftools reports corrupt DWARF with many exception types
        raise InputError(shown, f"unreadable DWARF: {type(exc).__name__}: {exc}") from None
    if mentions is None:
        return None

    @functools.cache
    def files(name: str) -> list[str]:
        return mentions.get(name, []) + [u for u in mentions.get(unqualified(name), [])
                                         if u not in mentions.get(name, [])]

    return files


def _mentions(data: bytes) -> dict[str, list[str]] | None:
    from elftools.elf.elffile import ELFFile

    with io.BytesIO(data) as fh:
        elf = ELFFile(fh)
        if not elf.has_dwarf_info():
            return None
        mentions: dict[str, list[str]] = {}
        for cu in elf.get_dwarf_info().iter_CUs():
            top = cu.get_top_DIE()
            unit = _text(top.attributes.get("DW_AT_name")) or "?"
            for die in _walk(top):
                if die.tag != "DW_TAG_variable":
                    continue
                for attr in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name"):
                    name = _text(die.attributes.get(attr))
                    if name and unit not in mentions.setdefault(name, []):
                        mentions[name].append(unit)
    return mentions


def _walk(die):
    for child in die.iter_children():
        yield child
        yield from _walk(child)


def _text(attr) -> str | None:
    if attr is None:
        return None
    value = attr.value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

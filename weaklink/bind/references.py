"""Who mentions a symbol: the compilation units that declare or define it, from DWARF.

A pointer rule needs to know whether the backend's translation unit reads the pointer at all:
the `removed` backend passes 0/0 even when the runner still defines a fast scratch. In DWARF
(-g), a unit that declares or defines a variable has a DW_TAG_variable for it (a block-scope
`extern` gives a declaration DIE, a definition a full one). ld's --cref table cannot answer
this: a file that defines a name weakly after another file defined it is not listed at all,
even when it also reads it (ld 2.40, measured on the fixtures). weaklink.bind.readers weighs
this against the other evidence (relocations, the code).
"""
from __future__ import annotations

import functools
from pathlib import Path

from weaklink.demangle import unqualified
from weaklink.errors import InputError, read_input
from weaklink.read.elf import buffer_stream


class DwarfReferences:
    """The compilation units DWARF describes (`units`) and, called with a variable's name,
    the units that declare or define it."""

    def __init__(self, units: list[str], mentions: dict[str, list[str]]):
        self.units = tuple(units)
        self._mentions = mentions

    @functools.cache
    def __call__(self, name: str) -> list[str]:
        m = self._mentions
        return m.get(name, []) + [u for u in m.get(unqualified(name), []) if u not in m.get(name, [])]


def from_dwarf(elf, name: str | None = None) -> DwarfReferences | None:
    """References from DWARF: the names of the compilation units that mention each variable.
    `elf` is the image's path, or its contents (bytes, or the read-only map weaklink.read.elf
    makes of a large file; `name` then names it in errors). Returns None when the image has
    no DWARF (the caller then cannot tell); corrupt DWARF is one InputError."""
    shown = name or (str(elf) if isinstance(elf, (str, Path)) else "image")
    data = read_input(elf, what="ELF file") if isinstance(elf, (str, Path)) else elf
    try:
        found = _mentions(data)
    except (MemoryError, InputError):
        raise
    except Exception as exc:    # pyelftools reports corrupt DWARF with many exception types
        raise InputError(shown, f"unreadable DWARF: {type(exc).__name__}: {exc}") from None
    return DwarfReferences(*found) if found is not None else None


def _mentions(data) -> tuple[list[str], dict[str, list[str]]] | None:
    from elftools.elf.elffile import ELFFile

    with buffer_stream(data) as fh:
        elf = ELFFile(fh)
        if not elf.has_dwarf_info():
            return None
        units, mentions = [], {}
        for cu in elf.get_dwarf_info().iter_CUs():
            top = cu.get_top_DIE()
            unit = _text(top.attributes.get("DW_AT_name")) or "?"
            units.append(unit)
            for die in _walk(top):
                if die.tag != "DW_TAG_variable":
                    continue
                for attr in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name"):
                    name = _text(die.attributes.get(attr))
                    if name and unit not in mentions.setdefault(name, []):
                        mentions[name].append(unit)
    return units, mentions


def _walk(die):
    for child in die.iter_children():
        yield child
        yield from _walk(child)


def _text(attr) -> str | None:
    if attr is None:
        return None
    value = attr.value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

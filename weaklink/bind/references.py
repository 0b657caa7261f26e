"""Who mentions a symbol: the compilation units that declare or define it, from DWARF.

A pointer rule needs to know whether the backend's translation unit reads the pointer at all:
the `removed` backend passes 0/0 even when the runner still defines a fast scratch. In DWARF
(-g), a unit that declares or defines a variable has a DW_TAG_variable for it (a block-scope
`extern` gives a declaration DIE, a definition a full one). ld's --cref table cannot answer
this: a file that defines a name weakly after another file defined it is not listed at all,
even when it also reads it (ld 2.40, measured on the fixtures). weaklink.bind.evidence weighs
this against the other evidence (relocations, the code).
"""
from __future__ import annotations

import functools

from weaklink.demangle import unqualified
from weaklink.read.dwarf import Dwarf, dwarf_of
from weaklink.read.elf import ElfFile


class DwarfReferences:
    """The compilation units DWARF describes (`units`) and, called with a variable's name,
    the units that declare or define it. Each name's units are read when asked for."""

    def __init__(self, dwarf: Dwarf):
        self._dwarf = dwarf

    @functools.cached_property
    def units(self) -> tuple[str, ...]:
        return tuple(self._dwarf.unit_names())

    @functools.cache
    def _mentions(self, name: str) -> list[str]:
        return self._dwarf.variable_units(name)

    def __call__(self, name: str) -> list[str]:
        direct = self._mentions(name)
        return direct + [u for u in self._mentions(unqualified(name)) if u not in direct]


def from_dwarf(elf: ElfFile) -> DwarfReferences | None:
    """References from DWARF: the names of the compilation units that mention each variable.
    Returns None when the image has no DWARF (the caller then cannot tell); corrupt DWARF is
    one InputError (DwarfError) when a question reads it."""
    dwarf = dwarf_of(elf)
    return DwarfReferences(dwarf) if dwarf.present else None

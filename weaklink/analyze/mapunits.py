"""Which input file of a link defined a symbol, from the GNU ld map: with --cref the defining
file is listed first (ld.info, --cref); otherwise the input section line
(` .bss.x  0xADDR  0xSIZE  file.o`) that precedes the symbol's line. And where a file's input
sections landed (weaklink.analyze.attribution ties a unit to the object that won with them).
"""
from __future__ import annotations

import re
from functools import cached_property

from weaklink.demangle import demangle
from weaklink.read.image import Symbol

_INPUT_SECTION = re.compile(r"^ \S*\s+0x[0-9a-fA-F]+\s+0x[0-9a-fA-F]+ (\S.*)$", re.M)
_INPUT_SECTION_AT = re.compile(r"^ \S*\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+) (\S.*)$", re.M)


class MapUnits:
    """`link_map`: the parsed map (weaklink.read.ldmap, which holds its text), or None."""

    def __init__(self, link_map=None):
        self.link_map = link_map

    @property
    def given(self) -> bool:
        return self.link_map is not None

    @property
    def _map_text(self) -> str:
        return self.link_map.text if self.link_map is not None else ""

    def defined_in(self, sym: Symbol) -> str | None:
        if not self.given:
            return None
        # ld demangles C++ names in the map and its --cref table (ld --demangle default).
        names = list(dict.fromkeys([demangle(sym.name), sym.name]))
        cref = getattr(self.link_map, "cref", None) or {}
        for name in names:
            if cref.get(name):
                return cref[name][0]
        text = self._map_text
        if not text:
            return None
        line = next((hit for n in names if (hit := _find_line(text, sym.address, n)) is not None),
                    None)
        if line is None:            # unusual spacing: one regular-expression scan
            m = re.search(r"^\s+0x0*%x\s+%s$" % (sym.address, re.escape(names[0])), text, re.M)
            line = m.start() if m else None
        return None if line is None else _input_section_before(text, line)

    def object_sections(self, obj: str) -> list[tuple[int, int]]:
        """[start, end) of the non-empty input sections the map lists for the file `obj`,
        sorted."""
        return self._sections_by_object.get(obj, [])

    @cached_property
    def _sections_by_object(self) -> dict[str, list[tuple[int, int]]]:
        """Every file's non-empty input sections, from one pass over the map."""
        out: dict[str, list[tuple[int, int]]] = {}
        for m in _INPUT_SECTION_AT.finditer(self._map_text):
            size = int(m.group(2), 16)
            if size:
                start = int(m.group(1), 16)
                obj = m.group(3).strip()
                out.setdefault(obj, []).append((start, start + size))
        for spans in out.values():
            spans.sort()
        return out


def _find_line(text: str, address: int, name: str) -> int | None:
    """Offset of the map line `<16 spaces>0xADDRESS<16 spaces>NAME` (ldlang.c
    print_one_symbol: 8 hex digits for a 32-bit target, 16 on 64-bit builds)."""
    for width in (8, 16):
        hit = text.find("0x%0*x                %s\n" % (width, address, name))
        if hit > 0:
            return text.rfind("\n", 0, hit) + 1
    return None


def _input_section_before(text: str, end: int, limit: int = 2000) -> str | None:
    """The file of the nearest input section line above offset `end` (a line start)."""
    for _ in range(limit):
        if end <= 0:
            return None
        start = text.rfind("\n", 0, end - 1) + 1
        m = _INPUT_SECTION.match(text, start, end - 1)
        if m:
            return m.group(1).strip()
        end = start
    return None

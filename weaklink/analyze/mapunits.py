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

_INPUT_SECTION = re.compile(rb"^ \S*\s+0x[0-9a-fA-F]+\s+0x[0-9a-fA-F]+ (\S.*)$", re.M)
_INPUT_SECTION_AT = re.compile(rb"^ \S*\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+) (\S.*)$", re.M)


class MapUnits:
    """`link_map`: the parsed map (weaklink.read.ldmap), or None; `map_path`: its file."""

    def __init__(self, link_map=None, map_path: str | None = None):
        self.link_map = link_map
        self.map_path = map_path

    @property
    def given(self) -> bool:
        return self.link_map is not None or bool(self.map_path)

    @cached_property
    def _map_bytes(self) -> bytes:
        try:
            with open(self.map_path, "rb") as f:
                return f.read()
        except (OSError, TypeError):
            return b""

    def defined_in(self, sym: Symbol) -> str | None:
        if not self.given:
            return None
        # ld demangles C++ names in the map and its --cref table (ld --demangle default).
        names = list(dict.fromkeys([demangle(sym.name), sym.name]))
        cref = getattr(self.link_map, "cref", None) or {}
        for name in names:
            if cref.get(name):
                return cref[name][0]
        text = self._map_bytes
        if not text:
            return None
        line = next((hit for n in names if (hit := _find_line(text, sym.address, n)) is not None),
                    None)
        if line is None:            # unusual spacing: one regular-expression scan
            m = re.search(rb"^\s+0x0*%x\s+%s$" % (sym.address, re.escape(names[0].encode())),
                          text, re.M)
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
        for m in _INPUT_SECTION_AT.finditer(self._map_bytes):
            size = int(m.group(2), 16)
            if size:
                start = int(m.group(1), 16)
                obj = m.group(3).decode(errors="replace").strip()
                out.setdefault(obj, []).append((start, start + size))
        for spans in out.values():
            spans.sort()
        return out


def _find_line(text: bytes, address: int, name: str) -> int | None:
    """Offset of the map line `<16 spaces>0xADDRESS<16 spaces>NAME` (ldlang.c
    print_one_symbol: 8 hex digits for a 32-bit target, 16 on 64-bit builds)."""
    for width in (8, 16):
        hit = text.find(b"0x%0*x                %s\n" % (width, address, name.encode()))
        if hit > 0:
            return text.rfind(b"\n", 0, hit) + 1
    return None


def _input_section_before(text: bytes, end: int, limit: int = 2000) -> str | None:
    """The file of the nearest input section line above offset `end` (a line start)."""
    for _ in range(limit):
        if end <= 0:
            return None
        start = text.rfind(b"\n", 0, end - 1) + 1
        m = _INPUT_SECTION.match(text, start, end - 1)
        if m:
            return m.group(1).decode(errors="replace").strip()
        end = start
    return None

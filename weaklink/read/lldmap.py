"""Parse ld.lld map files (`-Map FILE`, optionally with `--cref`), LLVM 16 layout.

lld writes one table, not GNU ld's sections (lld/ELF/MapFile.cpp, measured on ld.lld-16):

       VMA      LMA     Size Align Out     In      Symbol
     200d4    200d4       88     1 .text                          output section
     200d4    200d4        8     1         lib.a(m.o):(.text)     input section
     200d4    200d4        4     1                 u1             symbol
  ...
  Cross Reference Table                                            (with --cref)

  Symbol                                            File
  s0                                                o0.o           defining file first
                                                    lib0.a(m0_1.o)

Addresses and sizes are hex without 0x. Column "Out" starts after the four numbers, "In" 8
columns further, "Symbol" 16. There is no archive-member table (lld's --why-extract holds
it), no memory configuration and no LOAD lines. The result is the same LinkMap as for GNU
maps: `cref` is the cross reference table when the map has one, else each symbol with the
input file whose section holds it; `loads` lists input files in order of first appearance.
"""
from __future__ import annotations

import re

from weaklink.errors import InputError
from weaklink.read.linkmap import CREF_HEADER, LinkMap, MapLines, cref_table

_HEADER = re.compile(r"^\s*VMA\s+LMA\s+Size\s+Align\s+Out\s+In\s+Symbol\s*$")
_ROW = re.compile(r"^\s*([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\s+(\d+) (.*)$")
_INPUT = re.compile(r"^(.*?):\((.*)\)$")
IN_COLUMN, SYMBOL_COLUMN = 8, 16      # indentation of "In" and "Symbol" after "Out"


def is_lld_map(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return bool(_HEADER.match(first))


def parse_lld_map_text(text: str, path: str = "<map>") -> LinkMap:
    src = MapLines(text, path)
    if not src.lines or not _HEADER.match(src.lines[0]):
        raise InputError(path, "not an ld.lld map file: expected the 'VMA LMA Size Align Out "
                         "In Symbol' header on line 1", 0)
    defined: dict[str, list[str]] = {}
    loads: list[str] = []
    current = None
    src.i = 1
    while src.i < len(src.lines):
        line = src.lines[src.i]
        if line.strip() == CREF_HEADER:
            src.i += 1
            cref = cref_table(src)
            return LinkMap(loads=tuple(loads), cref=cref or _first(defined), path=path, text=text)
        src.i += 1
        if not line.strip():
            continue
        m = _ROW.match(line)
        if not m:
            src.fail("expected 'VMA LMA SIZE ALIGN' then an output section, input section "
                     "or symbol", src.i - 1)
        rest = m.group(5)
        body = rest.lstrip(" ")
        depth = len(rest) - len(body)
        if depth < IN_COLUMN:                    # an output section
            current = None
        elif depth < SYMBOL_COLUMN:              # an input section: FILE:(SECTION)
            hit = _INPUT.match(body)
            current = hit.group(1) if hit else None
            if current and current not in loads and not current.startswith("<internal>"):
                loads.append(current)
        elif current is not None and not body.startswith("$"):   # ARM mapping symbols
            defined.setdefault(body.strip(), []).append(current)
    return LinkMap(loads=tuple(loads), cref=_first(defined), path=path, text=text)


def _first(defined: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {name: tuple(dict.fromkeys(files)) for name, files in defined.items()}

"""Parse GNU ld map files (`-Map FILE`, optionally with `--cref`), ld 2.40 layout.

Tables read (docs/linker-semantics.md §3.6, §3.7): "Archive member included to satisfy
reference by file (symbol)", "Allocating common symbols", "Discarded input sections", "Memory
Configuration", the LOAD / START GROUP / END GROUP lines of "Linker script and memory map",
and "Cross Reference Table". Anything malformed inside a table raises InputError naming the
line number.
"""
from __future__ import annotations

import os
import re

from weaklink.errors import InputError, read_input
from weaklink.read import lldmap
from weaklink.read.linkmap import (CREF_HEADER, ArchiveInclusion, CommonSymbol, DiscardedSection,
                                   LinkMap, MapLines, MemoryRegion, cref_table)

ARCHIVE_HEADER = "Archive member included to satisfy reference by file (symbol)"
COMMON_HEADER = "Allocating common symbols"
DISCARDED_HEADER = "Discarded input sections"
MEMORY_HEADER = "Memory Configuration"
SCRIPT_HEADER = "Linker script and memory map"
MEMBER_COLUMN = 30      # ldmain.c add_archive_element pads the member to column 30
# An input section line of "Linker script and memory map" (ldlang.c print_input_section): the
# section name (alone on the line above when it is long), its address, size and file.
_INPUT_SECTION = r"^ ({name})\s+(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(\S+)"


def _int(text: str, src: MapLines, k: int) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        src.fail(f"expected a number, got {text!r}", k)
    if not 0 <= value < 1 << 63:    # ld prints addresses and sizes as unsigned bfd_vma
        src.fail(f"expected an address or size from 0 to 2^63, got {text!r}", k)
    return value


def _archive_table(src: MapLines) -> tuple[ArchiveInclusion, ...]:
    out, pending = [], None
    for k, line in src.table_rows():
        nxt = src.lines[k + 1] if k + 1 < len(src.lines) else ""
        if pending is None and nxt.startswith(" " * MEMBER_COLUMN):
            pending = line.strip()               # member name too long: reason on next line
            continue
        member = pending if pending is not None else line[:MEMBER_COLUMN].rstrip()
        rest = line[MEMBER_COLUMN:].strip() if pending is None else line.strip()
        pending = None
        if not rest.endswith(")") or "(" not in rest:
            src.fail("expected 'FILE (SYMBOL)' in the archive member table", k)
        if rest.startswith("("):
            out.append(ArchiveInclusion(member, None, rest[1:-1]))
        else:
            file, _, sym = rest.rpartition(" (")
            out.append(ArchiveInclusion(member, file, sym[:-1]))
    return tuple(out)


def _table_fields(rows):
    """(line index, fields) per row of a table whose first column may hold a name too long
    for it: ld then prints the name alone and the row's other fields on the next line."""
    pending = None
    for k, line in rows:
        parts = line.split()
        if pending is None and len(parts) == 1:
            pending = parts[0]
            continue
        if pending is not None:
            parts, pending = [pending, *parts], None
        yield k, parts


def _common_table(src: MapLines) -> tuple[CommonSymbol, ...]:
    out = []
    rows = list(src.table_rows())
    if rows and rows[0][1].startswith("Common symbol"):    # header, blank line, then rows
        rows = rows[1:] + list(src.table_rows())
    for k, parts in _table_fields(rows):
        if len(parts) < 3:
            src.fail("expected 'SYMBOL SIZE FILE' in the common symbol table", k)
        out.append(CommonSymbol(parts[0], _int(parts[1], src, k), " ".join(parts[2:])))
    return tuple(out)


def _discarded_table(src: MapLines) -> tuple[DiscardedSection, ...]:
    out = []
    # a "(size before relaxing)" line holds the pre-relaxation size of the row above
    rows = ((k, line) for k, line in src.table_rows()
            if not line.strip().endswith("(size before relaxing)"))
    for k, parts in _table_fields(rows):
        if len(parts) < 4:
            src.fail("expected 'SECTION ADDRESS SIZE FILE' in discarded input sections", k)
        out.append(DiscardedSection(parts[0], _int(parts[1], src, k), _int(parts[2], src, k),
                                    " ".join(parts[3:])))
    return tuple(out)


def _memory_table(src: MapLines) -> tuple[MemoryRegion, ...]:
    out = []
    for k, line in src.table_rows():
        parts = line.split()
        if parts[:2] == ["Name", "Origin"]:
            continue
        if len(parts) < 3:
            src.fail("expected 'NAME ORIGIN LENGTH [ATTRIBUTES]' in memory configuration", k)
        out.append(MemoryRegion(parts[0], _int(parts[1], src, k), _int(parts[2], src, k),
                                " ".join(parts[3:])))
    return tuple(out)


def parse_map_text(text: str, path: str = "<map>") -> LinkMap:
    """A GNU ld map, or an ld.lld map (detected by its header line; weaklink.read.lldmap)."""
    if lldmap.is_lld_map(text):
        return lldmap.parse_lld_map_text(text, path)
    src = MapLines(text, path)
    found: dict = {}
    loads, load_lines = [], []
    readers = {ARCHIVE_HEADER: ("archive_members", _archive_table),
               COMMON_HEADER: ("commons", _common_table),
               DISCARDED_HEADER: ("discarded", _discarded_table),
               MEMORY_HEADER: ("memory", _memory_table),
               CREF_HEADER: ("cref", cref_table)}
    seen_script = False
    while src.i < len(src.lines):
        line = src.lines[src.i]
        src.i += 1
        key = line.strip()
        if key in readers:
            name, reader = readers[key]
            found[name] = reader(src)
        elif key == SCRIPT_HEADER:
            seen_script = True
        elif line.startswith("LOAD "):
            loads.append(line[5:].strip())
            load_lines.append(line[5:].strip())
        elif key in ("START GROUP", "END GROUP"):
            load_lines.append(key)
    if not found and not seen_script and not loads:
        raise InputError(path, "not a GNU ld map file: none of its section headers found", 0)
    return LinkMap(loads=tuple(loads), load_lines=tuple(load_lines), path=path, text=text, **found)


def parse_map(path: str | os.PathLike) -> LinkMap:
    return parse_map_text(read_input(path, text=True, what="map file"), str(path))


def input_sections(link_map: LinkMap, pattern: str) -> list[tuple[int, int, str, str]]:
    """(address, size, file, section name) of every input section of a GNU ld map whose name
    matches `pattern` (a regex), in map order."""
    return [(int(m.group(2), 16), int(m.group(3), 16), m.group(4), m.group(1))
            for m in re.finditer(_INPUT_SECTION.format(name=pattern), link_map.text, re.M)]

"""What a link map says, whichever linker wrote it: the LinkMap and its records, the line
reader and the cross reference table (ldcref.c output_cref; lld's --cref prints the same
layout). GNU ld maps: ldmap.py; ld.lld maps: lldmap.py."""
from __future__ import annotations

from collections import namedtuple

from weaklink.errors import InputError

CREF_HEADER = "Cross Reference Table"
CREF_COLUMN = 50        # ldcref.c FILECOL


# The records are named tuples: importing dataclasses costs more than analysing a small image,
# and `weaklink analyze` imports this module for --map.
class ArchiveInclusion(namedtuple("ArchiveInclusion", "member file symbol")):
    """member: `lib.a(obj.o)`; file: the referencing input, None for -u / -e / ENTRY."""
    __slots__ = ()


class CommonSymbol(namedtuple("CommonSymbol", "symbol size file")):
    __slots__ = ()


class DiscardedSection(namedtuple("DiscardedSection", "section address size file")):
    __slots__ = ()


class MemoryRegion(namedtuple("MemoryRegion", "name origin length attributes")):
    __slots__ = ()


class LinkMap(namedtuple("LinkMap", "archive_members commons discarded memory loads load_lines "
                                    "cref path text")):
    """The tables of one map. loads: LOAD paths, in order; load_lines: LOAD paths plus
    "START GROUP"/"END GROUP"; cref: symbol -> files, the definition first; path and text: the
    file and all of it, read once (the input-section lines are searched where asked)."""
    __slots__ = ()

    def __new__(cls, archive_members: tuple[ArchiveInclusion, ...] = (),
                commons: tuple[CommonSymbol, ...] = (),
                discarded: tuple[DiscardedSection, ...] = (),
                memory: tuple[MemoryRegion, ...] = (), loads: tuple[str, ...] = (),
                load_lines: tuple[str, ...] = (),
                cref: dict[str, tuple[str, ...]] | None = None, path: str = "<map>",
                text: str = ""):
        return super().__new__(cls, archive_members, commons, discarded, memory, loads,
                               load_lines, {} if cref is None else cref, path, text)


class MapLines:
    def __init__(self, text: str, path: str):
        self.lines = text.splitlines()
        self.i = 0
        self.path = path

    def fail(self, what: str, line: int | None = None):
        n = (self.i if line is None else line) + 1
        raise InputError(self.path, f"line {n}: {what}")

    def table_rows(self):
        """Yield (index, line) up to the next blank line, after skipping leading blank lines."""
        while self.i < len(self.lines) and not self.lines[self.i].strip():
            self.i += 1
        while self.i < len(self.lines) and self.lines[self.i].strip():
            yield self.i, self.lines[self.i]
            self.i += 1


def cref_table(src: MapLines) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    current = None
    for k in range(src.i, len(src.lines)):
        line = src.lines[k]
        if not line.strip() or line.startswith("Symbol ") and line.rstrip().endswith("File"):
            continue
        if line.startswith(" "):
            if current is None:
                src.fail("cross reference continuation line before any symbol", k)
            out[current].append(line.strip())
            continue
        if len(line) > CREF_COLUMN and line[CREF_COLUMN - 1] == " ":
            name, file = line[:CREF_COLUMN].rstrip(), line[CREF_COLUMN:].strip()
        else:
            name, _, file = line.rstrip().rpartition(" ")
            if not name:
                src.fail("expected 'SYMBOL FILE' in the cross reference table", k)
        current = name.strip()
        out.setdefault(current, []).append(file)
    src.i = len(src.lines)
    return {k: tuple(v) for k, v in out.items()}

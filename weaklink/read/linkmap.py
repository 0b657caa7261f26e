"""A linker's map file as data (LinkMap), the line reader both map parsers use, and the cross
reference table (`--cref`), which GNU ld and ld.lld print alike: a symbol at column 0 with
its defining file at column 50 (ld's ldcref.c FILECOL), each referencing file on its own
line below. The parsers: weaklink.read.ldmap (GNU ld, and the entry point for both) and
weaklink.read.lldmap (ld.lld).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from weaklink.errors import InputError

CREF_HEADER = "Cross Reference Table"
CREF_COLUMN = 50        # ldcref.c FILECOL


@dataclass(frozen=True, slots=True)
class ArchiveInclusion:
    member: str
    file: str | None      # None for -u / -e / ENTRY
    symbol: str


@dataclass(frozen=True, slots=True)
class CommonSymbol:
    symbol: str
    size: int
    file: str


@dataclass(frozen=True, slots=True)
class DiscardedSection:
    section: str
    address: int
    size: int
    file: str


@dataclass(frozen=True, slots=True)
class MemoryRegion:
    name: str
    origin: int
    length: int
    attributes: str


@dataclass(frozen=True)
class LinkMap:
    archive_members: tuple[ArchiveInclusion, ...] = ()
    commons: tuple[CommonSymbol, ...] = ()
    discarded: tuple[DiscardedSection, ...] = ()
    memory: tuple[MemoryRegion, ...] = ()
    loads: tuple[str, ...] = ()                 # LOAD paths, in order
    load_lines: tuple[str, ...] = ()            # LOAD paths plus "START GROUP"/"END GROUP"
    cref: dict[str, tuple[str, ...]] = field(default_factory=dict)   # definition first


class Lines:
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


def cref_table(src: Lines) -> dict[str, tuple[str, ...]]:
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

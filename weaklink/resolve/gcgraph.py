"""Section reachability for garbage collection, linker-neutral: mark a section, then every
section its relocations reach and the other members of its section group (a group is kept or
dropped as a whole: docs/linker-semantics.md §1.3). Which sections are roots, and what
happens after marking, is each linker's policy (gc.py for GNU ld).

Sections are keys `file_id << 32 | section_index`."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

from weaklink.read.elfstructs import SHN_COMMON, SHT_GROUP
from weaklink.read.objfile import SectionTable


COMMON = SHN_COMMON      # the pseudo-section holding a file's winning commons


def key(fid: int, index: int) -> int:
    return fid << 32 | index


def split(k: int) -> tuple[int, int]:
    return k >> 32, k & 0xFFFFFFFF


class SectionGraph:
    """`target(fid, row)` gives the section key a global symbol (row of ObjectFile.rows of
    file `fid`) resolves to, or None (undefined, absolute, common); it is the linker's
    symbol table that decides."""

    def __init__(self, tables: Sequence[SectionTable],
                 target: Callable[[int, int], Sequence[int]],
                 follow: Callable[[object], bool] = lambda sec: True):
        self.tables = tables
        self.target = target
        self.follow = follow
        self.marked: set[int] = set()

    def mark(self, *roots: int) -> None:
        work = list(roots)
        marked, tables = self.marked, self.tables
        while work:
            k = work.pop()
            if k in marked:
                continue
            fid, idx = split(k)
            if idx == COMMON:                     # a file's common symbols: no relocations
                marked.add(k)
                continue
            table = tables[fid]
            if idx not in table.by_index:
                continue
            sec = table.by_index[idx]
            if sec.type == SHT_GROUP:              # follows its first member (sweep)
                continue
            marked.add(k)
            if sec.group:
                work += [key(fid, m) for m in table.group_members[sec.group]]
            if not self.follow(sec):
                continue
            local, rows = table.references(idx)
            work += [key(fid, i) for i in local]
            for row in rows:
                work += self.target(fid, row)

    def mark_attached(self, attached: Callable[[object], bool]) -> None:
        """Mark each `attached` section whose sh_link section is marked, repeated until none
        is added (the ones marked may reach more through their own relocations)."""
        marked, again = self.marked, True
        while again:
            again = False
            for fid, t in enumerate(self.tables):
                for sec in t.sections:
                    k = key(fid, sec.index)
                    if sec.link and attached(sec) and k not in marked \
                            and key(fid, sec.link) in marked:
                        self.mark(k)
                        again = True

    @cached_property
    def by_name(self) -> dict[str, list[int]]:
        """Section name -> every section so called (a `__start_NAME` reference keeps them)."""
        out: dict[str, list[int]] = {}
        for fid, t in enumerate(self.tables):
            for sec in t.sections:
                out.setdefault(sec.name, []).append(key(fid, sec.index))
        return out


def member_name(path: str) -> tuple[str, str | None]:
    """'lib.a(m.o)' -> ('lib.a', 'm.o'); a plain object -> (path, None)."""
    if path.endswith(")") and "(" in path:
        ar, _, mem = path[:-1].partition("(")
        return ar, mem
    return path, None

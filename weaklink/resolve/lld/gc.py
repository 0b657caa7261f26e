"""ld.lld 16's --gc-sections (lld/ELF/MarkLive.cpp), on the shared SectionGraph (gcgraph.py).

It runs after resolution, --wrap's swap and the duplicate check, so it changes neither the
extracted members nor the duplicate errors; what it changes is which sections lld scans for
undefined symbols (only live ones), and which definitions reach the image.

  roots    the sections defining the entry symbol, _init and _fini (lld's -init/-fini
           defaults), -u and EXTERN names; sections with SHF_GNU_RETAIN; sections a script
           KEEPs; "reserved" sections: SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY,
           SHT_NOTE outside a group, and names starting .ctors, .dtors, .init, .fini, .jcr
  marking  a live section marks the sections its relocations reach (for a global symbol the
           winning definition's, after --wrap; a common its file's COMMON block), the other
           members of its group, and the SHF_LINK_ORDER sections attached to it (.ARM.exidx,
           whose relocations keep the personality routines); a reference to __start_SEC or
           __stop_SEC marks every section named SEC
  live     sections without SHF_ALLOC are never collected; a discarded COMDAT copy never lives
"""
from __future__ import annotations

from weaklink.read import elfstructs as S
from weaklink.resolve.gcgraph import COMMON, SectionGraph, key, member_name
from weaklink.resolve.linker_defined import START_STOP, start_stop_section
from weaklink.resolve.lld import rules as R
from weaklink.resolve.script import RuleSet

_RESERVED_TYPES = (S.SHT_INIT_ARRAY, S.SHT_FINI_ARRAY, S.SHT_PREINIT_ARRAY)
_RESERVED_PREFIXES = (".ctors", ".dtors", ".init", ".fini", ".jcr")
INIT, FINI = "_init", "_fini"


class LldGc:
    def __init__(self, s, scripts):
        self.s = s
        self.scripts = scripts
        self.tables = [f.obj.section_table for f in s.files]
        self.graph = SectionGraph(self.tables, self._target)

    def _definition(self, name: str) -> list[int]:
        sym = self.s.table.syms.get(name)
        if sym is None or sym.file < 0 or sym.script:
            return []
        if sym.kind == R.COMMON:
            return [key(sym.file, COMMON)]
        if sym.kind != R.DEFINED or sym.absolute or sym.shndx in self.s.dead.get(sym.file, ()):
            return []
        return [key(sym.file, sym.shndx)]

    def _target(self, fid: int, row: int) -> list[int]:
        name = self.s.files[fid].obj.rows[row][0]
        name = self.s.swap.get(name, name)
        found = self._definition(name)
        if found or not name.startswith(START_STOP):
            return found
        sec = start_stop_section(name)
        return self.graph.by_name.get(sec, []) if sec.isidentifier() else []

    def run(self) -> "LldGc":
        s, g = self.s, self.graph
        for name in (s.entry, INIT, FINI, *s.roots):
            g.mark(*self._definition(s.swap.get(name, name)))
        keeps = RuleSet([r for sc in self.scripts for r in sc.keeps])
        for fid, t in enumerate(self.tables):
            path, member = member_name(s.files[fid].name)
            dead = s.dead.get(fid, ())
            for sec in t.sections:
                if sec.index in dead:
                    continue
                if sec.flags & S.SHF_GNU_RETAIN or sec.type in _RESERVED_TYPES \
                        or (sec.type == S.SHT_NOTE and not sec.group) \
                        or sec.name.startswith(_RESERVED_PREFIXES) \
                        or (keeps and keeps.matches(path, member, sec.name)):
                    g.mark(key(fid, sec.index))
        g.mark_attached(lambda sec: sec.flags & S.SHF_LINK_ORDER)   # live with their section
        return self

    def live(self, fid: int, index: int) -> bool:
        sec = self.tables[fid].by_index.get(index)
        if sec is not None and not sec.flags & S.SHF_ALLOC:
            return True
        return key(fid, index) in self.graph.marked

"""GNU ld's --gc-sections (bfd/elflink.c bfd_elf_gc_sections, elf32-arm.c), after resolution
and archive extraction are done (docs/linker-semantics.md §2.1 item 11). Verified on
arm-none-eabi-ld 2.40 (tests/link/test_gc.py):

  roots    the section defining the entry symbol (-e or a script's ENTRY, the default
           script's ENTRY(_start) included; a -T script without ENTRY gives no entry root),
           -u / --undefined, --require-defined and EXTERN symbols, the -init / -fini symbols
           (`_init` and `_fini` unless given: crti.o's .init/.fini stay); every section matched by a
           KEEP pattern of the script (any KEEP statement, ldlang.c lang_gc_sections_1 runs
           before sections are mapped); SHT_NOTE sections outside groups and not
           SHF_LINK_ORDER; SHF_GNU_RETAIN sections. `.init_array` & co. are kept only through
           KEEP (the default script has it); a -T script without KEEP loses them (measured).
  marking  a marked section marks the other members of its group and the sections its
           relocations reach: local symbols' sections, and for global symbols the section of
           the definition that won (wrapped names renamed, wrap.py); `__start_SEC` /
           `__stop_SEC` keep every section named SEC; a symbol a script sets to another one
           (`x = bar;`, `PROVIDE(x = bar);`; not `x = bar + 4;`, which ld makes absolute)
           marks bar's section when x is reached.
           vtable-GC relocations do not mark.
           .eh_frame's relocations do not mark either (ld reads FDEs separately).
  extra    per file, in load order (_bfd_elf_gc_mark_extra_sections): a SHF_LINK_ORDER
           section whose linked-to section is marked is marked; if some SHF_ALLOC, non-note
           section of the file is kept, its debug sections and non-alloc sections without
           relocations (.comment, .ARM.attributes) are kept too, else they go.
           Then ARM (elf32_arm_gc_mark_extra_sections): .ARM.exidx sections whose text is
           marked, repeated until nothing changes (their R_ARM_NONE relocations keep the
           personality routines).
  sweep    every unmarked section of every loaded file is removed, in load order and section
           order, then the file's COMMON section if it holds winning commons that nothing kept
           refers to; --print-gc-sections names those with a non-zero size, a group member as
           NAME[SIGNATURE]. A SHT_GROUP section goes with its first member. Discarded COMDAT
           copies are swept like any section (measured: ld lists them).
"""
from __future__ import annotations

from functools import cached_property

from weaklink.read import elfstructs as S
from weaklink.read.objfile import K_UNDEF
from weaklink.resolve.gcgraph import COMMON, SectionGraph, key, member_name
from weaklink.resolve.gnu import rules as R
from weaklink.resolve.linker_defined import START_STOP, start_stop_section
from weaklink.resolve.script import RuleSet

_DEBUG_PREFIXES = (".debug", ".gnu.debuglto_.debug_", ".gnu.linkonce.wi.", ".zdebug", ".line",
                   ".stab")


def _linked_to(sec) -> int:
    """elf_linked_to_section: sh_link of a SHF_LINK_ORDER section."""
    return sec.link if sec.flags & S.SHF_LINK_ORDER and sec.link else 0


class GnuGc:
    def __init__(self, s):
        self.s = s
        self.tables = [obj.section_table for obj in s.objects]
        self.graph = SectionGraph(self.tables, self._target,
                                  follow=lambda sec: sec.name != ".eh_frame")

    # -- symbol → section ---------------------------------------------------------------------------
    def _definition(self, name: str, depth: int = 0) -> list[int]:
        sym = self.s.table.syms.get(name)
        if sym is not None and sym.file < 0 and depth < 8:   # `x = bar;` in a script: x
            alias = self._aliases.get(name)                # lives in bar's section (measured)
            if alias and self.s.assigned_by.get(name, ("",))[0] == "script":
                return self._definition(alias, depth + 1)
        if sym is None or sym.file < 0 or sym.absolute:
            return []
        if sym.state == R.COMMON:                 # ldlang.c lang_one_common: in file's COMMON
            return [key(sym.file, COMMON)]
        if sym.state not in (R.DEFINED, R.DEFWEAK):
            return []
        return [key(sym.file, sym.shndx)]

    @cached_property
    def _aliases(self) -> dict[str, str]:
        return {k: v for sc in self.s.scripts for k, v in sc.aliases.items()}

    def _target(self, fid: int, row: int) -> list[int]:
        s = self.s
        name, kind, _, _, shndx, _ = s.objects[fid].rows[row]
        dead = s.dead.get(fid)
        if (kind == K_UNDEF or (dead and shndx in dead)) and s.wrap:
            name = s.wrap.rename(name)
        found = self._definition(name)
        if found or not name.startswith(START_STOP):
            return found
        return self.graph.by_name.get(start_stop_section(name), [])

    # -- the passes ---------------------------------------------------------------------------------
    def run(self) -> None:
        self._roots()
        self._extra()
        self._sweep()

    def _roots(self):
        s, g = self.s, self.graph
        names = [*([s.entry] if s.entry else []), *s.opts.undefined, *s.opts.require_defined,
                 *[e for sc in s.scripts for e in sc.extern], s.opts.init, s.opts.fini]
        for name in names:
            g.mark(*self._definition(name))
        keeps = RuleSet([r for sc in s.scripts for r in sc.keeps])
        for fid, t in enumerate(self.tables):
            path, member = member_name(s.files[fid])
            for sec in t.sections:
                if (sec.type == S.SHT_NOTE and not sec.group and not _linked_to(sec)) \
                        or sec.flags & S.SHF_GNU_RETAIN \
                        or keeps.matches(path, member, sec.name):
                    g.mark(key(fid, sec.index))

    def _extra(self):
        g, marked = self.graph, self.graph.marked
        for fid, t in enumerate(self.tables):
            some_kept = key(fid, COMMON) in marked   # the file's COMMON section is SHF_ALLOC
            for sec in t.sections:
                k = key(fid, sec.index)
                if k in marked and sec.flags & S.SHF_ALLOC and sec.type != S.SHT_NOTE:
                    some_kept = True
                elif _linked_to(sec) and key(fid, _linked_to(sec)) in marked:
                    g.mark(k)
            if not some_kept:
                continue
            for sec in t.sections:
                debug = sec.name.startswith(_DEBUG_PREFIXES)
                relocated = sec.index in t._rel
                if (debug or not (sec.flags & S.SHF_ALLOC or relocated)) \
                        and not sec.group and not _linked_to(sec):
                    marked.add(key(fid, sec.index))
        # elf32_arm_gc_mark_extra_sections: the .ARM.exidx sections of marked text
        g.mark_attached(lambda sec: sec.type == S.SHT_ARM_EXIDX)

    def _sweep(self):
        s, marked = self.s, self.graph.marked
        printed = []
        commons = {sym.file for sym in s.table.syms.values()
                   if sym.state == R.COMMON and sym.file >= 0}
        for fid, t in enumerate(self.tables):
            gone = set()
            for sec in t.sections:
                if sec.flags & S.SHF_EXCLUDE:
                    continue
                k = key(fid, sec.index)
                if sec.type == S.SHT_GROUP:       # elf_gc_sweep: a group goes with its first member
                    first = t.group_members.get(sec.index)
                    if first and key(fid, first[0]) in marked:
                        continue
                elif k in marked:
                    continue
                gone.add(sec.index)
                if sec.size:                      # ld names only non-empty sections
                    printed.append((fid, self._shown(t, sec)))
            if fid in commons and key(fid, COMMON) not in marked:
                gone.add(COMMON)                  # the COMMON section ld made for the file
                printed.append((fid, "COMMON"))
            if gone:
                s.collected[fid] = frozenset(gone)
        s.gc_removed = printed

    @staticmethod
    def _shown(t, sec) -> str:
        """bfd's %pA: a group member is printed as NAME[SIGNATURE]."""
        return f"{sec.name}[{t.obj.group_signature(sec.group)}]" if sec.group else sec.name


def collect(s) -> None:
    """Run ld's --gc-sections over a resolved LinkState: fills `collected` and `gc_removed`."""
    GnuGc(s).run()

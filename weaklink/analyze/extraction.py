"""override-not-extracted: replay the link with the resolution model (weaklink.resolve.link) and find
strong definitions of surviving weak symbols that sat in archive members ld never pulled.

GNU ld extracts an archive member only for a symbol that is still strongly undefined when the
archive is searched (ld.info "Options", -l; docs/linker-semantics.md §2.1). A member M holding a
strong SYM whose weak default survived is reported when two things hold:

1. SYM's weak default is what kept M out, or another rule of the search did while SYM was
   wanted: the model's reason is blocked-by-weak (a reference to SYM was satisfied by the weak
   definition loaded before the search), archive-order, only-weak-reference or
   common-needs-data; and a section that stays in the image refers to SYM (a relocation
   against it in a section --gc-sections keeps, the weak definer's own included: a vector
   table naming its weak aliases). When nothing referenced SYM (never-referenced), no search
   would have pulled M for it with or without the weak default. When only sections that
   --gc-sections removed refer to it, ld would have pulled M and then removed the override
   with them (ld.info --gc-sections: extraction happens before collection): the image would
   be the same. Zephyr's weak `read`, `close`, `__errno`, ... beside newlib's syscall
   wrappers in libc.a are of these two kinds (libstdc++'s random.o names `read`, and is
   collected).
2. M exists to override: every global definition of M is the override of a weak default
   that survived, or reached from those through M's own relocations (the story's member
   holding a strong `ethosu_fast_scratch` and the buffer it points at; a board's member of
   cache hooks). A member that also defines other symbols, none of which any loaded input
   defines or references, is a component the link does not use: a driver whose API nothing calls carries its strong `UART0_IRQHandler` beside the
   weak alias of `Default_Handler` in the vector table, and linking it would have taken a call
   into that driver, not a different search. If the link does mention one of those symbols
   (defined elsewhere or left undefined), the member is reported: the link wanted part of it.
3. M is not in a C runtime library the compiler driver links last by default (GCC's LIB_SPEC
   and LIBGCC_SPEC: libc, libg, libm, libgcc, libstdc++, libsupc++, libnosys, librdimon, and
   their `_nano` builds). Those definitions are the fallbacks of last resort, found only
   because nothing before them defined the symbol; a platform's definition ahead of them is
   the C library's porting interface on purpose (Zephyr's weak `__errno`, which the math
   library calls, replaces newlib's `lib_a-errno.o`), not a default that missed its override.

The link is rebuilt from the map's LOAD lines, with each archive whose members the map lists
as `(--whole-archive)` between --whole-archive and --no-whole-archive, and each member
included for a symbol no file asked for (-u, ENTRY) with `-u SYMBOL`.
"""
from __future__ import annotations

import os

from weaklink.errors import InputError
from weaklink.read.archive import Archive
from weaklink.read.objfile import K_UNDEF, ObjectFile
from weaklink.rules import OVERRIDE_NOT_EXTRACTED, Finding

# Reasons (weaklink.resolve.gnu.explain) of a member the archive search skipped while SYM was
# wanted (rule 1 above); never-referenced is left out on purpose.
MEMBER_REASONS = frozenset({"blocked-by-weak", "archive-order", "only-weak-reference",
                            "common-needs-data"})
MAX_SYMBOLS = 256        # explanations asked for at most this many weak symbols
# LOAD lines for inputs ld makes itself (ARM interworking/long-branch veneers): no file.
LD_INTERNAL = frozenset({"linker stubs"})
WHOLE = "--whole-archive"
RUNTIME_LIBRARIES = frozenset({"libc", "libg", "libm", "libgcc", "libstdc++", "libsupc++",
                               "libnosys", "librdimon"})          # the map's reason for a member --whole-archive loaded


def _archive_of(member: str) -> str:
    return member[:-1].split("(", 1)[0] if member.endswith(")") else member


def args_from_map(link_map) -> list[str]:
    """ld arguments rebuilt from the map's LOAD / START GROUP / END GROUP lines, in order,
    with --whole-archive and -u restored from "Archive member included" (see the module
    docstring)."""
    group = {"START GROUP": "--start-group", "END GROUP": "--end-group"}
    members = getattr(link_map, "archive_members", ()) or ()
    whole = {_archive_of(a.member) for a in members if a.symbol == WHOLE}
    roots = [a.symbol for a in members if a.file is None and a.symbol and a.symbol != WHOLE]
    out = [a for s in dict.fromkeys(roots) for a in ("-u", s)]
    for line in link_map.load_lines:
        if line in LD_INTERNAL:
            continue
        arg = group.get(line, line)
        out += [WHOLE, arg, "--no-whole-archive"] if arg in whole else [arg]
    return out


def _runtime_library(member: str) -> bool:
    stem = os.path.basename(_archive_of(member)).removesuffix(".a").removesuffix("_nano")
    return stem in RUNTIME_LIBRARIES


def has_archive(args: list[str]) -> bool:
    return any(a.endswith(".a") or a.startswith("-l") for a in args)


def find_link_dir(args: list[str], map_path: str | None) -> str | None:
    """The directory ld ran in: the nearest of the current directory, the map's directory
    and its parents where every relative input of the link exists."""
    rel = [a for k, a in enumerate(args) if not a.startswith("-") and not os.path.isabs(a)
           and (k == 0 or args[k - 1] != "-u")]
    candidates = [os.getcwd()]
    if map_path:
        here = os.path.dirname(os.path.realpath(map_path))
        candidates.append(here)
        while os.path.dirname(here) != here:            # its parents, up to the root
            here = os.path.dirname(here)
            candidates.append(here)
    for base in candidates:
        if all(os.path.exists(os.path.join(base, a)) for a in rel):
            return base
    return None


def _unused_api(obj, survivors: set[str], result) -> bool:
    """Rule 2: does the member define a global symbol that its overrides (its definitions of
    surviving weak symbols) do not reach through its own relocations, while no loaded input
    of the link defines or references any such symbol? (The override's own data, such as
    the buffer a strong `ethosu_fast_scratch` points at, is reached; a driver's API is not.)"""
    defs = [r for r in obj.rows if r[1] != K_UNDEF]
    todo = [r[4] for r in defs if r[0] in survivors]
    table, seen = obj.section_table, set()
    while todo:
        sec = todo.pop()
        if sec in seen or sec not in table.by_index:
            continue
        seen.add(sec)
        local, rows = table.references(sec)
        todo += local + [obj.rows[k][4] for k in rows]
    api = [r[0] for r in defs if r[0] not in survivors and r[4] not in seen]
    return bool(api) and not any(n in result.symbols for n in api)


class _Inputs:
    """The link's input objects, read on demand by the name ld gives them (`file.o`,
    `lib.a(member.o)`), relative to the link directory."""

    def __init__(self, link_dir: str | None):
        self.link_dir = link_dir or ""
        self._archives: dict = {}
        self._objects: dict = {}

    def object(self, display: str):
        """The ObjectFile, or None when it cannot be read."""
        if display in self._objects:
            return self._objects[display]
        obj = None
        try:
            if display.endswith(")") and "(" in display:
                path, member = display[:-1].split("(", 1)
                ar = self._archive(path)
                hit = next((m for m in ar.members() if m.name == member), None)
                obj = ar.object(hit.offset) if hit is not None else None
            else:
                obj = ObjectFile.from_path(os.path.join(self.link_dir, display), name=display)
        except (InputError, OSError, ValueError):
            obj = None
        self._objects[display] = obj
        return obj

    def _archive(self, path: str):
        if path not in self._archives:
            self._archives[path] = Archive.from_path(os.path.join(self.link_dir, path), name=path)
        return self._archives[path]


def in_comdat_group(inputs: _Inputs, display: str, symbol: str) -> bool | None:
    """Is `symbol`'s definition in the input `display` (`file.o`, `lib.a(member.o)`) in a
    COMDAT group (SHT_GROUP with GRP_COMDAT)? None when the input cannot be read or does not
    define it."""
    obj = inputs.object(display)
    row = obj.by_name.get(symbol) if obj is not None else None
    if row is None:
        return None
    shndx = obj.rows[row][4]
    return any(shndx in g.sections[1:] for g in obj.comdat_groups)


def comdat_evidence(map_units, link_dir: str):
    """`(symbol) -> bool | None`: is the image's definition of `symbol` in a COMDAT group of
    the input the map says defined it (weaklink.analyze.cxxlinkage point 3)?"""
    inputs = _Inputs(link_dir)

    def in_group(sym) -> bool | None:
        display = map_units.defined_in(sym)
        return None if display is None else in_comdat_group(inputs, display, sym.name)
    return in_group


def _removed(result, discarded) -> dict[str, set[str]]:
    """file -> names of its sections that are not in the image: what the model's
    --gc-sections removed, and the map's "Discarded input sections" (a map rebuilds no
    options, so its own list stands for --gc-sections there)."""
    removed: dict[str, set[str]] = {}
    for file, section in [*((c.file, c.section) for c in result.collected), *discarded]:
        removed.setdefault(file, set()).add(section)
    return removed


def _live_reference(result, inputs: _Inputs, removed: dict[str, set[str]],
                    symbol: str) -> bool | None:
    """Does a section the image keeps hold a relocation against `symbol`? None: an input that
    refers to it could not be read."""
    for display in result.cref.get(symbol, ()):
        obj = inputs.object(display)
        if obj is None:
            return None
        gone = removed.get(display, set())
        dead = frozenset(i for i in range(len(obj.elf.shdrs)) if gone
                         and obj.section_name(i) in gone)
        if symbol in obj.relocated_names(dead):
            return True
    return False


def not_extracted(weak_names: list[str], args: list[str], link_dir: str | None,
                  discarded=()) -> list[Finding]:
    """Findings for every weak survivor whose strong definition an unextracted member held
    and that the link wanted (the module docstring's two rules). `discarded`: (file, section)
    of the map's discarded input sections."""
    # the link replayed, only when the map (or --link-dir) gives its line: the resolution
    # model's import costs every other analyze 13 ms at start-up
    from weaklink.resolve import link
    names = weak_names[:MAX_SYMBOLS]
    survivors = set(weak_names)
    result = link(args, why_not=names, cwd=link_dir, cref=True)
    inputs = _Inputs(link_dir)
    removed = _removed(result, discarded)
    out, members, live = [], {}, {}
    for w in result.why_not:
        if w.reason not in MEMBER_REASONS or not w.file.endswith(")") \
                or _runtime_library(w.file):
            continue
        if w.symbol not in live:
            live[w.symbol] = _live_reference(result, inputs, removed, w.symbol)
        if live[w.symbol] is False:
            continue                              # nothing the image keeps asks for it
        obj = inputs.object(w.file)
        if obj is not None:
            row = obj.by_name.get(w.symbol)
            if row is None or obj.rows[row][2]:
                continue                          # a weak copy: nothing was lost
            if w.file not in members:
                members[w.file] = _unused_api(obj, survivors, result)
            if members[w.file]:
                continue                          # a component the link does not use
        out.append(OVERRIDE_NOT_EXTRACTED.finding(
            w.symbol, f"strong {w.symbol} in {w.file} was never linked: archive member "
            f"not extracted ({w.reason}: {w.detail})"))
    return out

"""ld.lld 16's diagnostics, worded as lld words them (measured on ld.lld-16):

  error: undefined symbol: s1
  >>> referenced by main.o:(.text+0x4)                 up to 3 sites, then
  >>> referenced 2 more times
  >>> did you mean: s0                                 first two diagnostics only
  >>> defined in: lib.a(a.o)

  error: duplicate symbol: x
  >>> defined at a.o:(x)                               the winner, then the later copy
  >>> defined at m.o:(.data+0x0) in archive lib.a
  (">>> defined in a.o" twice when either copy is absolute)

  error: relocation refers to a symbol in a discarded section: s0
  >>> defined in b.o
  >>> referenced by main.o:(.text+0x4)

A site is "file:(symbol)" when a symbol of that file, defined in that section, encloses the
offset (InputSectionBase::getObjMsg), else "file:(section+0xOFF)" with upper-case hex.
Diagnostics and sites come in lld's scan order: files in load order, sections in index order,
relocations in order. That is ld.lld --threads=1's order; its default parallel scan (and its
parallel duplicate check) may list files in another order from run to run (measured).
A location is preceded by its source line when the object has one (srcloc.py): "m.c:4" from
DWARF, a variable's declaration, or the object's STT_FILE name ("m.c", also without -g).
"""
from __future__ import annotations

from weaklink.demangle import demangle
from weaklink.read import elfstructs as S
from weaklink.resolve.lld import rules as R
from weaklink.resolve.lld.srcloc import SourceLocator

SHT_ARM_EXIDX = 0x70000001       # lld does not scan .ARM.exidx relocations
MAX_SITES = 3                    # Relocations.cpp maxUndefReferences
SPELL_CHECKED = 2                # the spell corrector runs for the first two diagnostics
_ALPHABET = [chr(c) for c in range(ord("0"), ord("z") + 1)]


class Messages:
    """Formats file locations and symbol names for one link state."""

    def __init__(self, state, demangled: bool = True, swapped: bool = False):
        self.s = state
        # after --wrap's swap (undefined symbols are reported then, duplicates before it)
        self.swap = state.swap if swapped else {}
        self.name = demangle if demangled else (lambda n: n)
        self._sources: dict[int, SourceLocator] = {}

    def _enclosing(self, fid: int, shndx: int, off: int) -> str | None:
        """The first symbol of the file (locals, then globals this file won) defined in
        section `shndx` with value <= off < value + size."""
        f = self.s.files[fid]
        syms = f.obj.symbol_table
        hit = [i for i, (_, value, size, _, _, sh) in enumerate(syms)
               if sh == shndx and value <= off < value + size]
        if not hit:
            return None
        first_global = f.obj.first_global
        by_index = set(f.obj.index)
        table = self.s.table.syms
        for i in hit:
            name = f.obj.symbol_name(i)
            if i in by_index:
                sym = table.get(self.swap.get(name, name))
                if sym is None or sym.kind != R.DEFINED or sym.file != fid:
                    continue
            elif i >= first_global or not name:
                continue
            elif syms[i][3] & 0xF in (S.STT_SECTION, S.STT_FILE):
                continue
            return self.name(name)
        return None

    def located(self, fid: int, shndx: int, off: int, name: str, indent: str) -> str:
        """getSrcMsg then getObjMsg: "m.c:4\n>>><indent>m.o:(_start)", or the site alone."""
        loc = self._sources.get(fid)
        if loc is None:
            loc = self._sources[fid] = SourceLocator(self.s.files[fid].obj)
        src = loc.message(shndx, off, name)
        site = self.site(fid, shndx, off)
        return f"{src}\n>>>{indent}{site}" if src else site

    def site(self, fid: int, shndx: int, off: int) -> str:
        f = self.s.files[fid]
        where = self._enclosing(fid, shndx, off)
        if where is None:
            where = f"{f.obj.section_name(shndx)}+0x{off:X}"
        tail = f" in archive {f.archive}" if f.archive else ""
        return f"{f.short}:({where}){tail}"


def relocation_sites(obj, dead=frozenset(), live=None):
    """(target section, offsets, symbol-table indices) of the relocations lld scans for
    undefined symbols: SHF_ALLOC sections other than .ARM.exidx that are not discarded (and
    live, with --gc-sections), in section order. Read through the shared SectionTable."""
    table = obj.section_table
    out = []
    for sec in table.sections:
        i = sec.index
        if i in dead or sec.type == SHT_ARM_EXIDX or not sec.flags & S.SHF_ALLOC \
                or (live is not None and not live(i)):
            continue
        offsets, symbols = table.relocations(i)
        if offsets:
            out.append((i, offsets, symbols))
    return out


def undefined_errors(state, msgs: Messages) -> list[tuple[str, str, str]]:
    """(symbol, first referencing file, message) per undefined strong symbol referenced by a
    relocation, in lld's order."""
    s = state
    bad = {n for n, sym in s.table.syms.items()
           if sym.kind == R.UNDEF and (not sym.weak or sym.discarded >= 0)}
    if not bad:
        return []
    raw = []                                       # (name, fid, section, offset) per site
    for fid in range(len(s.files)):
        obj = s.files[fid].obj
        live = None if s.gc is None else (lambda i, fid=fid: s.gc.live(fid, i))
        swap = s.swap
        cand = {obj.index[k]: name for k, r in enumerate(obj.rows)
                if (name := swap.get(r[0], r[0])) in bad}
        if not cand:
            continue
        for target, offsets, symidx in relocation_sites(obj, s.dead.get(fid, frozenset()), live):
            for off, k in zip(offsets, symidx):
                name = cand.get(k)
                if name is not None:
                    raw.append((name, fid, target, off))
    order: dict[str, list] = {}
    first_index: dict[str, int] = {}
    for i, (name, fid, target, off) in enumerate(raw):
        order.setdefault(name, []).append((fid, target, off))
        first_index.setdefault(name, i)
    out = []
    for name, sites in order.items():
        sym = s.table.syms[name]
        if sym.discarded >= 0:
            msg = (f"relocation refers to a symbol in a discarded section: {msgs.name(name)}"
                   f"\n>>> defined in {s.files[sym.discarded].name}")
        else:
            msg = f"undefined symbol: {msgs.name(name)}"
        for fid, target, off in sites[:MAX_SITES]:
            msg += f"\n>>> referenced by {msgs.located(fid, target, off, name, ' ' * 15)}"
        if len(sites) > MAX_SITES:
            msg += f"\n>>> referenced {len(sites) - MAX_SITES} more times"
        if sym.discarded < 0 and first_index[name] < SPELL_CHECKED:
            msg += _suggestion(s, sym, msgs)
        out.append((name, s.files[sites[0][0]].name, msg))
    return out


def _suggestion(s, sym: R.Sym, msgs: Messages) -> str:
    hit = alternative_spelling(s, sym)
    if hit is None:
        return ""
    (pre, found, post), file = hit
    text = f"\n>>> did you mean{pre}{msgs.name(found)}{post}"
    return text + (f"\n>>> defined in: {s.files[file].name}" if file >= 0 else "")


def _file_locals(s, fid: int) -> dict[str, int]:
    if fid < 0:
        return {}
    obj = s.files[fid].obj
    syms = obj.symbol_table[:obj.first_global]
    names = (obj.symbol_name(i) for i, s in enumerate(syms) if s[5] != 0 and s[0] != 0)
    return {n: fid for n in names if n}


def alternative_spelling(s, sym: R.Sym):
    """lld's spell corrector: every name one edit away (insert, substitute, transpose, delete
    at each position, characters '0'..'z'), then a case-insensitive match, then a missing
    extern "C"; a candidate must be a local definition of the referencing file or a name in
    the symbol table that is defined or common (a lazy name does not count, measured)."""
    table = s.table.syms
    local = _file_locals(s, sym.file)
    # -y names nothing else mentions stay placeholders in lld's table: not "undefined", so
    # they are suggested (measured), with no file; unextracted lazy names are undefined by then
    traced = {n for n in s.opts.ld.trace
              if (n not in table or table[n].kind == R.NEW) and n not in s.table.pending}

    swap = s.swap            # the corrector runs after --wrap swapped the names (measured:
                             # "s0" may then suggest __wrap_s0, even for an undefined s0)

    def found(cand: str, swapped: bool = True):
        if cand in local:
            return ("", cand, ""), local[cand]
        target = swap.get(cand, cand) if swapped else cand
        hit = table.get(target)
        if hit is not None and hit.kind in (R.DEFINED, R.COMMON):
            return ("", target, ""), -1 if hit.script else hit.file
        if target in traced:
            return ("", target, ""), -1
        return None

    name = sym.name
    for i in range(len(name) + 1):
        for c in _ALPHABET:
            if (r := found(name[:i] + c + name[i:])) is not None:
                return _colon(r)
        if i == len(name):
            break
        for c in _ALPHABET:
            if (r := found(name[:i] + c + name[i + 1:])) is not None:
                return _colon(r)
        if i + 1 < len(name) and (r := found(name[:i] + name[i + 1] + name[i] + name[i + 2:])):
            return _colon(r)
        if (r := found(name[:i] + name[i + 1:])) is not None:
            return _colon(r)
    low = name.lower()
    for cand in [*local, *(n for n, x in table.items() if x.kind in (R.DEFINED, R.COMMON))]:
        if cand.lower() == low:
            return _colon(found(cand, swapped=False))
    return _extern_c(name, local, table, found)


def _colon(r):
    (_, cand, _), file = r
    return (": ", cand, ""), file


def _function_name(mangled: str) -> str | None:
    text = demangle(mangled)
    if text == mangled or "(" not in text:
        return None
    return text[:text.index("(")]


def _extern_c(name, local, table, found):
    if name.startswith("_Z"):
        base = _function_name(name)
        if base and (r := found(base)) is not None:
            (_, cand, _), file = r
            return (': extern "C" ', cand, ""), file
        return None
    defined = [n for n, x in table.items() if x.kind in (R.DEFINED, R.COMMON)]
    for cand in [*local, *defined]:
        if cand.startswith("_Z") and _function_name(cand) == name:
            file = local.get(cand, table[cand].file if cand in table else -1)
            return (" to declare ", cand, ' as extern "C"?'), file
    return None


def duplicate_errors(state, msgs: Messages) -> list[tuple[str, str, str]]:
    """(symbol, later file, message) per duplicate, in file order (lld's own order depends
    on its parallel postParse)."""
    s = state
    out = []
    for name, winner, fid, shndx, value in s.duplicates:
        sym = s.table.syms[name]
        w_abs = sym.shndx == S.SHN_ABS
        e_abs = shndx == S.SHN_ABS
        head = f"duplicate symbol: {msgs.name(name)}"
        if w_abs or e_abs:
            msg = f"{head}\n>>> defined in {s.files[winner].name}\n>>> defined in {s.files[fid].name}"
        else:
            msg = (f"{head}\n>>> defined at "
                   f"{msgs.located(winner, sym.shndx, sym.value, name, ' ' * 12)}"
                   f"\n>>> defined at {msgs.located(fid, shndx, value, name, ' ' * 12)}")
        out.append((name, s.files[fid].name, msg))
    return out

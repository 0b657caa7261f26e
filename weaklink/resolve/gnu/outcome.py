"""Turn the driver's LinkState into a LinkResult: symbols, diagnostics in ld's wording, the
map's archive table, -y trace lines and the --cref table."""
from __future__ import annotations

from weaklink.demangle import demangle
from weaklink.read.objfile import K_UNDEF
from weaklink.resolve.gcgraph import member_name
from weaklink.resolve.gnu import linker_defined
from weaklink.resolve.gnu import rules as R
from weaklink.resolve.gnu.driver import LinkState
from weaklink.resolve.result import (DISCARDED_SECTION, ENTRY_NOT_FOUND, MULTIPLE_DEFINITION,
                                     Collected,
                                     REQUIRED_UNDEFINED,
                                     UNDEFINED_REFERENCE, Diagnostic, Extraction, LinkResult,
                                     SymbolInfo)
from weaklink.resolve.script import DISCARD, RuleSet, rule_matches

_DEFINED = (R.DEFINED, R.DEFWEAK, R.COMMON)


def symbol_info(s: LinkState, sym: R.Sym) -> SymbolInfo:
    st = sym.state
    made = s.linker_defined.get(sym.name)
    if made is not None and st == R.DEFINED and sym.file == made[0]:   # ld's own, in its section
        owner = s.files[sym.file] if sym.file >= 0 else s.opts.output
        return SymbolInfo("linker", owner, 0, made[1])
    if st == R.DEFINED and not sym.absolute and sym.file >= 0:     # the common case first
        return SymbolInfo("global", s.files[sym.file], sym.size,
                          s.objects[sym.file].section_name(sym.shndx), None, _kept(s, sym))
    file = s.files[sym.file] if sym.file >= 0 else None
    if st in (R.UNDEF, R.NEW):
        return SymbolInfo("undefined", None, 0, None)
    if st == R.UNDEFWEAK:                          # resolves to 0 (docs/linker-semantics.md §1.2)
        return SymbolInfo("undefined-weak", None, 0, None)
    if st == R.COMMON:
        return SymbolInfo("common", file, sym.size, "COMMON", None, _kept(s, sym))  # shndx: COMMON
    if sym.absolute and sym.file < 0:
        how, value = s.assigned_by.get(sym.name, ("absolute", sym.value))
        return SymbolInfo(how, None, 0, "*ABS*" if how == "absolute" else None, value)
    if sym.absolute:
        return SymbolInfo("absolute", file, sym.size, "*ABS*", sym.value)
    section = s.objects[sym.file].section_name(sym.shndx) if sym.file >= 0 else None
    return SymbolInfo("global" if st == R.DEFINED else "weak", file, sym.size, section, None,
                      _kept(s, sym))


def _kept(s: LinkState, sym: R.Sym) -> bool:
    """False when --gc-sections removes the section holding the winning definition."""
    gone = s.collected.get(sym.file) if sym.file >= 0 else None
    return not (gone and sym.shndx in gone)


def _rows(s: LinkState):
    """(name, Sym) of every row of the symbol table: each name a loaded file mentions, and
    ld's own definitions."""
    own = s.linker_defined
    return ((name, sym) for name, sym in s.table.syms.items() if sym.notices or name in own)


def symbol_count(s: LinkState) -> int:
    """len(symbols(s)), without building the records."""
    return sum(1 for _ in _rows(s))


def symbols(s: LinkState) -> dict[str, SymbolInfo]:
    """Every name a loaded file mentions, and ld's own definitions. Strong section definitions, the bulk, are built
    inline; everything else goes through symbol_info."""
    out, files, objects, sections = {}, s.files, s.objects, {}
    defined, info = R.DEFINED, symbol_info
    if s.collected:                                # --gc-sections: every symbol gets `kept`
        return {n: info(s, sym) for n, sym in _rows(s)}
    for name, sym in _rows(s):
        f = sym.file
        if sym.state == defined and f >= 0 and not sym.absolute \
                and name not in s.linker_defined:
            key = f << 32 | sym.shndx
            sec = sections.get(key)
            if sec is None:
                sec = sections[key] = objects[f].section_name(sym.shndx)
            out[name] = SymbolInfo("global", files[f], sym.size, sec)
        else:
            out[name] = info(s, sym)
    return out


def _shown(s: LinkState, name: str) -> str:
    """A name as ld prints it in a message: demangled, unless --no-demangle was given."""
    return demangle(name) if s.opts.demangle else name


def multiple_definitions(s: LinkState) -> list[Diagnostic]:
    """ldmain.c multiple_definition: reported at the later definition; an absolute first
    definition gets no "first defined here"."""
    out = []
    for name, fid, first, first_abs in s.table.multiple:
        msg = f"multiple definition of `{_shown(s, name)}'"
        if first >= 0 and not first_abs:
            msg += f"; {s.files[first]}: first defined here"
        out.append(Diagnostic(MULTIPLE_DEFINITION, name, s.files[fid], msg))
    return out


def required_undefined(s: LinkState) -> list[Diagnostic]:
    out = []
    for name in dict.fromkeys(s.opts.require_defined):
        if s.table.syms[name].state not in _DEFINED:
            out.append(Diagnostic(REQUIRED_UNDEFINED, name, None,
                                  f"required symbol `{_shown(s, name)}' not defined"))
    return out


def undefined_references(s: LinkState) -> list[Diagnostic]:
    """ld reports an undefined reference at each relocation against a symbol still strongly
    undefined — also in files that referenced it only weakly (docs/linker-semantics.md §1.2);
    a name that is in a symbol table but used by no relocation is silent. --wrap: under the
    renamed name (wrap.py)."""
    undef = {n for n, sym in s.table.syms.items() if sym.state == R.UNDEF}
    if not undef:
        return []
    rename = s.wrap.rename if s.wrap else (lambda n: n)
    out = []
    for fid, obj in enumerate(s.objects):
        dead = s.dead.get(fid, frozenset())
        cand = [(r[0], rename(r[0])) for r in obj.rows
                if (r[1] == K_UNDEF or r[4] in dead) and rename(r[0]) in undef]
        if not cand:
            continue
        used = obj.relocated_names(s.ignored_sections(fid))
        out += [Diagnostic(UNDEFINED_REFERENCE, n, s.files[fid],
                           f"undefined reference to `{_shown(s, n)}'")
                for orig, n in cand if orig in used]
    return out


def discarded_references(s: LinkState) -> list[Diagnostic]:
    """elflink.c elf_link_input_bfd: a relocation in an output section against a global
    symbol whose definition a -T script's /DISCARD/ dropped is an error ("`SYM' referenced in
    section `S' of F: defined in discarded section `D' of G"). A section goes to the first
    rule that matches it. ld's default script discards only .note.GNU-stack, .gnu_debuglink
    and .gnu.lto_*, which define no symbols: it is not checked."""
    rules = [r for sc in s.scripts if sc is not s.default for r in sc.rules]
    drop = RuleSet([r for r in rules if r.output == DISCARD])
    if not drop:
        return []
    cache: dict[tuple[int, int], str | None] = {}

    def discarded(fid: int, shndx: int) -> str | None:
        hit = cache.get((fid, shndx), 0)
        if hit != 0:
            return hit
        name = s.objects[fid].section_name(shndx)
        path, member = member_name(s.files[fid])
        out = None
        if name and drop.matches(path, member, name):
            first = next((r for r in rules if rule_matches(r, path, member, name)), None)
            out = name if first is not None and first.output == DISCARD else None
        cache[(fid, shndx)] = out
        return out

    bad = {n: (sym.file, sec) for n, sym in s.table.syms.items()
           if sym.state in (R.DEFINED, R.DEFWEAK) and sym.file >= 0 and not sym.absolute
           and (sec := discarded(sym.file, sym.shndx))}
    if not bad:
        return []
    rename = s.wrap.rename if s.wrap else (lambda n: n)
    out = []
    for fid, obj in enumerate(s.objects):
        table, ignored, rows = obj.section_table, s.ignored_sections(fid), obj.rows
        for sec in table.sections:
            if sec.index in ignored or not sec.flags & 0x2 or sec.name == ".eh_frame" \
                    or discarded(fid, sec.index):
                continue
            for row in table.references(sec.index)[1]:
                name = rows[row][0]
                if rows[row][1] == K_UNDEF:
                    name = rename(name)
                if name in bad:
                    dfid, dsec = bad[name]
                    out.append(Diagnostic(DISCARDED_SECTION, name, s.files[fid],
                                          f"`{_shown(s, name)}' referenced in section "
                                          f"`{sec.name}' of {s.files[fid]}: defined in "
                                          f"discarded section `{dsec}' of {s.files[dfid]}"))
    return out


def entry_warning(s: LinkState) -> list[Diagnostic]:
    e = s.entry
    if e is None or (e in s.table.syms and s.table.syms[e].state in _DEFINED):
        return []
    return [Diagnostic(ENTRY_NOT_FOUND, e, None, f"warning: cannot find entry symbol {e}")]


def trace_lines(s: LinkState, names) -> tuple[str, ...]:
    """ld -y: one line per file that ld noticed mentioning the symbol, in load order. Under
    --wrap a reference is noticed only if its own (unrenamed) name is traced too, unless
    --cref makes ld notice everything (wrap.py)."""
    rows, traced = [], set(names)
    for name in names:
        sym = s.table.syms.get(name)
        origs = s.wrap.originals(name) if s.wrap else (name,)
        for fid, kind in (sym.noticed() if sym else ()):
            by_name = s.objects[fid].by_name
            if kind == R.N_REF and s.wrap:
                mine = [o for o in origs if o in by_name] or [name]
                if not (s.opts.cref or s.opts.plugin) and not traced.intersection(mine):
                    continue
                order = by_name.get(mine[0], 0)
            else:
                order = by_name.get(name, 0)           # symbol-table order within a file
            what = "reference to" if kind == R.N_REF else "definition of"
            rows.append((fid, order, f"{s.files[fid]}: {what} {name}"))
    return tuple(line for _, _, line in sorted(rows))


def cref_table(s: LinkState) -> dict[str, tuple[str, ...]]:
    """--cref: definitions, then commons, then references, each newest first (ld/ldcref.c
    add_cref prepends a file the first time it notices it, then only ORs in flags: a file
    that both references (through --wrap's __real_) and defines a name appears once)."""
    out = {}
    for name, sym in s.table.syms.items():
        if not sym.notices:
            continue
        flags: dict[int, set] = {}
        for f, k in sym.noticed():
            flags.setdefault(f, set()).add(k)
        newest = list(reversed(flags))
        order = [f for f in newest if R.N_DEF in flags[f]]
        order += [f for f in newest if R.N_COMMON in flags[f] and R.N_DEF not in flags[f]]
        order += [f for f in newest if flags[f] == {R.N_REF}]
        out[name] = tuple(s.files[f] for f in order)
    for name, owners in linker_defined.cref_rows(s).items():      # defined in the output
        out[name] = owners + tuple(f for f in out.get(name, ()) if f not in owners)
    return out


def _reported(s: LinkState) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) as ld prints them under the command line's reporting options
    (measured on ld 2.40): --unresolved-symbols=ignore-*/-z undefs drop the undefined
    references, --ignore-unresolved-symbol SYM drops SYM's, --warn-unresolved-symbols makes
    them warnings; -w prints nothing at all."""
    o = s.opts
    undefined = [] if o.unresolved == "ignore" else [
        d for d in undefined_references(s) if d.symbol not in o.ignore_unresolved]
    warnings = entry_warning(s)
    if o.unresolved == "warning":
        warnings += [d._replace(message="warning: " + d.message) for d in undefined]
        undefined = []
    errors = list(dict.fromkeys(
        multiple_definitions(s) + required_undefined(s) + undefined + discarded_references(s)))
    if o.no_warnings:
        return [], []
    return errors, warnings


def build(s: LinkState, *, cref: bool = False, trace=(), why_not=()) -> LinkResult:
    errors, warnings = _reported(s)
    o = s.opts
    # -w and --noinhibit-exec: ld exits 0 whatever it found; --fatal-warnings: a warning fails
    ok = o.no_warnings or o.noinhibit or not (errors or (o.fatal_warnings and warnings))
    extracted = tuple(Extraction(s.files[m], s.files[r] if r >= 0 else None, name)
                      for m, r, name in s.extracted)
    return LinkResult(
        ok=ok, errors=tuple(errors), warnings=tuple(warnings), no_effect=o.no_effect,
        loaded=tuple(s.files), extracted=extracted, symbol_table=lambda: symbols(s),
        symbol_count=lambda: symbol_count(s),
        cref=cref_table(s) if cref else {}, trace=trace_lines(s, trace),
        why_not=tuple(why_not), gc_sections=s.opts.gc_sections,
        print_gc_sections=s.opts.print_gc and s.opts.gc_sections,
        collected=tuple(Collected(s.files[f], name) for f, name in s.gc_removed))

"""Turn the lld driver's state into a LinkResult (the same schema as GNU ld's, flavor "lld"):
errors in lld's wording, `extracted` exactly as --why-extract lists it, warnings for
--warn-backrefs and a missing entry symbol."""
from __future__ import annotations

from fnmatch import fnmatchcase

from weaklink.read.objfile import K_COMMON
from weaklink.resolve.lld import rules as R
from weaklink.resolve.lld.diagnostics import Messages, duplicate_errors, undefined_errors
from weaklink.resolve.lld.driver import LldState
from weaklink.resolve.result import (ENTRY_NOT_FOUND, LINKER_SYMBOL_REDEFINED,
                                     MULTIPLE_DEFINITION, UNDEFINED_REFERENCE, Diagnostic,
                                     Extraction, LinkResult, SymbolInfo)

BACKWARD_REFERENCE = "backward-reference"        # --warn-backrefs warnings
WHY_EXTRACT_HEADER = "reference\textracted\tsymbol"
INTERNAL = "<internal>"                          # lld's name for -u as a reference


def symbol_info(s: LldState, sym: R.Sym) -> SymbolInfo | None:
    kind = sym.kind
    if kind == R.DEFINED:
        if sym.name in s.linker_defined and sym.file < 0:    # lld's own definition
            return SymbolInfo("linker", None, 0, s.linker_defined[sym.name])
        if sym.script == R.SCRIPT_VALUE:          # --defsym, or a script's constant
            return SymbolInfo("absolute", None, 0, "*ABS*", sym.value)
        if sym.script:                            # a script expression lld computes
            return SymbolInfo("script", None, 0, None, None)
        f = s.files[sym.file]
        if sym.absolute:
            return SymbolInfo("absolute", f.name, sym.size, "*ABS*", sym.value)
        kept = s.gc is None or s.gc.live(sym.file, sym.shndx)
        return SymbolInfo("weak" if sym.weak else "global", f.name, sym.size,
                          f.obj.section_name(sym.shndx), None, kept)
    if kind == R.COMMON:
        return SymbolInfo("common", s.files[sym.file].name, sym.size, "COMMON")
    if kind == R.UNDEF:
        return SymbolInfo("undefined-weak" if sym.weak and sym.discarded < 0 else "undefined",
                          None, 0, None)
    if kind == R.LAZY and sym.weak:             # a weak reference left it lazy: undefined weak
        return SymbolInfo("undefined-weak", None, 0, None)
    return None


def symbols(s: LldState) -> dict[str, SymbolInfo]:
    out = {name: info for name, sym in s.table.syms.items()
           if (info := symbol_info(s, sym)) is not None}
    for name, to in s.swap.items():
        if to.startswith("__wrap_") and name in out and out[name].binding == "common" \
                and not _common_reached(s, "__real_" + name):
            out[name] = SymbolInfo("undefined", None, 0, None)
    return out


def _common_reached(s: LldState, real: str) -> bool:
    """lld allocates commons by walking the symbol slots of files that have commons, after
    --wrap has pointed their NAME slots at __wrap_NAME: a wrapped common survives only through
    a __real_NAME slot of such a file, else it stays unallocated and undefined (measured)."""
    return any(any(r[1] == K_COMMON for r in f.obj.rows) and any(r[0] == real for r in f.obj.rows)
               for f in s.files)


def extractions(s: LldState) -> tuple[Extraction, ...]:
    """`ref` is a file id, an option name ("--entry") or None (<internal>)."""
    return tuple(Extraction(member, s.files[ref].name if isinstance(ref, int) else ref, name)
                 for ref, member, name in s.extracted)


def why_extract_text(result: LinkResult) -> str:
    """lld's --why-extract file: a header, then reference, member, symbol per line."""
    rows = [f"{x.file or INTERNAL}\t{x.member}\t{x.symbol}" for x in result.extracted]
    return "\n".join([WHY_EXTRACT_HEADER, *rows]) + "\n"


def backref_warnings(s: LldState) -> list[Diagnostic]:
    out = []
    for name, (ref, lid) in s.backrefs.items():
        to = s.lazies[lid].name
        if any(fnmatchcase(to, pat) for pat in s.opts.backrefs_exclude):
            continue
        out.append(Diagnostic(BACKWARD_REFERENCE, name, s.files[ref].name,
                              f"backward reference detected: {name} in {s.files[ref].name} "
                              f"refers to {to}"))
    return out


def entry_warning(s: LldState) -> list[Diagnostic]:
    sym = s.table.syms.get(s.entry)
    if sym is not None and sym.kind in (R.DEFINED, R.COMMON):
        return []
    return [Diagnostic(ENTRY_NOT_FOUND, s.entry, None,
                       f"cannot find entry symbol {s.entry}; not setting start address")]


def build(s: LldState) -> LinkResult:
    msgs = Messages(s, s.opts.ld.demangle)
    if s.stopped:                  # duplicates end the link before anything else is checked
        errors = [Diagnostic(MULTIPLE_DEFINITION, n, f, m) for n, f, m in duplicate_errors(s, msgs)]
        warnings = []
    else:
        after_wrap = Messages(s, s.opts.ld.demangle, swapped=True)
        errors = [Diagnostic(LINKER_SYMBOL_REDEFINED, n, f, m) for n, f, m in s.reserved_errors]
        errors += [Diagnostic(UNDEFINED_REFERENCE, n, f, m)
                   for n, f, m in undefined_errors(s, after_wrap)]
        warnings = backref_warnings(s)
    if s.opts.error_limit:                     # 0: no limit
        errors = errors[:s.opts.error_limit]
    if not s.stopped:
        warnings += entry_warning(s)
    return LinkResult(ok=not errors, errors=tuple(errors), warnings=tuple(warnings),
                      loaded=tuple(f.name for f in s.files), extracted=extractions(s),
                      symbol_table=lambda: symbols(s), flavor="lld",
                      no_effect=s.opts.ld.no_effect)

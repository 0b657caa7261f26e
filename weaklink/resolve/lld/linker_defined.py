"""Symbols ld.lld 16 defines on its own (lld/ELF/Writer.cpp addReservedSymbols,
addOptionalRegular; measured with ld.lld-16)."""
from __future__ import annotations

from weaklink.resolve.linker_defined import (GOT_SECTION, GOT_SYMBOL, START_STOP,
                                             start_stop_section, start_stop_sections)
from weaklink.resolve.lld import rules as L

# Measured with ld.lld-16 (arm), with no script, with a -T script with SECTIONS and with one
# without: lld defines these when a loaded file references them (the name exists and is not
# defined or common; lld/ELF/Writer.cpp addOptionalRegular), whatever the script says:
LLD_ALWAYS = ("__ehdr_start", "__executable_start", "__dso_handle",
              "__preinit_array_start", "__preinit_array_end", "__init_array_start",
              "__init_array_end", "__fini_array_start", "__fini_array_end",
              "__exidx_start", "__exidx_end",
              "__rel_iplt_start", "__rel_iplt_end")     # REL targets, not position-independent
# ... and these only when no script has a SECTIONS command (a script that lays out the image
# defines its own):
LLD_WITHOUT_SECTIONS = ("__bss_start", "end", "_end", "etext", "_etext", "edata", "_edata")
LLD_GOT_ERROR = "{file} cannot redefine linker defined symbol '{name}'"


def lld_reserve(state, scripts) -> list[tuple[str, str, str]]:
    """lld's own definitions (after script assignments, before relocations are scanned);
    returns the errors: (symbol, file, message) for an input that defines
    `_GLOBAL_OFFSET_TABLE_`, which lld reserves (measured: an error even when nothing
    references the name, and for an archive member once extracted)."""
    table = state.table
    got = table.syms.get(GOT_SYMBOL)
    if got is not None and got.kind == L.DEFINED and got.file >= 0 and not got.script:
        name = state.files[got.file].name
        return [(GOT_SYMBOL, name, LLD_GOT_ERROR.format(file=name, name=GOT_SYMBOL))]
    sections = any(sc.rules for sc in scripts)
    wanted = [GOT_SYMBOL, *LLD_ALWAYS, *(() if sections else LLD_WITHOUT_SECTIONS)]
    start_stop = {n: start_stop_section(n) for n in table.syms if n.startswith(START_STOP)}
    if start_stop:
        found = start_stop_sections([(f.name, f.obj) for f in state.files], scripts,
                                    set(start_stop.values()))
        wanted += [n for n, sec in start_stop.items() if sec in found]
    for name in wanted:
        sym = table.syms.get(name)
        if sym is None or sym.kind in (L.DEFINED, L.COMMON):
            continue
        table.assign(sym, 0, evaluated=False)
        state.linker_defined[name] = GOT_SECTION if name == GOT_SYMBOL else None
    return []

"""Symbols GNU ld defines on its own, with no script saying so (ld 2.40, arm-none-eabi).

A script defines most of the names a link needs (`__bss_start__`, `end`, `__exidx_start`, …:
ld's built-in script, or the user's -T script); those are read from the script
(weaklink.resolve.script). Measured with arm-none-eabi-ld 2.40 on a -T script that defines
nothing, ld itself still defines:

- `_GLOBAL_OFFSET_TABLE_`, as soon as a loaded object has a GOT-relative relocation in an
  allocated section (bfd/elf32-arm.c check_relocs creates the GOT and, with it, the symbol):
  R_ARM_GOTOFF32, R_ARM_BASE_PREL (R_ARM_GOTPC), R_ARM_GOT_BREL (R_ARM_GOT32),
  R_ARM_GOT_PREL and the TLS GOT forms (measured: all but R_ARM_TLS_GOTDESC and the TLS_CALL
  pair, which are taken from the same case list of check_relocs). The relocations are
  checked when every input has been opened, so a section --gc-sections removes later still counts, a discarded COMDAT copy does
  not, and an archive member counts only once extracted. GAS turns every reference to
  `_GLOBAL_OFFSET_TABLE_` into R_ARM_BASE_PREL: whatever references the name creates the GOT.
  The definition belongs to ld's "dynobj": the first loaded object with a relocation section
  applying to an allocated section (the --cref table lists that file as the definer, even when
  it never mentions the name). An object that defines the name too loses to ld's own
  definition, silently (measured: the symbol is at .got in either order, no error).
- `_TLS_MODULE_BASE_`, whenever a loaded object has a thread-local section, even an empty
  one and even when nothing references the name (bfd/elf32-arm.c always_size_sections: the
  base of TLS descriptors). It is defined in the output file: --cref lists the -o name.
- `__start_SEC` and `__stop_SEC`, when referenced and the link has an output section called
  SEC, a C identifier: an input section SEC that no script rule sends elsewhere (an orphan
  keeps its name), or a script's output section of that name (measured: with a -T rule that
  puts input section SEC into .data, both stay undefined).

Not modelled: `__ehdr_start`, which ld defines only when the ELF headers land in a loaded
segment (a question of layout; neither ld's built-in script nor a plain -T script loads
them, and then it stays undefined, as the model has it).
"""
from __future__ import annotations

from weaklink.read import elfstructs as S
from weaklink.resolve.gnu import rules as R
from weaklink.resolve.linker_defined import (GOT_SECTION, GOT_SYMBOL, SHF_TLS, START_STOP, TLS_BASE,
                                             got_owner, start_stop_section, start_stop_sections)


def define_got(state) -> None:
    """Define `_GLOBAL_OFFSET_TABLE_` when a GOT is needed (after every input is open)."""
    owner = got_owner(state.objects, state.dead)
    if owner is None:
        return
    table = state.table
    sym = table.get(GOT_SYMBOL)
    sym.notices.append(owner << 2 | R.N_DEF)
    table._own(sym, R.DEFINED, owner, 0, 0, 0, False)
    state.linker_defined[GOT_SYMBOL] = (owner, GOT_SECTION)


def cref_rows(state) -> dict[str, tuple[str, ...]]:
    """The --cref definers ld lists for its definitions in the output file (-o)."""
    return {name: (state.opts.output,) for name, (owner, _) in state.linker_defined.items()
            if owner < 0}


def define_tls_base(state) -> None:
    """`_TLS_MODULE_BASE_` in the output, when an input has a thread-local section."""
    for fid, obj in enumerate(state.objects):
        dead = state.dead.get(fid, frozenset())
        if any(sh.sh_flags & SHF_TLS and sh.sh_flags & S.SHF_ALLOC and i not in dead
               for i, sh in enumerate(obj.elf.shdrs)):
            sym = state.table.get(TLS_BASE)
            if sym.state not in (R.DEFINED, R.DEFWEAK):
                state.table._own(sym, R.DEFINED, -1, 0, 0, 0, False)
                sym.script_def = R.SCRIPT_NONE
                state.linker_defined[TLS_BASE] = (-1, None)
            return


def define_start_stop(state) -> None:
    """ldlang.c lang_init_start_stop / bfd_elf_define_start_stop: an undefined
    `__start_SEC` or `__stop_SEC` is defined by ld when the link has an output section SEC."""
    table = state.table
    sections = {n: start_stop_section(n) for n, sym in table.syms.items()
                if n.startswith(START_STOP) and sym.state in (R.UNDEF, R.UNDEFWEAK)}
    if not sections:
        return
    found = start_stop_sections(list(zip(state.files, state.objects)), state.scripts,
                                set(sections.values()))
    for n, sec in sections.items():
        if sec in found:
            table.assign(table.syms[n], 0)
            state.assigned_by[n] = ("script", None)

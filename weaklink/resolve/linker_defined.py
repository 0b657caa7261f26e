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
from weaklink.resolve import rules as R

GOT_SYMBOL = "_GLOBAL_OFFSET_TABLE_"
GOT_SECTION = ".got"
TLS_BASE = "_TLS_MODULE_BASE_"
SHF_TLS = 0x400
# AAELF32 relocation codes that make bfd/elf32-arm.c create the GOT
R_ARM_GOTOFF32, R_ARM_BASE_PREL, R_ARM_GOT_BREL = 24, 25, 26
R_ARM_TLS_GOTDESC, R_ARM_TLS_CALL, R_ARM_THM_TLS_CALL = 90, 91, 93
R_ARM_GOT_PREL, R_ARM_TLS_GD32, R_ARM_TLS_LDM32, R_ARM_TLS_IE32 = 96, 104, 105, 107
GOT_RELOCATIONS = (R_ARM_GOTOFF32, R_ARM_BASE_PREL, R_ARM_GOT_BREL, R_ARM_TLS_GOTDESC,
                   R_ARM_TLS_CALL, R_ARM_THM_TLS_CALL, R_ARM_GOT_PREL, R_ARM_TLS_GD32,
                   R_ARM_TLS_LDM32, R_ARM_TLS_IE32)
# bytes.translate table: a relocation type byte -> 1 for the GOT-making ones, else 0
_GOT_TYPE = bytes(int(t in GOT_RELOCATIONS) for t in range(256))
_REL_TYPES = (S.SHT_REL, S.SHT_RELA)


def _checked_relocations(obj, dead: frozenset) -> list:
    """The relocation sections (elf.Shdr) of an object that ld's check_relocs reads: those
    applying to an allocated section that is not a discarded COMDAT copy."""
    shdrs = obj.elf.shdrs
    n = len(shdrs)
    return [sh for sh in shdrs if sh.sh_type in _REL_TYPES and sh.sh_size and sh.sh_info < n
            and shdrs[sh.sh_info].sh_flags & S.SHF_ALLOC and sh.sh_info not in dead]


def _needs_got(obj, sections) -> bool:
    """Does one of these relocation sections hold a GOT-making type? The type is the low byte
    of r_info, byte 4 of each 8-byte REL (12-byte RELA) entry: read as a strided slice."""
    data = obj.elf.data
    for sh in sections:
        step = 8 if sh.sh_type == S.SHT_REL else 12
        end = sh.sh_offset + sh.sh_size // step * step
        if 1 in data[sh.sh_offset + 4:end:step].translate(_GOT_TYPE):
            return True
    return False


def got_owner(objects, dead: dict) -> int | None:
    """The file that owns ld's GOT (its dynobj), when a loaded object needs one; else None."""
    dynobj = None
    for fid, obj in enumerate(objects):
        sections = _checked_relocations(obj, dead.get(fid, frozenset()))
        if not sections:
            continue
        if dynobj is None:
            dynobj = fid
        if _needs_got(obj, sections):
            return dynobj
    return None


def define_got(state) -> None:
    """Define `_GLOBAL_OFFSET_TABLE_` when a GOT is needed (after every input is open)."""
    owner = got_owner(state.objects, state.dead)
    if owner is None:
        return
    table = state.table
    sym = table.get(GOT_SYMBOL)
    sym.notices.append(owner << 2 | R.N_DEF)
    table._own(sym, R.DEFINED, owner, 0, 0, 0, False)
    sym.script_def = R.SCRIPT_NONE
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
    wanted = [n for n in table.syms if n.startswith(("__start_", "__stop_"))
              and table.syms[n].state in (R.UNDEF, R.UNDEFWEAK)]
    if not wanted:
        return
    sections = {n: n[len("__start_"):] if n.startswith("__start_") else n[len("__stop_"):]
                for n in wanted}
    found = start_stop_sections(list(zip(state.files, state.objects)), state.scripts,
                                set(sections.values()))
    for n, sec in sections.items():
        if sec in found:
            table.assign(table.syms[n], 0)
            state.assigned_by[n] = ("script", None)


# -- ld.lld 16 ----------------------------------------------------------------------------------
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


def output_section(scripts, path: str, member: str | None, section: str) -> str:
    """The output section an input section goes to: the first script rule that matches it,
    else a section of its own name (an orphan keeps its name)."""
    from weaklink.resolve.script import rule_matches

    for sc in scripts:
        for rule in sc.rules:
            if rule_matches(rule, path, member, section):
                return rule.output
    return section


def start_stop_sections(objects, scripts, names) -> set[str]:
    """The C-identifier names among `names` that are output sections of the link."""
    from weaklink.resolve.gc import member_name

    outputs = {r.output for sc in scripts for r in sc.rules}
    if not names & outputs and not any(sec.name in names for _, obj in objects
                                       for sec in obj.section_table.sections):
        return set()
    out = set()
    for name, obj in objects:
        path, member = member_name(name)
        for sec in obj.section_table.sections:
            if sec.name in names or outputs & names:
                where = output_section(scripts, path, member, sec.name)
                if where in names:
                    out.add(where)
    return {n for n in out if n.isidentifier()}


def lld_reserve(state, scripts) -> list[tuple[str, str, str]]:
    """lld's own definitions (after script assignments, before relocations are scanned);
    returns the errors: (symbol, file, message) for an input that defines
    `_GLOBAL_OFFSET_TABLE_`, which lld reserves (measured: an error even when nothing
    references the name, and for an archive member once extracted)."""
    from weaklink.resolve.lld import rules as L

    table = state.table
    got = table.syms.get(GOT_SYMBOL)
    if got is not None and got.kind == L.DEFINED and got.file >= 0 and not got.script:
        name = state.files[got.file].name
        return [(GOT_SYMBOL, name, LLD_GOT_ERROR.format(file=name, name=GOT_SYMBOL))]
    sections = any(sc.rules for sc in scripts)
    wanted = [GOT_SYMBOL, *LLD_ALWAYS, *(() if sections else LLD_WITHOUT_SECTIONS)]
    start_stop = {n: n.split("_", 3)[-1] for n in table.syms
                  if n.startswith(("__start_", "__stop_"))}
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

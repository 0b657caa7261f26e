"""What both linkers need to know to define names of their own: when an input needs a GOT
(and which file owns it), and which `__start_SEC` / `__stop_SEC` sections a link has. Each
linker's rules for its own definitions: gnu/linker_defined.py, lld/linker_defined.py."""
from __future__ import annotations

from weaklink.read import elfstructs as S
from weaklink.resolve.gcgraph import member_name
from weaklink.resolve.script import rule_matches

START_STOP = ("__start_", "__stop_")
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


def start_stop_section(name: str) -> str:
    """SEC, for a `__start_SEC` or `__stop_SEC` name."""
    return name[len("__start_"):] if name.startswith("__start_") else name[len("__stop_"):]


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


def output_section(scripts, path: str, member: str | None, section: str) -> str:
    """The output section an input section goes to: the first script rule that matches it,
    else a section of its own name (an orphan keeps its name)."""
    for sc in scripts:
        for rule in sc.rules:
            if rule_matches(rule, path, member, section):
                return rule.output
    return section


def start_stop_sections(objects, scripts, names) -> set[str]:
    """The C-identifier names among `names` that are output sections of the link."""
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

"""COMDAT section groups, as both linkers treat them: the first group loaded with a signature
is kept, the sections of every later group with that signature are discarded (ELF gABI
"Section Groups"; bfd/elf.c _bfd_elf_setup_sections with ld's already_linked table, lld
ObjFile::initializeSections with symtab.comdatGroups). The discarded copies' symbols still
take part in resolution; each linker says what becomes of them."""
from __future__ import annotations


def discard_copies(obj, fid: int, kept: dict, dead: dict) -> frozenset:
    """Record `obj`'s groups in `kept` (signature -> file id of the kept group) and return
    the section indices of its discarded copies, also recorded in `dead` (file id -> them)."""
    groups = obj.comdat_groups
    if not groups:
        return frozenset()
    gone = set()
    for g in groups:
        if g.signature in kept:
            gone.update(g.sections)
        else:
            kept[g.signature] = fid
    gone = frozenset(gone)
    if gone:
        dead[fid] = gone
    return gone

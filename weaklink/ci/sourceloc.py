"""Where a symbol is defined in the source: file and line from DWARF, for the few symbols that
results name.

The defining compilation unit comes from weaklink.analyze.attribution (.debug_aranges for a
function, the DW_OP_addr bytes for a variable); only that unit's DIEs are walked
(weaklink.read.dwarf.sources.declared_at): the DIE that defines the symbol gives the file and
line of its declaration.
"""
from __future__ import annotations

from collections import namedtuple

from weaklink.analyze.attribution import Attribution
from weaklink.read import elfstructs as S
from weaklink.read.dwarf import DwarfError
from weaklink.read.image import Image


# file: as DWARF names it, joined to the unit's DW_AT_comp_dir when relative
SourceLocation = namedtuple("SourceLocation", "file line")


def locate(image: Image, names: list[str]) -> dict[str, SourceLocation]:
    """Source locations of the defined symbols called `names` (unknown ones are left out)."""
    attribution = Attribution(image)
    if attribution.dwarf is None:
        return {}
    out = {}
    for name in dict.fromkeys(names):
        hits = image.lookup(name)
        # Linker-script symbols (NOTYPE, size 0) share addresses with real objects.
        if not hits or hits[0].type not in (S.STT_OBJECT, S.STT_FUNC):
            continue
        try:
            where = _locate(attribution, hits[0])
        except DwarfError:      # unusual or corrupt DWARF: a result without a line, not an error
            where = None
        if where is not None:
            out[name] = where
    return out


def _locate(attribution: Attribution, sym) -> SourceLocation | None:
    offset = attribution.unit_offset(sym)
    if offset is None:
        return None
    hit = attribution.dwarf.sources.declared_at(offset, sym.address, sym.type == S.STT_FUNC)
    return None if hit is None else SourceLocation(*hit)

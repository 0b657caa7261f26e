"""Where a symbol is defined in the source: file and line from DWARF, for the few symbols that
results name.

The defining compilation unit comes from weaklink.analyze.attribution (.debug_aranges for a
function, the DW_OP_addr bytes for a variable); only that unit's DIEs are walked. The DIE that
defines the symbol is the DW_TAG_variable whose DW_AT_location is `DW_OP_addr <address>`, or the
DW_TAG_subprogram whose DW_AT_low_pc is the function's address; its DW_AT_decl_file and
DW_AT_decl_line (else those of the declaration it completes, DW_AT_specification) give the
place. File numbers index the unit's line-program file table: from 1 up to DWARF 4, from 0 in
DWARF 5 (DWARF 5, section 6.2.4, item 20).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from weaklink.analyze.attribution import DW_OP_addr, Attribution
from weaklink.read import elfstructs as S

_TAGS = ("DW_TAG_variable", "DW_TAG_subprogram")


@dataclass(frozen=True)
class SourceLocation:
    file: str          # as DWARF names it, joined to the unit's DW_AT_comp_dir when relative
    line: int


def locate(image_path: str, names: list[str]) -> dict[str, SourceLocation]:
    """Source locations of the defined symbols called `names` (unknown ones are left out)."""
    from weaklink.read.image import Image

    image = Image.from_path(image_path)
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
        except Exception:       # unusual or corrupt DWARF: a result without a line, not an error
            where = None
        if where is not None:
            out[name] = where
    return out


def _locate(attribution: Attribution, sym) -> SourceLocation | None:
    offset = attribution.unit_offset(sym)
    if offset is None:
        return None
    dwarf = attribution.dwarf
    cu = dwarf.get_CU_at(offset)
    die = next((d for d in cu.iter_DIEs() if d.tag in _TAGS and _defines(d, sym)), None)
    if die is None:
        return None
    for d in (die, _spec(die)):
        if d is not None and "DW_AT_decl_line" in d.attributes and "DW_AT_decl_file" in d.attributes:
            path = _file(dwarf, d.cu, d.attributes["DW_AT_decl_file"].value)
            if path:
                return SourceLocation(path, int(d.attributes["DW_AT_decl_line"].value))
    return None


def _defines(die, sym) -> bool:
    a = die.attributes
    if sym.type == S.STT_FUNC:
        low = a.get("DW_AT_low_pc")
        return die.tag == "DW_TAG_subprogram" and low is not None and \
            int(low.value) & ~1 == sym.address
    loc = a.get("DW_AT_location")
    if die.tag != "DW_TAG_variable" or loc is None or not isinstance(loc.value, list):
        return False
    v = loc.value
    return len(v) == 5 and v[0] == DW_OP_addr and int.from_bytes(bytes(v[1:5]), "little") \
        == sym.address


def _spec(die):
    for attr in ("DW_AT_specification", "DW_AT_abstract_origin"):
        if attr in die.attributes:
            return die.get_DIE_from_attribute(attr)
    return None


def _file(dwarf, cu, index: int) -> str | None:
    program = dwarf.line_program_for_CU(cu)
    if program is None:
        return None
    version = program.header["version"]
    files = program.header["file_entry"]
    k = index if version >= 5 else index - 1
    if not 0 <= k < len(files):
        return None
    entry = files[k]
    name = _text(entry.name)
    dirs = program.header["include_directory"]
    comp_dir = _text(cu.get_top_DIE().attributes["DW_AT_comp_dir"].value) \
        if "DW_AT_comp_dir" in cu.get_top_DIE().attributes else ""
    d = entry.dir_index if version >= 5 else entry.dir_index - 1
    folder = _text(dirs[d]) if 0 <= d < len(dirs) else comp_dir
    path = os.path.join(folder, name) if folder else name
    if not os.path.isabs(path) and comp_dir:
        path = os.path.join(comp_dir, path)
    return os.path.normpath(path)


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)

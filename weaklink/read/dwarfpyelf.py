"""The pyelftools side of weaklink.read.dwarf, for the DWARF the direct reader
(weaklink.read.dwarfunits) leaves alone: a compressed .debug_info, units without
.debug_aranges, unusual forms. Callers run these under Dwarf.guard (damage: one DwarfError)."""
from __future__ import annotations

import os

DW_OP_addr = 0x03
_SCOPES = ("DW_TAG_namespace", "DW_TAG_structure_type", "DW_TAG_class_type")


def variables(dwarf) -> dict[int, str]:
    """DW_OP_addr address -> unit name, for every variable defined at unit, namespace or
    class scope (pyelftools walks every DIE: only for what the direct reader cannot read)."""
    out: dict[int, str] = {}
    for cu in dwarf.iter_CUs():
        top = cu.get_top_DIE()
        unit = attr_text(top, "DW_AT_name")
        for die in _scope_dies(top):
            addr = _location_address(die)
            if addr is not None and unit:
                out.setdefault(addr, unit)
    return out


def pc_ranges(top, cu, ranges):
    """A CU's code ranges: DW_AT_ranges (-ffunction-sections), else low_pc/high_pc.
    Entries with is_absolute=False are offsets from the CU's DW_AT_low_pc (DWARF 4 base)."""
    attrs = top.attributes
    low = attrs["DW_AT_low_pc"].value if "DW_AT_low_pc" in attrs else 0
    if "DW_AT_ranges" in attrs and ranges is not None:
        for e in ranges.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu):
            if hasattr(e, "begin_offset"):
                base = 0 if getattr(e, "is_absolute", False) else low
                yield base + e.begin_offset, base + e.end_offset
    elif "DW_AT_high_pc" in attrs:
        high = attrs["DW_AT_high_pc"]
        # DWARF 4+: a constant-class DW_AT_high_pc is a length from DW_AT_low_pc.
        yield low, high.value if high.form == "DW_FORM_addr" else low + high.value


def attr_text(die, name: str) -> str | None:
    attr = die.attributes.get(name)
    return None if attr is None else _decoded(attr.value)


def _scope_dies(die):
    for child in die.iter_children():
        if child.tag == "DW_TAG_variable":
            yield child
        elif child.tag in _SCOPES:
            yield from _scope_dies(child)


def _location_address(die) -> int | None:
    loc = die.attributes.get("DW_AT_location")
    if loc is None or not isinstance(loc.value, list) or len(loc.value) != 5:
        return None
    if loc.value[0] != DW_OP_addr:
        return None
    return int.from_bytes(bytes(loc.value[1:5]), "little")


def call_sites(cu, callee: str) -> list[tuple[int, dict[int, bytes]]]:
    """(call pc, {DW_OP_reg* byte: DW_AT_call_value bytes}) of the call sites of `callee` in
    the unit `cu` (see weaklink.read.dwarf.Dwarf.call_sites)."""
    out = []
    for die in cu.iter_DIEs():
        if die.tag not in ("DW_TAG_call_site", "DW_TAG_GNU_call_site"):
            continue
        if "DW_AT_call_origin" not in die.attributes or _origin_name(die) != callee:
            continue
        values = {}
        for param in die.iter_children():
            loc = param.attributes.get("DW_AT_location")
            val = (param.attributes.get("DW_AT_call_value")
                   or param.attributes.get("DW_AT_GNU_call_site_value"))
            if loc is None or val is None or not isinstance(loc.value, list) \
                    or len(loc.value) != 1 or not isinstance(val.value, list):
                continue
            values[loc.value[0]] = bytes(val.value)
        pc = die.attributes.get("DW_AT_call_return_pc") or die.attributes.get("DW_AT_low_pc")
        out.append(((pc.value - 4) if pc else 0, values))
    return out


def _origin_name(die) -> str | None:
    target = die.get_DIE_from_attribute("DW_AT_call_origin")
    for _ in range(4):         # a declaration may point on to its specification
        if "DW_AT_name" in target.attributes:
            return attr_text(target, "DW_AT_name")
        target = _spec(target)
        if target is None:
            return None
    return None


def declaration(dwarf, offset: int, address: int, is_function: bool) -> tuple[str, int] | None:
    """(file, line) where the unit at `offset` defines the function or variable at `address`:
    the DW_TAG_subprogram whose DW_AT_low_pc is the address, or the DW_TAG_variable whose
    DW_AT_location is `DW_OP_addr <address>`; its DW_AT_decl_file and DW_AT_decl_line, else
    those of the declaration it completes (DW_AT_specification / DW_AT_abstract_origin)."""
    cu = dwarf.get_CU_at(offset)
    die = next((d for d in cu.iter_DIEs() if _defines(d, address, is_function)), None)
    if die is None:
        return None
    for d in (die, _spec(die)):
        if d is not None and "DW_AT_decl_line" in d.attributes and "DW_AT_decl_file" in d.attributes:
            path = _file(dwarf, d.cu, d.attributes["DW_AT_decl_file"].value)
            if path:
                return path, int(d.attributes["DW_AT_decl_line"].value)
    return None


def _defines(die, address: int, is_function: bool) -> bool:
    a = die.attributes
    if is_function:
        low = a.get("DW_AT_low_pc")
        return die.tag == "DW_TAG_subprogram" and low is not None and \
            int(low.value) & ~1 == address
    return die.tag == "DW_TAG_variable" and _location_address(die) == address


def _spec(die):
    for attr in ("DW_AT_specification", "DW_AT_abstract_origin"):
        if attr in die.attributes:
            return die.get_DIE_from_attribute(attr)
    return None


def _file(dwarf, cu, index: int) -> str | None:
    """File `index` of the unit's line-program file table, as a path joined to its directory
    and to the unit's DW_AT_comp_dir when relative. File numbers count from 1 up to DWARF 4,
    from 0 in DWARF 5 (DWARF 5 section 6.2.4, item 20)."""
    program = dwarf.line_program_for_CU(cu)
    if program is None:
        return None
    version = program.header["version"]
    files = program.header["file_entry"]
    k = index if version >= 5 else index - 1
    if not 0 <= k < len(files):
        return None
    entry = files[k]
    name = _decoded(entry.name)
    dirs = program.header["include_directory"]
    top = cu.get_top_DIE().attributes
    comp_dir = _decoded(top["DW_AT_comp_dir"].value) if "DW_AT_comp_dir" in top else ""
    d = entry.dir_index if version >= 5 else entry.dir_index - 1
    folder = _decoded(dirs[d]) if 0 <= d < len(dirs) else comp_dir
    path = os.path.join(folder, name) if folder else name
    if not os.path.isabs(path) and comp_dir:
        path = os.path.join(comp_dir, path)
    return os.path.normpath(path)


def _decoded(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)

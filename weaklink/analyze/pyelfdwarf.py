"""The pyelftools side of attribution, for the DWARF the direct reader (weaklink.read.dwarfunits)
leaves alone: a compressed .debug_info, units without .debug_aranges, unusual name forms."""
from __future__ import annotations

DW_OP_addr = 0x03
_SCOPES = ("DW_TAG_namespace", "DW_TAG_structure_type", "DW_TAG_class_type")


def variables(dwarf) -> dict[int, str]:
    """DW_OP_addr address -> unit name, for every variable defined at unit, namespace or
    class scope (pyelftools walks every DIE: only for what the direct reader cannot read)."""
    out: dict[int, str] = {}
    try:
        for cu in dwarf.iter_CUs():
            top = cu.get_top_DIE()
            unit = attr_text(top, "DW_AT_name")
            for die in _scope_dies(top):
                addr = _location_address(die)
                if addr is not None and unit:
                    out.setdefault(addr, unit)
    except Exception:       # corrupt DWARF: attribution is best effort, never fatal
        pass
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
    if attr is None:
        return None
    value = attr.value
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


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

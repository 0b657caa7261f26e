"""One image's (or object's) DWARF: the one place weaklink reads debug information.

Every question reads only the units it needs, from the sections it needs (never the image's
other bytes: a mapped image of 60-140 MB stays mapped):

- `unit_names()`: the name of every compilation unit (each unit's first DIE);
- `variable_units(name)`: the units with a DW_TAG_variable called `name` (its declaration or
  definition, at any depth);
- `call_sites(callee)`: the DW_TAG_call_site DIEs whose DW_AT_call_origin names `callee`, with
  their parameters' register locations and DW_AT_call_value expressions;
- `units` (weaklink.read.dwarfunits.UnitNames), `aranges()`: unit names, scans and ranges for
  attribution;
- `pyelftools()`: pyelftools' DWARFInfo, for what the direct reader leaves alone (compressed
  sections, DWARF 64, unusual forms) and for line programs.

A name question starts with a cheap pass: the unit can only mention `name` when its DIEs hold
the .debug_str offset of a string `name\\0` (DW_FORM_strp; ld merges strings, so a name may be
the tail of a longer one) or the string itself (DW_FORM_string). Only the units holding such
bytes are walked: the newlib and libstdc++ units of an image cost one bytes.find each.

Damaged DWARF is one DwarfError (an InputError: the file, the offset, what was expected);
pyelftools' many exception types are turned into it here, and nowhere else.
"""
from __future__ import annotations

import contextlib
import os
import struct
import weakref
from collections import namedtuple
from functools import cached_property

from weaklink.errors import InputError
from weaklink.read import dwarfpyelf
from weaklink.read.dwarfforms import BLOCKS, DW_FORM_addr, uleb
from weaklink.read.dwarfunits import UNKNOWN, UnitNames, read_aranges

SHF_COMPRESSED = 0x800
DW_TAG_variable, DW_TAG_subprogram = 0x34, 0x2E
DW_TAG_call_site, DW_TAG_GNU_call_site = 0x48, 0x4109
DW_AT_name, DW_AT_location, DW_AT_low_pc = 0x03, 0x02, 0x11
DW_AT_abstract_origin, DW_AT_specification = 0x31, 0x47
DW_AT_linkage_name, DW_AT_MIPS_linkage_name = 0x6E, 0x2007
DW_AT_call_return_pc, DW_AT_call_value, DW_AT_call_origin = 0x7D, 0x7E, 0x7F
DW_AT_GNU_call_site_value = 0x2111
_NAME_ATTRS = (DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name)

# A call site: the address of its call (DW_AT_call_return_pc - 4, 0 when not given) and the
# register -> DW_AT_call_value expression of each parameter located in a register.
CallSite = namedtuple("CallSite", "call_pc values")


_OPEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class DwarfError(InputError):
    """Debug information this reader cannot read: damaged, or in a form it does not know."""


class _Unreadable(Exception):
    """A unit the direct reader cannot walk (a form or layout it does not know): pyelftools
    reads it instead."""


def dwarf_of(elf) -> "Dwarf":
    """The one Dwarf reader of an ElfFile: its sections are read once, whoever asks."""
    dwarf = _OPEN.get(elf)
    if dwarf is None:
        dwarf = _OPEN[elf] = Dwarf(elf)
    return dwarf


class Dwarf:
    """The DWARF of one ElfFile (weaklink.read.elf), read lazily."""

    def __init__(self, elf):
        self.elf = elf
        self.name = elf.name
        self._sites: dict[str, tuple[CallSite, ...]] = {}   # callee -> its call sites

    # -- sections ---------------------------------------------------------------------------
    def _section(self, name: str) -> bytes | None:
        """A section's bytes; None when absent or compressed (pyelftools reads those)."""
        i = self.elf.find_section(name)
        if i is None or self.elf.shdrs[i].sh_flags & SHF_COMPRESSED:
            return None
        return self.elf.section_bytes(i)

    @cached_property
    def present(self) -> bool:
        return self.elf.find_section(".debug_info") is not None

    @cached_property
    def units(self) -> UnitNames | None:
        """The direct reader of .debug_info; None when a section it needs is compressed or
        .debug_info / .debug_abbrev is absent."""
        parts = []
        for name in (".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str"):
            i = self.elf.find_section(name)
            if i is not None and self.elf.shdrs[i].sh_flags & SHF_COMPRESSED:
                return None
            parts.append(b"" if i is None else self.elf.section_bytes(i))
        return UnitNames(*parts) if parts[0] and parts[1] else None

    def aranges(self) -> list[tuple[int, int, int]] | None:
        """.debug_aranges as (start, end, unit offset) rows; None when absent or unusual."""
        data = self._section(".debug_aranges")
        return None if data is None else read_aranges(data)

    @contextlib.contextmanager
    def guard(self, what: str = "DWARF"):
        """Turn whatever pyelftools raises on damaged input into one DwarfError."""
        try:
            yield
        except (MemoryError, InputError, KeyboardInterrupt):
            raise
        except Exception as exc:    # pyelftools reports corrupt DWARF with many exception types
            raise DwarfError(self.name, f"unreadable {what}: {type(exc).__name__}: {exc}") \
                from None

    def pyelftools(self, *, relocate: bool = True):
        """pyelftools' DWARFInfo over the file in place (a stream, no copy), or None when the
        file has no DWARF; DwarfError when it cannot be opened."""
        key = "_pyelf_relocated" if relocate else "_pyelf_raw"
        if key not in self.__dict__:
            # imported here, once: its 40 ms are paid only by the files that need the fallback
            from elftools.elf.elffile import ELFFile
            with self.guard():
                elf = ELFFile(self.elf.stream())
                self.__dict__[key] = elf.get_dwarf_info(relocate_dwarf_sections=relocate) \
                    if elf.has_dwarf_info() else None
        return self.__dict__[key]

    def declared_at(self, offset: int, address: int, is_function: bool) -> tuple[str, int] | None:
        """(file, line) where the unit at `offset` defines the function or variable at
        `address` (weaklink.read.dwarfpyelf.declaration); None when it does not say."""
        dwarf = self.pyelftools()
        if dwarf is None:
            return None
        with self.guard():
            return dwarfpyelf.declaration(dwarf, offset, address, is_function)

    # -- units --------------------------------------------------------------------------------
    @cached_property
    def _unit_starts(self) -> list[int]:
        names = self.units
        if names is not None:
            return names.unit_starts
        dwarf = self.pyelftools()
        if dwarf is None:
            return []
        with self.guard():
            return [cu.cu_offset for cu in dwarf.iter_CUs()]

    def unit_name(self, offset: int) -> str | None:
        """DW_AT_name of the unit at `offset` (None when it has none)."""
        names = self.units
        if names is not None:
            name = names.unit_name(offset)
            if name is not UNKNOWN:
                return name
        dwarf = self.pyelftools()
        if dwarf is None:
            return None
        with self.guard():
            return dwarfpyelf.attr_text(dwarf.get_CU_at(offset).get_top_DIE(), "DW_AT_name")

    def unit_file(self, offset: int, index: int) -> tuple[str, str] | None:
        """(file `index` of the line-number program of the unit at `offset`, the unit's own
        source file: DW_AT_name), both as paths joined to their directories and the unit's
        DW_AT_comp_dir; None when the unit does not say. pyelftools reads only the unit's
        first DIE and its line-program header."""
        dwarf = self.pyelftools()
        if dwarf is None:
            return None
        with self.guard():
            cu = dwarf.get_CU_at(offset)
            top = cu.get_top_DIE()
            name = dwarfpyelf.attr_text(top, "DW_AT_name")
            path = dwarfpyelf._file(dwarf, cu, index)
            if not name or not path:
                return None
            comp_dir = dwarfpyelf.attr_text(top, "DW_AT_comp_dir") or ""
            return os.path.normpath(path), os.path.normpath(os.path.join(comp_dir, name))

    def unit_names(self) -> list[str]:
        """Every unit's name, "?" for a unit without one, in .debug_info order."""
        if not self.present:
            return []
        return [self.unit_name(cu) or "?" for cu in self._unit_starts]

    def _candidates(self, name: str) -> list[int]:
        """The units that may mention `name`: those holding the .debug_str offset of a
        `name\\0` or the string itself, in .debug_info order. Every unit when the strings
        may sit elsewhere (DW_FORM_strx through .debug_str_offsets, or the direct reader
        cannot read the sections)."""
        names = self.units
        if names is None or self.elf.find_section(".debug_str_offsets") is not None:
            return list(self._unit_starts)
        needle, found = name.encode() + b"\0", set()
        needles = [needle] + [o.to_bytes(4, "little") for o in _find_all(names.strs, needle)]
        for n in needles:
            found.update(names.unit_of(hit) for hit in _find_all(names.info, n))
        return sorted(found)

    # -- variables ----------------------------------------------------------------------------
    def variable_units(self, name: str) -> list[str]:
        """Names of the units with a DW_TAG_variable called `name` (DW_AT_linkage_name,
        DW_AT_MIPS_linkage_name or DW_AT_name), in .debug_info order."""
        if not self.present:
            return []
        out = []
        for cu in self._candidates(name):
            try:
                with self._damage(cu):
                    hit = any(tag == DW_TAG_variable
                              and any(self._text(attrs.get(a)) == name for a in _NAME_ATTRS)
                              for _, tag, attrs, _ in self._dies(cu))
            except _Unreadable:
                hit = name in self._pyelf_variable_names(cu)
            unit = self.unit_name(cu) or "?"
            if hit and unit not in out:
                out.append(unit)
        return out

    def _pyelf_variable_names(self, cu: int) -> set[str]:
        dwarf = self.pyelftools()
        with self.guard():
            unit = dwarf.get_CU_at(cu)
            return {dwarfpyelf.attr_text(die, a) for die in unit.iter_DIEs()
                    if die.tag == "DW_TAG_variable"
                    for a in ("DW_AT_linkage_name", "DW_AT_MIPS_linkage_name", "DW_AT_name")}

    # -- call sites ---------------------------------------------------------------------------
    def call_sites(self, callee: str) -> list[CallSite]:
        """The call sites of `callee` DWARF describes (optimised -g builds), in .debug_info
        order. A call site's DW_AT_call_origin is a declaration in its own unit, or with
        DW_FORM_ref_addr (LTO) one in another unit: the units holding that DIE's offset are
        walked too. Read once per callee: check asks for ethosu_init's twice (the NPU base
        that chooses the SoC, the fast memory)."""
        if callee not in self._sites:
            self._sites[callee] = tuple(self._read_call_sites(callee))
        return list(self._sites[callee])

    def _read_call_sites(self, callee: str) -> list[CallSite]:
        if not self.present:
            return []
        units = self._candidates(callee)
        if self.units is not None:
            more = set()
            for cu in units:
                with self._damage(cu):
                    named = self._named_subprograms(cu, callee)
                for die in named:
                    more.update(self.units.unit_of(hit) for hit in
                                _find_all(self.units.info, die.to_bytes(4, "little")))
            units = sorted(set(units) | more)
        out = []
        for cu in units:
            try:
                with self._damage(cu):
                    out += self._call_sites(cu, callee)
            except _Unreadable:
                out += self._pyelf_call_sites(cu, callee)
        return out

    def _named_subprograms(self, cu: int, name: str) -> list[int]:
        try:
            return [start for start, tag, attrs, _ in self._dies(cu)
                    if tag == DW_TAG_subprogram and self._text(attrs.get(DW_AT_name)) == name]
        except _Unreadable:
            return []

    def _call_sites(self, cu: int, callee: str) -> list[CallSite]:
        sites: dict[int, CallSite] = {}
        for start, tag, attrs, parent in self._dies(cu):
            if tag in (DW_TAG_call_site, DW_TAG_GNU_call_site):
                origin = attrs.get(DW_AT_call_origin)
                if origin is None or self._origin_name(cu, origin) != callee:
                    continue
                pc = attrs.get(DW_AT_call_return_pc) or attrs.get(DW_AT_low_pc)
                sites[start] = CallSite(self._address(cu, pc) - 4 if pc else 0, {})
            elif parent in sites:
                loc = self._block(attrs.get(DW_AT_location))
                val = self._block(attrs.get(DW_AT_call_value)
                                  or attrs.get(DW_AT_GNU_call_site_value))
                if loc is not None and val is not None and len(loc) == 1:
                    sites[parent].values[loc[0]] = val
        return list(sites.values())

    def _origin_name(self, cu: int, attr) -> str | None:
        """The DW_AT_name of the DIE a call site's origin points at, or of the declaration
        that DIE completes (DW_AT_specification / DW_AT_abstract_origin)."""
        for _ in range(4):
            target = self.units._reference(self.units._unit(cu), *attr[:2])
            if target is None:
                raise _Unreadable
            cu = self.units.unit_of(target)
            unit = self.units._unit(cu)
            if unit is None:
                raise _Unreadable
            ab, end, attrs = self.units._die(unit, target)
            if ab is None:
                return None
            if end is None:
                raise _Unreadable
            if DW_AT_name in attrs:
                return self._text(attrs[DW_AT_name])
            attr = attrs.get(DW_AT_specification) or attrs.get(DW_AT_abstract_origin)
            if attr is None:
                return None
        return None

    def _pyelf_call_sites(self, cu: int, callee: str) -> list[CallSite]:
        dwarf = self.pyelftools()
        with self.guard():
            return [CallSite(*site) for site in dwarfpyelf.call_sites(dwarf.get_CU_at(cu), callee)]

    # -- the direct walk ----------------------------------------------------------------------
    @contextlib.contextmanager
    def _damage(self, cu: int):
        """A value that runs past its section (a string, a block, an entry) or a walk that
        does not end: one DwarfError naming the unit."""
        try:
            yield
        except (IndexError, ValueError, struct.error, RecursionError):
            raise self._error(cu, "a DWARF unit whose entries, strings and blocks end "
                              "inside their sections") from None

    def _error(self, at: int, expected: str) -> DwarfError:
        """DwarfError at .debug_info offset `at` (reported as a file offset)."""
        i = self.elf.find_section(".debug_info")
        return DwarfError(self.name, f"damaged .debug_info (+{at:#x}): expected {expected}",
                          self.elf.shdrs[i].sh_offset + at)

    def _dies(self, cu: int):
        """(offset, tag, attributes, parent offset) of every DIE of the unit at `cu`, in
        order. _Unreadable for a unit the direct reader does not know how to walk;
        DwarfError for a damaged one."""
        names = self.units
        if names is None:
            raise _Unreadable
        unit = names._unit(cu)
        if unit is None:
            raise _Unreadable
        pos, parents = unit.first_die, []
        while pos < unit.end:
            start = pos
            ab, pos, attrs = names._die(unit, pos)
            if attrs is None:
                raise self._error(start, "an abbreviation code of the unit's table")
            if pos is None:
                raise _Unreadable
            if ab is None:                       # the null entry closing a sibling list
                if parents:
                    parents.pop()
                continue
            yield start, ab.tag, attrs, parents[-1] if parents else None
            if ab.children:
                parents.append(start)

    def _text(self, attr) -> str | None:
        if attr is None:
            return None
        text = self.units._text(*attr[:2])
        if text is UNKNOWN:
            raise _Unreadable
        return text

    def _address(self, cu: int, attr) -> int:
        form, pos = attr[:2]
        if form != DW_FORM_addr:
            raise _Unreadable
        size = self.units._unit(cu).address_size
        return int.from_bytes(self.units.info[pos:pos + size], "little")

    def _block(self, attr) -> bytes | None:
        """The bytes of an exprloc or block attribute; None for other forms (a location
        list is no single register)."""
        if attr is None or attr[0] not in BLOCKS:
            return None
        form, pos, info = attr[0], attr[1], self.units.info
        size = BLOCKS[form]
        if size is None:
            length, pos = uleb(info, pos)
        else:
            length, pos = int.from_bytes(info[pos:pos + size], "little"), pos + size
        if pos + length > len(info):
            raise IndexError("block past the end")
        return bytes(info[pos:pos + length])


def _find_all(data: bytes, needle: bytes) -> list[int]:
    out, at = [], data.find(needle)
    while at >= 0:
        out.append(at)
        at = data.find(needle, at + 1)
    return out


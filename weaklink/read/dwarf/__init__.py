"""One image's (or object's) DWARF: the one place weaklink reads debug information.

Every question reads only the units it needs, from the sections it needs (never the image's
other bytes: a mapped image of 60-140 MB stays mapped):

- `unit_names()`, `unit_name(offset)`: the name of every compilation unit, of one;
- `variable_units(name)`: the units with a DW_TAG_variable called `name` (its declaration or
  definition, at any depth);
- `call_sites(callee)`: the DW_TAG_call_site DIEs whose DW_AT_call_origin names `callee`, with
  the constant values of their parameters located in registers;
- `addresses` (weaklink.read.dwarf.addresses): which unit describes an address, what DWARF
  says of the function at an address;
- `sources` (weaklink.read.dwarf.sources): a unit's line table and files, where a definition
  is declared, the line rows and global variables of every unit (lld's source locations).

The layers under it: structs.py (the numbers), forms.py (encodings, abbreviations,
expressions), units.py (units and DIEs), scan.py (file-scope walks), lines.py (line-number
programs), addresses.py, sources.py. A section compressed with zlib (SHF_COMPRESSED,
`gcc -gz`) is read decompressed.

A name question starts with a cheap pass: the unit can only mention `name` when its DIEs hold
the .debug_str offset of a string `name\\0` (DW_FORM_strp; ld merges strings, so a name may be
the tail of a longer one) or the string itself (DW_FORM_string). Only the units holding such
bytes are walked: the newlib and libstdc++ units of an image cost one bytes.find each.

Damaged DWARF, or a form this reader does not know, is one DwarfError (an InputError: the
file, the offset, what was expected).
"""
from __future__ import annotations

import contextlib
import struct
import weakref
import zlib
from collections import namedtuple
from functools import cached_property

from weaklink.read import elfstructs as S
from weaklink.read.dwarf.addresses import Addresses
from weaklink.read.dwarf.forms import constant
from weaklink.read.dwarf.scan import Scans
from weaklink.read.dwarf.sources import Sources
from weaklink.read.dwarf.structs import (DW_AT_abstract_origin, DW_AT_call_origin,
                                         DW_AT_call_return_pc, DW_AT_call_value,
                                         DW_AT_GNU_call_site_value, DW_AT_linkage_name,
                                         DW_AT_location, DW_AT_low_pc, DW_AT_MIPS_linkage_name,
                                         DW_AT_name, DW_AT_specification, DW_OP_reg0,
                                         DW_OP_reg31, DW_TAG_call_site, DW_TAG_GNU_call_site,
                                         DW_TAG_subprogram, DW_TAG_variable)
from weaklink.read.dwarf.units import DAMAGE, UNKNOWN, DebugInfo, DwarfError, Unreadable

_NAME_ATTRS = (DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name)

# A call site: the address of its call (DW_AT_call_return_pc - 4, 0 when not given) and the
# register -> value of each parameter located in a register (DW_OP_reg0-31): its
# DW_AT_call_value when that is a constant expression, else None.
CallSite = namedtuple("CallSite", "call_pc values")
_OPEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
        self._names: dict[int, str | None] = {}

    # -- sections -----------------------------------------------------------------------------
    def section(self, name: str) -> bytes | None:
        """A section's bytes, decompressed; None when absent."""
        i = self.elf.find_section(name)
        if i is None:
            return None
        data = self.elf.section_bytes(i)
        if not self.elf.shdrs[i].sh_flags & S.SHF_COMPRESSED:
            return data
        where = self.elf.shdrs[i].sh_offset
        if len(data) < S.CHDR_SIZE or struct.unpack_from("<I", data)[0] != S.ELFCOMPRESS_ZLIB:
            raise DwarfError(self.name, f"{name} compressed other than with zlib "
                             "(expected ch_type 1, ELFCOMPRESS_ZLIB)", where)
        try:
            out = zlib.decompress(data[S.CHDR_SIZE:])
        except zlib.error as exc:
            raise DwarfError(self.name, f"{name}: damaged zlib stream ({exc})", where) from None
        if len(out) != struct.unpack_from("<I", data, 4)[0]:
            raise DwarfError(self.name, f"{name}: decompressed size {len(out)}, expected the "
                             f"header's ch_size", where + 4)
        return out

    @cached_property
    def present(self) -> bool:
        return self.elf.find_section(".debug_info") is not None

    @cached_property
    def info(self) -> DebugInfo | None:
        """The units of .debug_info; None when it or .debug_abbrev is absent or empty."""
        parts = [self.section(n) or b"" for n in (".debug_info", ".debug_abbrev",
                                                   ".debug_str", ".debug_line_str")]
        return DebugInfo(*parts) if parts[0] and parts[1] else None

    @cached_property
    def scans(self) -> Scans | None:
        return None if self.info is None else Scans(self.info)

    @cached_property
    def addresses(self) -> Addresses | None:
        """Address -> unit questions (weaklink.read.dwarf.addresses); None without units."""
        info = self.info
        return None if info is None else Addresses(info, self.scans, self.section,
                                                   self.elf.shdrs)

    @cached_property
    def sources(self) -> Sources:
        """Line tables and declarations (weaklink.read.dwarf.sources)."""
        return Sources(self)

    @contextlib.contextmanager
    def damage(self, cu: int):
        """A value that runs past its section (a string, a block, an entry), a walk that does
        not end or a form this reader does not know: one DwarfError naming where."""
        try:
            yield
        except Unreadable as exc:
            raise self.error(".debug_info", exc.at, exc.expected) from None
        except DAMAGE:
            raise self.error(".debug_info", cu, "a DWARF unit whose entries, strings and "
                             "blocks end inside their sections") from None

    def error(self, section: str, at: int, expected: str) -> DwarfError:
        """DwarfError at offset `at` of `section` (reported as a file offset, or the
        section's when it is compressed)."""
        sh = self.elf.shdrs[self.elf.find_section(section)]
        packed = sh.sh_flags & S.SHF_COMPRESSED
        return DwarfError(self.name, f"damaged {section} (+{at:#x}"
                          f"{' decompressed' if packed else ''}): expected {expected}",
                          sh.sh_offset + (0 if packed else at))

    # -- units --------------------------------------------------------------------------------
    def unit_offsets(self) -> list[int]:
        return [] if self.info is None else self.info.unit_starts

    def unit_name(self, offset: int) -> str | None:
        """DW_AT_name of the unit at `offset`; None when it has none or cannot be read."""
        if offset not in self._names:
            name = self.info.unit_name(offset) if self.info is not None else None
            self._names[offset] = None if name is UNKNOWN else name
        return self._names[offset]

    def unit_names(self) -> list[str]:
        """Every unit's name, "?" for a unit without one, in .debug_info order."""
        return [self.unit_name(cu) or "?" for cu in self.unit_offsets()]

    def _candidates(self, name: str) -> list[int]:
        """The units that may mention `name`: those holding the .debug_str offset of a
        `name\\0` or the string itself, in .debug_info order. Every unit when the strings
        may sit elsewhere (DW_FORM_strx through .debug_str_offsets)."""
        info = self.info
        if info is None or self.elf.find_section(".debug_str_offsets") is not None:
            return list(self.unit_offsets())
        needle, found = name.encode() + b"\0", set()
        needles = [needle] + [o.to_bytes(4, "little") for o in _find_all(info.strs, needle)]
        for n in needles:
            found.update(info.unit_of(hit) for hit in _find_all(info.info, n))
        return sorted(found)

    def text(self, cu: int, attr) -> str | None:
        if attr is None:
            return None
        text = self.info.text(self.info.unit(cu), attr)
        if text is UNKNOWN:
            raise Unreadable(attr[1], "a string form this reader knows")
        return text

    # -- variables ----------------------------------------------------------------------------
    def variable_units(self, name: str) -> list[str]:
        """Names of the units with a DW_TAG_variable called `name` (DW_AT_linkage_name,
        DW_AT_MIPS_linkage_name or DW_AT_name), in .debug_info order."""
        out = []
        for cu in self._candidates(name):
            with self.damage(cu):
                hit = any(tag == DW_TAG_variable
                          and any(self.text(cu, attrs.get(a)) == name for a in _NAME_ATTRS)
                          for _, tag, attrs, _ in self.info.dies(cu))
            unit = self.unit_name(cu) or "?"
            if hit and unit not in out:
                out.append(unit)
        return out

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
        """Each candidate unit is walked once, for its call sites and for the subprograms
        named `callee`; the units that hold such a subprogram's offset are walked after."""
        info, found, named = self.info, {}, []
        for cu in self._candidates(callee):
            with self.damage(cu):
                found[cu] = self._call_sites(cu, callee, named)
        more = {info.unit_of(hit) for die in named
                for hit in _find_all(info.info, die.to_bytes(4, "little"))}
        for cu in sorted(more - found.keys()):
            with self.damage(cu):
                found[cu] = self._call_sites(cu, callee, [])
        return [site for cu in sorted(found) for site in found[cu]]

    def _call_sites(self, cu: int, callee: str, named: list[int]) -> list[CallSite]:
        """The unit's call sites of `callee`; its subprograms named `callee` go to `named`."""
        info, sites = self.info, {}
        for start, tag, attrs, parent in info.dies(cu):
            if tag == DW_TAG_subprogram and self.text(cu, attrs.get(DW_AT_name)) == callee:
                named.append(start)
            elif tag in (DW_TAG_call_site, DW_TAG_GNU_call_site):
                origin = attrs.get(DW_AT_call_origin)
                if origin is None or self._origin_name(cu, origin) != callee:
                    continue
                pc = attrs.get(DW_AT_call_return_pc) or attrs.get(DW_AT_low_pc)
                address = None if pc is None else info.address(info.unit(cu), pc)
                if pc is not None and address is None:
                    raise Unreadable(pc[1], "a call site's DW_FORM_addr")
                sites[start] = CallSite(0 if pc is None else address - 4, {})
            elif parent in sites:
                loc = info.block(attrs.get(DW_AT_location))
                val = info.block(attrs.get(DW_AT_call_value)
                                 or attrs.get(DW_AT_GNU_call_site_value))
                if loc is not None and val is not None and len(loc) == 1 \
                        and DW_OP_reg0 <= loc[0] <= DW_OP_reg31:
                    sites[parent].values[loc[0] - DW_OP_reg0] = constant(val)
        return list(sites.values())

    def _origin_name(self, cu: int, attr) -> str | None:
        """The DW_AT_name of the DIE a call site's origin points at, or of the declaration
        that DIE completes (DW_AT_specification / DW_AT_abstract_origin)."""
        for _ in range(4):
            attrs, cu = self.info.die_at(self.info.reference(self.info.unit(cu), attr), attr[1])
            if attrs is None:
                return None
            if DW_AT_name in attrs:
                return self.text(cu, attrs[DW_AT_name])
            attr = attrs.get(DW_AT_specification) or attrs.get(DW_AT_abstract_origin)
            if attr is None:
                return None
        return None


def _find_all(data: bytes, needle: bytes) -> list[int]:
    out, at = [], data.find(needle)
    while at >= 0:
        out.append(at)
        at = data.find(needle, at + 1)
    return out

"""Every non-local defined symbol of an image, placed in sections and regions, as columns.

This is the bulk half of the report: computed once, rendered as the JSON `symbols` array by
weaklink.analyze.jsonrows without a Python call per symbol, and without numpy (its import
alone costs more than analysing a 10k-symbol image).
"""
from __future__ import annotations

import json
from functools import cached_property
from itertools import compress, repeat
from operator import add, mul

from weaklink.analyze.jsonrows import escaped_all, format_rows
from weaklink.analyze.regions import RegionMap
from weaklink.demangle import demangle_all, unqualified
from weaklink.read import elfstructs as S
from weaklink.read.image import Image


def json_binding(binding: int) -> str:
    """The contract has two bindings: WEAK is "weak"; GLOBAL and the OS-specific strong
    ones (STB_GNU_UNIQUE, which arm-none-eabi never emits) are "global"."""
    return "weak" if binding == S.STB_WEAK else "global"


def json_type(stype: int) -> str:
    """Contract type names; processor/OS-specific types (e.g. STT_GNU_IFUNC) are "notype"."""
    return S.TYPE_NAMES.get(stype, "notype")


# `"binding":…,"type":…,` for every st_info byte
BINDING_TYPE_JSON = [f'"binding":"{json_binding(i >> 4)}","type":"{json_type(i & 15)}",'.encode()
                 for i in range(256)]
_SYMBOL_ROW = b'{"name":"%s","demangled":"%s",%s"address":%d,"size":%d,%s'   # %s: place


class GlobalSymbols:
    """The defined globals of an image (GLOBAL, WEAK) as columns, with their names, places
    and demangled names."""

    def __init__(self, image: Image, regions: RegionMap):
        self.image = image
        self.regions = regions
        self.cols = image.defined_globals
        self.raw = image.defined_global_names        # bytes per row
        self._by_binding: dict[int, list[int]] = {}

    @cached_property
    def region_index(self) -> list[int]:
        return self.regions.locate(self.cols.address)

    def __len__(self) -> int:
        return len(self.cols)

    # -- derived columns ------------------------------------------------------------------------
    def rows_with_binding(self, binding: int) -> list[int]:
        """Rows of one STB_* binding, ascending (a translate of the binding bytes: C speed)."""
        if binding not in self._by_binding:
            match = bytes(int(b == binding) for b in range(256))
            self._by_binding[binding] = list(compress(
                range(len(self.cols)), self.cols.binding.tobytes().translate(match)))
        return self._by_binding[binding]

    def rows_where(self, binding: int, mangled: bool) -> list[int]:
        """Rows of one binding whose name is (or is not) a C++ name, ascending."""
        match = bytes(int(b == binding) for b in range(256))
        keep = self.cols.binding.tobytes().translate(match)
        both = int.from_bytes(keep, "little") & int.from_bytes(self._mangled_mask, "little")
        if not mangled:
            both ^= int.from_bytes(keep, "little")        # in `keep` and not mangled
        return list(compress(range(len(self.cols)), both.to_bytes(len(keep), "little")))

    @cached_property
    def _mangled_mask(self) -> bytes:
        mask = bytearray(len(self.cols))
        for r in self.mangled_rows:
            mask[r] = 1
        return bytes(mask)

    @cached_property
    def mangled_rows(self) -> list[int]:
        """Rows whose name is an Itanium C++ name (`_Z…`), ascending."""
        starts = map(bytes.startswith, self.raw, repeat(b"_Z"))
        return [r for r in compress(range(len(self.raw)), starts) if len(self.raw[r]) > 2]

    @cached_property
    def demangled(self) -> list[bytes]:
        """The demangled name of each of `mangled_rows` (one c++filt for them all)."""
        return demangle_all([self.raw[r] for r in self.mangled_rows])

    @cached_property
    def mangled_tails(self) -> list[bytes]:
        """Unqualified names of `mangled_rows` (`ns::x` → `x`), from the demangled text; names
        with parameter or template lists go through weaklink.demangle.unqualified."""
        out = []
        for line in self.demangled:
            if b"(" in line or b"<" in line:
                out.append(unqualified(line.decode("utf-8", "replace")).encode())
            else:
                out.append(line.rpartition(b"::")[2])
        return out

    def mangled_tails_of(self, rows: list[int]) -> list[bytes]:
        """mangled_tails for some of the mangled rows (each must be in `mangled_rows`)."""
        where, tails = self._mangled_position, self.mangled_tails
        return [tails[where[r]] for r in rows]

    @cached_property
    def _mangled_position(self) -> dict[int, int]:
        """Row -> its position in `mangled_rows`."""
        return {r: k for k, r in enumerate(self.mangled_rows)}

    def raw_names(self, rows) -> list[bytes]:
        return [self.raw[r] for r in rows]

    def demangled_names(self, rows) -> list[str]:
        """Demangled names of some mangled rows (each must be in `mangled_rows`)."""
        where, lines = self._mangled_position, self.demangled
        return [lines[where[r]].decode("utf-8", "replace") for r in rows]

    def demangled_text(self) -> bytes:
        """Every mangled row's demangled name, one per line (weaklink.analyze.cxxlinkage
        scans it for the names used as types)."""
        return b"\n".join(self.demangled)

    def lookup(self, name: str) -> tuple:
        """The defined symbols called `name`: a .symtab name, or a demangled C++ name (`ns::x`)."""
        hits = self.image.lookup(name)
        if not hits and "::" in name:
            sym = self.image.demangled_symbol(name)
            hits = (sym,) if sym is not None else ()
        return hits

    def names(self, rows) -> list[str]:
        return [n.decode("utf-8", "replace") for n in self.raw_names(rows)]

    # -- JSON ---------------------------------------------------------------------------------
    @cached_property
    def _json_names(self) -> tuple[list[bytes], list[bytes]]:
        """(name, demangled) of every row as JSON string bodies."""
        names = escaped_all(self.raw)
        dem = list(names)
        lines = escaped_all(self.demangled)
        for r, text in zip(self.mangled_rows, lines):
            dem[r] = text
        return names, dem

    def json_array(self, defined_in: dict[int, str] | None = None) -> list[bytes]:
        """The `symbols` array, as chunks to join. `defined_in` maps a .symtab index to its
        compilation unit."""
        c, n = self.cols, len(self.cols)
        names, dem = self._json_names
        return [b"[", *format_rows(_SYMBOL_ROW, [
            names, dem, list(map(BINDING_TYPE_JSON.__getitem__, c.info)), c.address, c.size,
            self._place_column(defined_in or {})], n), b"]"]

    def json_rows(self, rows: list[int], template: bytes) -> list[bytes]:
        """Rows of some other array (findings): `template % (name, demangled)` per row."""
        names, dem = self._json_names
        return format_rows(template, [[names[r] for r in rows], [dem[r] for r in rows]],
                           len(rows))

    def _place_column(self, defined_in: dict[int, str]) -> list[bytes]:
        """`"section":…,"region":…,"defined_in":…}` per row: one argument of the row."""
        if not defined_in:
            return self._section_region_column(b'"defined_in":null}')
        units = self._defined_in_column(defined_in)
        return [b'%s"defined_in":%s}' % pu for pu in zip(self._section_region_column(), units)]

    def _section_region_column(self, suffix: bytes = b"") -> list[bytes]:
        c, nreg = self.cols, len(self.regions.regions) + 1
        # key = section index * (regions + 1) + region + 1; section_name says which index
        # is no section (SHN_ABS, SHN_COMMON)
        keys = list(map(add, map(mul, c.shndx, repeat(nreg)), map((1).__add__, self.region_index)))
        texts = {k: self._place_json(k, nreg) + suffix for k in set(keys)}
        return list(map(texts.__getitem__, keys))

    def _place_json(self, key: int, nreg: int) -> bytes:
        """`"section":…,"region":…,` of a key section index * nreg + region index + 1 (0:
        no region); section_name says which index is no section (SHN_ABS, SHN_COMMON)."""
        sec = self.image.section_name(key // nreg)
        reg = self.regions.regions[key % nreg - 1].name if key % nreg else None
        return f'"section":{json.dumps(sec)},"region":{json.dumps(reg)},'.encode()

    def _defined_in_column(self, defined_in: dict[int, str]) -> list[bytes]:
        out = [b"null"] * len(self.cols)
        if defined_in:
            wanted, texts = set(defined_in), {}
            for k in compress(range(len(out)), map(wanted.__contains__, self.cols.index)):
                unit = defined_in[self.cols.index[k]]
                if unit not in texts:                  # a unit defines many symbols
                    texts[unit] = json.dumps(unit).encode()
                out[k] = texts[unit]
        return out

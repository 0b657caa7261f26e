"""Every non-local defined symbol of an image, placed in sections and regions, as columns.

This is the bulk half of the report: computed once with numpy, rendered as the JSON `symbols`
array by weaklink.analyze.jsonrows without a Python object per symbol.
"""
from __future__ import annotations

import json
from functools import cached_property

import numpy as np

from weaklink.analyze.demangling import Demangling, Merged
from weaklink.analyze.jsonrows import Const, Decimal, Slice, Table, encode_chunks, encode_rows
from weaklink.analyze.nested import demangle_nested
from weaklink.analyze.regions import RegionMap
from weaklink.read import elfstructs as S
from weaklink.read.image import Image


def json_binding(binding: int) -> str:
    """The contract has two bindings: WEAK is "weak"; GLOBAL and the OS-specific strong
    ones (STB_GNU_UNIQUE, which arm-none-eabi never emits) are "global"."""
    return "weak" if binding == S.STB_WEAK else "global"


def json_type(stype: int) -> str:
    """Contract type names; processor/OS-specific types (e.g. STT_GNU_IFUNC) are "notype"."""
    return S.TYPE_NAMES.get(stype, "notype")


def _needs_escape(u8: np.ndarray) -> np.ndarray:
    """Bytes JSON cannot carry raw: '"', '\\', control characters, and (to be safe with
    invalid UTF-8) anything non-ASCII. NUL is the string terminator, not content."""
    return (u8 == 34) | (u8 == 92) | ((u8 < 32) & (u8 != 0)) | (u8 >= 128)


def _escaped(raw: bytes) -> bytes:
    return json.dumps(raw.decode("utf-8", "replace"), ensure_ascii=False)[1:-1].encode()


class _Aux:
    """Extra strings appended after .strtab in the source buffer of the JSON encoder."""

    def __init__(self, base: int):
        self.base, self.parts, self.size = base, [], 0

    def add(self, text: bytes) -> tuple[int, int]:
        off = self.base + self.size
        self.parts.append(text)
        self.size += len(text)
        return off, len(text)


class SymbolTable:
    def __init__(self, image: Image, regions: RegionMap):
        self.image = image
        self.regions = regions
        self.cols = image.defined_globals
        self._strings: tuple | None = None
        self._demangling: Merged | None = None

    @cached_property
    def region_index(self) -> np.ndarray:
        return self.regions.locate(self.cols.address)

    def __len__(self) -> int:
        return len(self.cols)

    # -- derived columns ------------------------------------------------------------------------
    @cached_property
    def mangled_rows(self) -> np.ndarray:
        c, u8 = self.cols, self.image._strtab_u8
        if len(u8) < 2:
            return np.zeros(0, np.int64)
        off = np.minimum(c.name_off, len(u8) - 2)
        return np.flatnonzero((c.name_len > 2) & (u8[off] == ord("_")) & (u8[off + 1] == ord("Z")))

    @cached_property
    def _escape_rows(self) -> np.ndarray:
        """Rows whose name holds a byte JSON cannot carry raw (almost never any)."""
        bad = np.flatnonzero(_needs_escape(self.image._strtab_u8))
        if not bad.size:
            return np.zeros(0, np.int64)
        c = self.cols
        first_bad = np.searchsorted(bad, c.name_off)       # first bad byte at or after the name
        hit = bad[np.minimum(first_bad, bad.size - 1)]
        return np.flatnonzero((first_bad < bad.size) & (hit < c.name_off + c.name_len))

    def start_demangling(self) -> Merged:
        """Start demangling every `_Z` name: nested data names in process, with numpy; the
        rest with the real demangler (a background c++filt when there are many)."""
        if self._demangling is None:
            rows = self.mangled_rows
            off, length = self.cols.name_off[rows], self.cols.name_len[rows]
            ok, fast = demangle_nested(self.image.strtab, off, length)
            hard = np.flatnonzero(~ok)
            text = b""
            if len(hard):
                text = encode_rows([Slice(off[hard], length[hard])], len(hard),
                                   self.image.strtab, sep=b"\n") + b"\n"
            self._demangling = Merged(ok, fast, Demangling(text, len(hard)))
        return self._demangling

    def mangled_tails_of(self, rows: np.ndarray) -> list[bytes]:
        """mangled_tails for some of the mangled rows (each must be in `mangled_rows`)."""
        tails = self.mangled_tails
        return [tails[k] for k in np.searchsorted(self.mangled_rows, rows).tolist()]

    def raw_names(self, rows) -> list[bytes]:
        rows = np.asarray(rows, np.int64)
        if len(rows) < 64:
            c, s = self.cols, self.image.strtab
            return [s[o:o + n] for o, n in zip(c.name_off[rows].tolist(),
                                               c.name_len[rows].tolist())]
        # Many names: one vectorised join, one split in C.
        text = encode_rows([Slice(self.cols.name_off[rows], self.cols.name_len[rows])],
                           len(rows), self.image.strtab, sep=b"\n")
        return text.split(b"\n")

    @cached_property
    def mangled_tails(self) -> list[bytes]:
        """Unqualified names of `mangled_rows` (`ns::x` → `x`), from the demangled text:
        the part after the last `::`, found with numpy; names with parameter or template
        lists go through weaklink.demangle.unqualified."""
        from weaklink.demangle import unqualified
        text = self.start_demangling().lines()
        u8 = np.frombuffer(text, np.uint8)
        ends = np.flatnonzero(u8 == 10)
        starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
        colons = np.flatnonzero((u8[:-1] == 58) & (u8[1:] == 58)) if len(u8) > 1 else ends
        last = np.searchsorted(colons, ends) - 1          # last "::" before each line end
        cut = colons[np.maximum(last, 0)] + 2 if len(colons) else starts
        tail_start = np.where((last >= 0) & (cut > starts), cut, starts)
        tails = encode_rows([Slice(tail_start, ends - tail_start)], len(ends), text,
                            sep=b"\n").split(b"\n") if len(ends) else []
        odd = (u8 == 40) | (u8 == 60)                      # '(' or '<'
        hard = np.flatnonzero(np.add.reduceat(odd, starts) > 0) if len(ends) else []
        for k in hard:
            line = text[starts[k]:ends[k]].decode("utf-8", "replace")
            tails[k] = unqualified(line).encode()
        return tails

    def find_demangled(self, name: str) -> int | None:
        """The .symtab index of the global whose demangled name is `name` (a C++ name such
        as `ns::x`), or None."""
        text = b"\n" + self.start_demangling().lines()
        hit = text.find(b"\n" + name.encode() + b"\n")
        if hit < 0:
            return None
        line = text.count(b"\n", 0, hit)             # lines before the match
        return int(self.cols.index[self.mangled_rows[line]])

    def names(self, rows) -> list[str]:
        return [n.decode("utf-8", "replace") for n in self.raw_names(rows)]

    # -- JSON ---------------------------------------------------------------------------------
    def json_strings(self, demangling: Merged | None = None) -> tuple:
        """(source, name_off, name_len, dem_off, dem_len): JSON-ready name and demangled-name
        slices of one buffer (.strtab, then escaped names and c++filt's output)."""
        if self._strings is None:
            c, strtab = self.cols, self.image.strtab
            aux = _Aux(len(strtab))
            name_off, name_len = c.name_off.copy(), c.name_len.copy()
            for i in self._escape_rows:
                name_off[i], name_len[i] = aux.add(_escaped(strtab[c.name_off[i]:][:c.name_len[i]]))
            dem_off, dem_len = name_off.copy(), name_len.copy()
            self._add_demangled(aux, dem_off, dem_len, demangling or self.start_demangling())
            self._strings = (strtab + b"".join(aux.parts), name_off, name_len, dem_off, dem_len)
        return self._strings

    def json_array(self, demangling: Merged | None = None, defined_in: dict[int, str] | None = None
                   ) -> list[bytes]:
        """The `symbols` array, as chunks to join. `defined_in` maps a .symtab index to its
        compilation unit."""
        c = self.cols
        source, name_off, name_len, dem_off, dem_len = self.json_strings(demangling)
        pieces = [Const(b'{"name":"'), Slice(name_off, name_len),
                  Const(b'","demangled":"'), Slice(dem_off, dem_len), Const(b'",'),
                  self._binding_type_column(), Const(b'"address":'), Decimal(c.address),
                  Const(b',"size":'), Decimal(c.size), Const(b","),
                  self._section_region_column(), Const(b'"defined_in":'),
                  self._defined_in_column(defined_in or {}), Const(b"}")]
        return [b"[", *encode_chunks(pieces, len(c), source), b"]"]

    def json_rows(self, rows: np.ndarray, demangling: Merged | None, pieces_for
                  ) -> list[bytes]:
        """Rows of some other array (findings) built from these names: `pieces_for(name,
        demangled)` gets the two Slice columns restricted to `rows`."""
        source, name_off, name_len, dem_off, dem_len = self.json_strings(demangling)
        pieces = pieces_for(Slice(name_off[rows], name_len[rows]),
                            Slice(dem_off[rows], dem_len[rows]))
        return encode_chunks(pieces, len(rows), source)

    def _add_demangled(self, aux, off, length, demangling: Merged) -> None:
        rows = self.mangled_rows
        if not len(rows):
            return
        text = demangling.lines()
        u8 = np.frombuffer(text, np.uint8)
        ends = np.flatnonzero(u8 == 10)
        starts = np.concatenate(([0], ends[:-1] + 1))
        bad = np.flatnonzero(_needs_escape(u8) & (u8 != 10))     # 10: the line separator
        clean = np.ones(len(ends), bool)
        if bad.size:
            clean[np.unique(np.searchsorted(ends, bad))] = False
        base, _ = aux.add(text)
        off[rows] = np.where(clean, base + starts, 0)
        length[rows] = np.where(clean, ends - starts, 0)
        for k in np.flatnonzero(~clean):
            off[rows[k]], length[rows[k]] = aux.add(_escaped(text[starts[k]:ends[k]]))

    def _binding_type_column(self) -> Table:
        c = self.cols
        key = c.binding.astype(np.int64) * 16 + c.type
        present = np.flatnonzero(np.bincount(key, minlength=256))
        ids = np.zeros(max(256, int(key.max(initial=0)) + 1), np.int64)
        ids[present] = np.arange(len(present))
        texts = []
        for k in present.tolist():
            b, t = json_binding(k >> 4), json_type(k & 15)
            texts.append(f'"binding":"{b}","type":"{t}",'.encode())
        return Table(tuple(texts), ids[key])

    def _section_region_column(self) -> Table:
        c, nreg = self.cols, len(self.regions.regions) + 1
        shndx = np.where(c.shndx >= S.SHN_LORESERVE, 0, c.shndx).astype(np.int64)
        key = shndx * nreg + (self.region_index + 1)
        uniq, inverse = np.unique(key, return_inverse=True)
        texts = []
        for k in uniq.tolist():
            sec = self.image.section_name(k // nreg)
            reg = self.regions.regions[k % nreg - 1].name if k % nreg else None
            texts.append(f'"section":{json.dumps(sec)},"region":{json.dumps(reg)},'.encode())
        return Table(tuple(texts), inverse.reshape(-1))

    def _defined_in_column(self, defined_in: dict[int, str]) -> Table:
        ids = np.zeros(len(self.cols), np.int64)
        texts = [b"null"]
        index = self.cols.index                        # ascending .symtab positions
        for sym, unit in defined_in.items():
            k = int(np.searchsorted(index, sym))
            if k < len(index) and index[k] == sym:
                ids[k] = len(texts)
                texts.append(json.dumps(unit).encode())
        return Table(tuple(texts), ids)

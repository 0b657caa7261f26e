"""The symbol table of a large image, with numpy: the same API and the same JSON bytes as
weaklink.analyze.symtable.SymbolTable, for images where numpy's import pays for itself.

Below weaklink.read.image.NUMPY_FROM global symbols, interpreting a loop of C-implemented
string and list operations per symbol beats importing numpy; above it the whole-column
operations here win (the goal: analyze at nm's speed at 10k and at 800k symbols). Rows are
numpy arrays inside; what the findings and the report receive (row lists, names) is the same
as from SymbolTable. tests/analyze/test_vectorised.py holds the two to byte-equal output.
"""
from __future__ import annotations

import json
from functools import cached_property
from itertools import chain

import numpy as np

from weaklink.analyze.demangling import Demangling
from weaklink.analyze.jsonblocks import (Const, Decimal, Slice, Table, encode_rows, encode_stream,
                                         padded_source)
from weaklink.analyze.jsonrows import escaped
from weaklink.analyze.nested import demangle_nested_many
from weaklink.analyze.regions import RegionMap
from weaklink.analyze.symtable import BINDING_TYPE_JSON, SymbolTable
from weaklink.arraysets import categories, member, unique
from weaklink.read.image import Image


def _needs_escape(u8: np.ndarray) -> np.ndarray:
    """Bytes JSON cannot carry raw (jsonrows.NEEDS_ESCAPE). NUL ends a name: not content."""
    return (u8 == 34) | (u8 == 92) | ((u8 < 32) & (u8 != 0)) | (u8 >= 128)


def _line_spans(text: bytes) -> tuple[np.ndarray, np.ndarray]:
    ends = np.flatnonzero(np.frombuffer(text, np.uint8) == 10)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
    return starts, ends


def _cut(buf: bytes, start: np.ndarray, length: np.ndarray) -> list[bytes]:
    """The byte strings at (start, length) of `buf`, none of which holds a newline (a string
    table with one goes to the pure engine, symtable.table_for): few one by one, many with
    one vectorised join and one split in C."""
    if len(start) < 64:
        return [buf[o:o + n] for o, n in zip(start.tolist(), length.tolist())]
    return encode_rows([Slice(start, length)], len(start), buf, sep=b"\n").split(b"\n")


def _signatures(u8: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A 64-bit value per string that equal strings share: the length and the bytes at five
    positions (first, second, middle, last but one, last)."""
    length = np.asarray(length, np.int64)
    sig = length.astype(np.uint64)
    if not len(u8):
        return sig
    start = np.asarray(start, np.int64)
    last = np.maximum(length - 1, 0)
    present = (length > 0).astype(np.uint64)
    for shift, k in ((16, 0), (24, 1), (32, length // 2), (40, last - 1), (48, last)):
        pos = np.minimum(start + np.clip(k, 0, last), len(u8) - 1)
        sig |= (u8[pos].astype(np.uint64) * present) << np.uint64(shift)
    return sig


class _Aux:
    """Extra strings appended after .strtab in the source buffer of the JSON encoder."""

    def __init__(self, base: int):
        self.base, self.parts, self.size = base, [], 0

    def add(self, text: bytes) -> tuple[int, int]:
        off = self.base + self.size
        self.parts.append(text)
        self.size += len(text)
        return off, len(text)


class VectorisedTable(SymbolTable):
    def __init__(self, image: Image, regions: RegionMap):
        self.image = image
        self.regions = regions
        self.cols = image.numpy_defined_globals
        self._demangling: Demangling | None = None
        self._strings: tuple | None = None
        self._by_binding: dict[int, list[int]] = {}
        self._scratch: list = []            # the JSON encoders' working memory, shared

    @cached_property
    def region_index(self) -> np.ndarray:
        return self.regions.locate_array(self.cols.address)

    @property
    def numpy_cols(self):
        return self.cols

    # -- derived columns ------------------------------------------------------------------------
    def rows_with_binding(self, binding: int) -> list[int]:
        if binding not in self._by_binding:
            self._by_binding[binding] = np.flatnonzero(self.cols.binding == binding).tolist()
        return self._by_binding[binding]

    def rows_where(self, binding: int, mangled: bool) -> np.ndarray:
        """As SymbolTable.rows_where, as an int64 array (shared_rows takes it as it is)."""
        return np.flatnonzero((self.cols.binding == binding) & (self._is_mangled == mangled))

    @cached_property
    def _is_mangled(self) -> np.ndarray:
        out = np.zeros(len(self.cols), bool)
        out[self._mangled] = True
        return out

    @cached_property
    def _mangled(self) -> np.ndarray:
        c, u8 = self.cols, self.image.strtab_u8
        if len(u8) < 2:
            return np.zeros(0, np.int64)
        off = np.minimum(c.name_off, len(u8) - 2)
        return np.flatnonzero((c.name_len > 2) & (u8[off] == ord("_")) & (u8[off + 1] == ord("Z")))

    @cached_property
    def mangled_rows(self) -> list[int]:
        return self._mangled.tolist()

    def start_demangling(self) -> Demangling:
        """Decode the nested data names with numpy and start the real demangler on the rest
        (a background c++filt when there are many)."""
        if self._demangling is None:
            rows = self._mangled
            off, length = self.cols.name_off[rows], self.cols.name_len[rows]
            self._ok, self._fast = demangle_nested_many(self.image.strtab, off, length)
            hard = np.flatnonzero(~self._ok)
            self._demangling = Demangling(self.raw_names(rows[hard]))
        return self._demangling

    @cached_property
    def _demangled_text(self) -> bytes:
        """One line per mangled row, in row order: numpy's nested names merged with the real
        demangler's lines for the others."""
        rest = self.start_demangling().lines()
        if self._ok.all():
            return self._fast
        rest_text = b"\n".join(rest) + b"\n"
        f_start, f_end = _line_spans(self._fast)
        r_start, r_end = _line_spans(rest_text)
        start, end = f_start.copy(), f_end.copy()
        start[~self._ok] = r_start + len(self._fast)
        end[~self._ok] = r_end + len(self._fast)
        return encode_rows([Slice(start, end - start)], len(start), self._fast + rest_text,
                           sep=b"\n") + b"\n"

    def mangled_tails_of(self, rows) -> list[bytes]:
        buf, start, length = self._tail_spans
        ks = np.searchsorted(self._mangled, np.asarray(rows, np.int64))
        return _cut(buf, start[ks], length[ks])

    @cached_property
    def _demangled_spans(self) -> tuple[np.ndarray, np.ndarray]:
        return _line_spans(self._demangled_text)

    def demangled_names(self, rows) -> list[str]:
        starts, ends = self._demangled_spans
        ks = np.searchsorted(self._mangled, np.asarray(rows, np.int64))
        return [n.decode("utf-8", "replace")
                for n in _cut(self._demangled_text, starts[ks], (ends - starts)[ks])]

    def demangled_text(self) -> bytes:
        return self._demangled_text

    def raw_names(self, rows) -> list[bytes]:
        rows = np.asarray(rows, np.int64)
        return _cut(self.image.strtab, self.cols.name_off[rows], self.cols.name_len[rows])

    @cached_property
    def mangled_tails(self) -> list[bytes]:
        """Unqualified names of the mangled rows (`ns::x` → `x`), in mangled-row order."""
        return _cut(*self._tail_spans)

    @cached_property
    def _tail_spans(self) -> tuple[bytes, np.ndarray, np.ndarray]:
        """(buffer, start, length) of the unqualified name of each mangled row: the part
        after the last `::` of its demangled line, found with numpy; names with parameter or
        template lists go through weaklink.demangle.unqualified (appended to the buffer)."""
        text = self._demangled_text
        u8 = np.frombuffer(text, np.uint8)
        starts, ends = _line_spans(text)
        if not len(ends):
            return text, np.zeros(0, np.int64), np.zeros(0, np.int64)
        colons = np.flatnonzero((u8[:-1] == 58) & (u8[1:] == 58)) if len(u8) > 1 else ends
        last = np.searchsorted(colons, ends) - 1          # last "::" before each line end
        cut = colons[np.maximum(last, 0)] + 2 if len(colons) else starts
        start = np.where((last >= 0) & (cut > starts), cut, starts).astype(np.int64)
        length = (ends - start).astype(np.int64)
        odd = np.flatnonzero((u8 == 40) | (u8 == 60))      # '(' or '<'
        hard = unique(np.searchsorted(ends, odd))          # the lines that hold one
        extra, size = [], len(text)
        if hard.size:
            from weaklink.demangle import unqualified
        for k in hard.tolist():
            tail = unqualified(text[starts[k]:ends[k]].decode("utf-8", "replace")).encode()
            start[k], length[k] = size, len(tail)
            extra.append(tail)
            size += len(tail)
        return text + b"".join(extra), start, length

    def shared_rows(self, a_rows, a_tails: bool, b_rows, b_tails: bool):
        """(rows of a, rows of b) that may share a key with the other side, a key being the
        raw name or (`*_tails`) the mangled row's unqualified name: a numpy filter on a
        signature of each key (its length and five of its bytes), so that the exact
        comparison builds names for the few candidates only."""
        if not len(a_rows) or not len(b_rows):
            return [], []
        a, b = np.asarray(a_rows, np.int64), np.asarray(b_rows, np.int64)
        sa, sb = self._signatures(a, a_tails), self._signatures(b, b_tails)
        return a[member(sa, sb)].tolist(), b[member(sb, sa)].tolist()

    def _signatures(self, rows: np.ndarray, tails: bool) -> np.ndarray:
        if tails:
            buf, start, length = self._tail_spans
            ks = np.searchsorted(self._mangled, rows)
            return _signatures(np.frombuffer(buf, np.uint8), start[ks], length[ks])
        return _signatures(self.image.strtab_u8, self.cols.name_off[rows],
                           self.cols.name_len[rows])

    def find_demangled(self, name: str) -> int | None:
        text = b"\n" + self._demangled_text
        hit = text.find(b"\n" + name.encode() + b"\n")
        if hit < 0:
            return None
        line = text.count(b"\n", 0, hit)             # lines before the match
        return int(self.cols.index[self._mangled[line]])

    # -- JSON ---------------------------------------------------------------------------------
    @cached_property
    def _escape_rows(self) -> np.ndarray:
        """Rows whose name holds a byte JSON cannot carry raw (almost never any)."""
        bad = np.flatnonzero(_needs_escape(self.image.strtab_u8))
        if not bad.size:
            return np.zeros(0, np.int64)
        c = self.cols
        first_bad = np.searchsorted(bad, c.name_off)       # first bad byte at or after the name
        hit = bad[np.minimum(first_bad, bad.size - 1)]
        return np.flatnonzero((first_bad < bad.size) & (hit < c.name_off + c.name_len))

    def _json_strings(self) -> tuple:
        """(source, name_off, name_len, dem_off, dem_len): JSON-ready name and demangled-name
        slices of one buffer (.strtab, then escaped names and the demangled lines), padded
        once for every encoding of them (jsonblocks.Padded)."""
        if self._strings is None:
            c, strtab = self.cols, self.image.strtab
            aux = _Aux(len(strtab))
            name_off, name_len = c.name_off.copy(), c.name_len.copy()
            for i in self._escape_rows:
                name_off[i], name_len[i] = aux.add(escaped(strtab[c.name_off[i]:][:c.name_len[i]]))
            dem_off, dem_len = name_off.copy(), name_len.copy()
            self._add_demangled(aux, dem_off, dem_len)
            longest = max(int(name_len.max(initial=0)), int(dem_len.max(initial=0)))
            source = padded_source(strtab, longest, b"".join(aux.parts))
            self._strings = (source, name_off, name_len, dem_off, dem_len)
        return self._strings

    def _add_demangled(self, aux, off, length) -> None:
        rows = self._mangled
        if not len(rows):
            return
        text = self._demangled_text
        u8 = np.frombuffer(text, np.uint8)
        starts, ends = _line_spans(text)
        bad = np.flatnonzero(_needs_escape(u8) & (u8 != 10))     # 10: the line separator
        clean = np.ones(len(ends), bool)
        if bad.size:
            clean[np.searchsorted(ends, bad)] = False
        base, _ = aux.add(text)
        off[rows] = np.where(clean, base + starts, 0)
        length[rows] = np.where(clean, ends - starts, 0)
        for k in np.flatnonzero(~clean):
            off[rows[k]], length[rows[k]] = aux.add(escaped(text[starts[k]:ends[k]]))

    def json_array(self, defined_in: dict[int, str] | None = None) -> list[bytes]:
        c = self.cols
        source, name_off, name_len, dem_off, dem_len = self._json_strings()
        pieces = [Const(b'{"name":"'), Slice(name_off, name_len),
                  Const(b'","demangled":"'), Slice(dem_off, dem_len), Const(b'",'),
                  self._binding_type_column(), Const(b'"address":'), Decimal(c.address),
                  Const(b',"size":'), Decimal(c.size), Const(b","),
                  self._section_region_column(), Const(b'"defined_in":'),
                  self._defined_in_column(defined_in or {}), Const(b"}")]
        return chain([b"["], encode_stream(pieces, len(c), source, pool=self._scratch), [b"]"])

    def json_rows(self, rows: list[int], template: bytes) -> list[bytes]:
        """`template % (name, demangled)` per row (a template of two `%s` and no other `%`)."""
        source, name_off, name_len, dem_off, dem_len = self._json_strings()
        rows = np.asarray(rows, np.int64)
        head, middle, tail = template.split(b"%s")
        pieces = [Const(head), Slice(name_off[rows], name_len[rows]), Const(middle),
                  Slice(dem_off[rows], dem_len[rows]), Const(tail)]
        return encode_stream(pieces, len(rows), source, pool=self._scratch)

    def _binding_type_column(self) -> Table:
        """Rows of the st_info table: `"binding":…,"type":…,` of each st_info byte."""
        return Table(tuple(BINDING_TYPE_JSON), self.cols.info)

    def _section_region_column(self) -> Table:
        c, nreg = self.cols, len(self.regions.regions) + 1
        key = c.shndx.astype(np.int64) * nreg + (self.region_index + 1)
        uniq, inverse = categories(key)
        return Table(tuple(self._place_json(k, nreg) for k in uniq.tolist()), inverse)

    def _defined_in_column(self, defined_in: dict[int, str]) -> Table:
        ids = np.zeros(len(self.cols), np.int64)
        texts = [b"null"]
        index = self.cols.index                        # ascending .symtab positions
        if defined_in:
            syms = np.fromiter(defined_in, np.int64, len(defined_in))
            at = np.minimum(np.searchsorted(index, syms), max(len(index) - 1, 0))
            hit = (index[at] == syms) if len(index) else np.zeros(len(syms), bool)
            units, known = list(defined_in.values()), {}
            for k, j in zip(at[hit].tolist(), np.flatnonzero(hit).tolist()):
                if units[j] not in known:              # a unit defines many symbols
                    known[units[j]] = len(texts)
                    texts.append(json.dumps(units[j]).encode())
                ids[k] = known[units[j]]
        return Table(tuple(texts), ids)

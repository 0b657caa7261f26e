"""The symbol table of a linked image: its defined symbols as columns, and one symbol by name
(weaklink.read.holders: the symbol that holds an address).

The columns are the one representation of the table, for every command: `array.array`
columns that numpy reads in place (np.asarray) where a command computes over many rows. The
bulk path never makes one Python object per symbol and never imports numpy (analyze of a
200k-symbol image, benchmarks/bench_analyze.py): the Elf32_Sym fields are strided views of
the file bytes, rows are selected with bytes.translate and big-integer masks, and names are
cut out of .strtab with one bytes.split or bytes.find per symbol, all loops that run in C.
"""
from __future__ import annotations

import re
import struct
from array import array
from collections import namedtuple
from functools import cached_property
from itertools import accumulate, repeat
from operator import eq

from weaklink.demangle import demangle_many
from weaklink.read import elfstructs as S

_COLUMNS = (
    "index",        # u4, the position in .symtab
    "name_off",     # u4, offset of the name in .strtab
    "name_len",     # u4
    "binding",      # u1, STB_*
    "type",         # u1, STT_*
    "address",      # u4, Thumb bit cleared for STT_FUNC
    "size",         # u4
    "shndx",        # u2, or u4 with SHN_XINDEX entries expanded
    "info",         # u1, st_info as in the file (binding << 4 | type)
)


class SymbolColumns:
    """A set of symbols as parallel `array.array` columns; len() is the number of rows,
    iteration yields the columns."""

    __slots__ = _COLUMNS
    _fields = _COLUMNS

    def __init__(self, *columns):
        for name, col in zip(_COLUMNS, columns, strict=True):
            setattr(self, name, col)

    def __iter__(self):
        return (getattr(self, name) for name in _COLUMNS)

    def __len__(self) -> int:
        return len(self.index)

    def take_runs(self, runs: list[tuple[int, int]]) -> "SymbolColumns":
        """The rows of the [start, end) runs, in order (array slices: memcpy)."""
        if len(runs) == 1 and runs[0] == (0, len(self)):
            return self
        return SymbolColumns(*(_take(col, runs) for col in self))


def _take(col: array, runs: list[tuple[int, int]]) -> array:
    """The items of the [start, end) runs of an array column, in order."""
    new = array(col.typecode)
    for a, b in runs:
        new.extend(col[a:b])
    return new


class Symbol(namedtuple("Symbol", "index name binding type address size shndx")):
    """One symbol, for the few that are queried or named in a finding."""

    __slots__ = ()

    @property
    def binding_name(self) -> str:
        return S.BINDING_NAMES.get(self.binding, str(self.binding))

    @property
    def type_name(self) -> str:
        return S.TYPE_NAMES.get(self.type, str(self.type))

    def offset(self, address: int) -> int:
        """How far into the symbol `address` lies (a function's Thumb bit is no offset)."""
        return (address & ~1 if self.type == S.STT_FUNC else address) - self.address


# ARM ELF ABI §5.5.3 mapping symbols ($a, $t, $d, optionally "$t.<n>") mark code/data
# boundaries; they are not program objects.
MAPPING_PREFIX = b"$"


def mapping_kind(name: str) -> str | None:
    """"t" (Thumb code follows), "d" (data) or "a" (ARM code) for a mapping symbol's name,
    None for any other name."""
    if name[:2] in ("$t", "$d", "$a") and (len(name) == 2 or name[2] == "."):
        return name[1]
    return None


_SYM = struct.Struct(S.struct_format(S.SYM_FIELDS))


def _table(keep) -> bytes:
    """A bytes.translate table: st_info byte → 1 when keep(binding, type), else 0."""
    return bytes(1 if keep(i >> 4, i & 0xF) else 0 for i in range(256))


# Non-local, and a program symbol (not STT_SECTION or STT_FILE).
_GLOBAL_PROGRAM = _table(lambda b, t: b != S.STB_LOCAL and t not in (S.STT_SECTION, S.STT_FILE))
_PROGRAM = _table(lambda b, t: t not in (S.STT_SECTION, S.STT_FILE))
_CLEAR_THUMB = bytes(0xFE if i & 0xF == S.STT_FUNC else 0xFF for i in range(256))
_BINDING = bytes(i >> 4 for i in range(256))
_TYPE = bytes(i & 0xF for i in range(256))
_NONZERO = bytes([0] + [1] * 255)


def _and(*masks: bytes) -> bytes:
    """Byte-wise AND of 0/1 masks of one length (one big-integer operation)."""
    n = len(masks[0])
    acc = int.from_bytes(masks[0], "little")
    for m in masks[1:]:
        acc &= int.from_bytes(m, "little")
    return acc.to_bytes(n, "little")


def _or(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "little") | int.from_bytes(b, "little")).to_bytes(len(a), "little")


def _runs(mask: bytes) -> list[tuple[int, int]]:
    """The [start, end) runs of 1 bytes in a 0/1 mask."""
    return [m.span() for m in re.finditer(b"\x01+", mask)]


class SymbolLookup:
    """The symbol half of weaklink.read.image.Image: columns, names, lookup. Needs `elf`,
    `_lookups` and `_fail` from the image."""

    def _symbol_offset(self, index: int) -> int:
        return self.elf.symtab_span[0] + index * S.SYM_SIZE

    # -- names -------------------------------------------------------------------------------
    @cached_property
    def strtab(self) -> bytes:
        return self.elf.symbol_strtab

    def _check_names(self, offsets, rows=None) -> None:
        """Fail on the first name offset past .strtab (rows: the symbols' .symtab indices,
        by default their positions in `offsets`)."""
        limit = max(len(self.strtab), 1)
        if len(offsets) and max(offsets) >= limit:
            k = next(k for k, o in enumerate(offsets) if o >= limit)
            row = k if rows is None else rows[k]
            self._fail(f"symbol {row} name offset {offsets[k]} out of range "
                       f"(string table has {len(self.strtab)} bytes)", self._symbol_offset(row))

    def cut_names(self, offsets) -> list[bytes]:
        """The NUL-terminated names at `offsets` (checked by _check_names). A name running
        to the end of the table without its NUL ends there.

        ld writes a global's name to .strtab as it writes the symbol, so the names of
        consecutive rows are usually consecutive strings: those come from one bytes.split,
        checked against the offsets; where the chain breaks it restarts (bytes.find per name
        after a few restarts)."""
        table = self.strtab
        out: list[bytes] = []
        n, k, restarts = len(offsets), 0, 0
        while k < n and restarts < 8 and n - k >= 64:      # a split copies the table's tail
            parts = table[offsets[k]:].split(b"\0", n - k)[:n - k]
            starts = list(accumulate(map((1).__add__, map(len, parts)), initial=offsets[k]))
            want = offsets[k:].tolist() if isinstance(offsets, array) else list(offsets[k:])
            if starts[:-1] == want:
                good = len(want)
            else:
                good = list(map(eq, starts, want)).index(False)
            out += parts[:good]
            k += good
            restarts += 1
        if k < n:
            rest = offsets[k:]
            ends = map(table.find, repeat(b"\0", len(rest)), rest)
            out += [table[o:e if e >= 0 else len(table)] for o, e in zip(rest, ends)]
        return out

    def text(self, off: int, length: int) -> str:
        return self.strtab[off:off + length].decode("utf-8", "replace")

    # -- symbol columns ------------------------------------------------------------------------
    @cached_property
    def _fields(self) -> tuple:
        """(st_name, st_value, st_size, st_info, shndx) of every .symtab entry: arrays (the
        info column as bytes), read as strided views of the file."""
        offset, count = self.elf.symtab_span
        raw = memoryview(self.elf.data)[offset:offset + count * S.SYM_SIZE]
        words = raw.cast("I")
        name, value, size = (array("I", words[k::4].tobytes()) for k in range(3))
        info = raw[12::16].tobytes()
        shndx = array("H", raw.cast("H")[7::8].tobytes())
        if S.SHN_XINDEX in shndx:
            shndx = array("I", shndx)
            self._expand_xindex(shndx)
        self._check_names(name)
        nsec = len(self.elf.shdrs)
        bad = [v for v in set(shndx) if nsec <= v < S.SHN_LORESERVE]
        if bad:
            k = min(shndx.index(v) for v in bad)
            self._fail(f"symbol {k} section index {shndx[k]} out of range ({nsec} sections)",
                       self._symbol_offset(k) + 14)
        return name, value, size, info, shndx

    def _expand_xindex(self, shndx: array) -> None:
        span = self.elf.symtab_shndx_span
        if span is None:
            return
        ext = memoryview(self.elf.data)[span[0]:span[0] + span[1] * 4].cast("I")
        if len(ext) < len(shndx):
            self._fail(f"extended section index table has {len(ext)} entries, expected "
                       f"{len(shndx)} (one per symbol)")
        for k, v in enumerate(shndx):
            if v == S.SHN_XINDEX:
                shndx[k] = ext[k]

    def _select(self, mask: bytes) -> SymbolColumns:
        """The columns of the .symtab rows whose mask byte is 1."""
        name, value, size, info, shndx = self._fields
        runs = _runs(mask)
        name, value, size, shndx = (_take(col, runs) for col in (name, value, size, shndx))
        info = b"".join(info[a:b] for a, b in runs)
        index = array("I")
        for a, b in runs:
            index.extend(range(a, b))
        # ARM ELF ABI: bit 0 of a Thumb function's st_value is the Thumb bit, not an address
        # bit; data may sit at odd addresses, so only STT_FUNC is masked: one AND of the
        # values' bytes with a mask whose low byte is 0xfe for a function.
        thumb = info.translate(_CLEAR_THUMB)
        if 0xFE in thumb:
            mask = bytearray(b"\xff" * (4 * len(value)))
            mask[0::4] = thumb
            raw = value.tobytes()
            value = array("I", (int.from_bytes(raw, "little") & int.from_bytes(mask, "little")
                                ).to_bytes(len(raw), "little"))
        names = self.cut_names(name)
        cols = SymbolColumns(index, name, array("I", map(len, names)),
                             array("B", info.translate(_BINDING)), array("B", info.translate(_TYPE)),
                             value, size, shndx, array("B", info))
        return cols, names

    def _defined_mask(self, kinds: bytes) -> bytes:
        _, _, _, info, shndx = self._fields
        raw = shndx.tobytes()
        width = shndx.itemsize
        defined = raw[0::width].translate(_NONZERO)
        for k in range(1, width):        # defined: any byte of st_shndx non-zero
            defined = _or(defined, raw[k::width].translate(_NONZERO))
        return _and(info.translate(kinds), defined)

    @property
    def defined_globals(self) -> SymbolColumns:
        """Every non-local defined symbol (GLOBAL, WEAK, GNU_UNIQUE), in .symtab order."""
        return self._globals[0]

    @property
    def defined_global_names(self) -> list[bytes]:
        """The raw names of `defined_globals`, row by row."""
        return self._globals[1]

    @cached_property
    def _globals(self) -> tuple[SymbolColumns, list[bytes]]:
        return self._select(self._defined_mask(_GLOBAL_PROGRAM))

    @cached_property
    def defined(self) -> SymbolColumns:
        """Every defined program symbol, locals too (a `static` array is a typical pointer
        target), without entry 0, mapping symbols and empty names, in .symtab order."""
        mask = bytearray(self._defined_mask(_PROGRAM))
        if mask:
            mask[0] = 0
        cols, names = self._select(bytes(mask))
        keep = [n[:1] not in (b"", MAPPING_PREFIX) for n in names]
        if all(keep):
            return cols
        return cols.take_runs(_runs(bytes(keep)))

    def _entry(self, index: int) -> tuple[int, int, int, int, int]:
        """(st_name, st_value, st_size, st_info, section index) of one .symtab entry, read
        on its own (no column of the whole table is built), SHN_XINDEX expanded and checked."""
        start, count = self.elf.symtab_span
        if not 0 <= index < count:
            raise IndexError(index)
        name, value, size, info, _, shndx = _SYM.unpack_from(self.elf.data,
                                                              start + index * S.SYM_SIZE)
        if shndx == S.SHN_XINDEX and (span := self.elf.symtab_shndx_span) is not None:
            if index >= span[1]:
                self._fail(f"extended section index table has {span[1]} entries, expected "
                           f"{count} (one per symbol)")
            shndx = int.from_bytes(self.elf.data[span[0] + 4 * index:span[0] + 4 * index + 4],
                                   "little")
        nsec = len(self.elf.shdrs)
        if nsec <= shndx < S.SHN_LORESERVE:
            self._fail(f"symbol {index} section index {shndx} out of range ({nsec} sections)",
                       self._symbol_offset(index) + 14)
        return name, value, size, info, shndx

    def symbol(self, index: int) -> Symbol:
        name, value, size, info, shndx = self._entry(index)
        binding, stype = info >> 4, info & 0xF
        self._check_names([name], [index])
        raw = self.cut_names([name])[0]
        address = value & ~1 if stype == S.STT_FUNC else value
        return Symbol(index, raw.decode("utf-8", "replace"), binding, stype, address, size,
                      shndx)

    def lookup(self, name: str) -> tuple[Symbol, ...]:
        """Defined symbols called `name`, globals first. ld merges string tails ("f" may sit
        inside "half\\0"), so a name is found by the .strtab offsets where it starts, then by
        the symbols that use those offsets."""
        hit = self._lookups.get(name)
        if hit is not None:
            return hit
        needle, table = name.encode(), self.strtab
        offsets, pos = [], table.find(needle + b"\0") if needle else -1
        while pos >= 0:
            offsets.append(pos)
            pos = table.find(needle + b"\0", pos + 1)
        data, (start, count) = self.elf.data, self.elf.symtab_span
        end = start + count * S.SYM_SIZE
        found = []
        for off in offsets:              # the entries whose st_name is `off`: a memmem search
            word, at = off.to_bytes(4, "little"), start
            while (at := data.find(word, at, end)) >= 0:
                k, rem = divmod(at - start, S.SYM_SIZE)
                if rem == 0:
                    _, _, _, info, shndx = self._entry(k)
                    if shndx != S.SHN_UNDEF and _PROGRAM[info]:
                        found.append(self.symbol(k))
                at += 1
        hit = self._lookups[name] = tuple(sorted(found, key=lambda s: (s.binding == S.STB_LOCAL,
                                                                       s.index)))
        return hit

    def symbol_named(self, name: str, *, local: bool = False) -> Symbol | None:
        """The defined global (or weak) symbol `name`; with `local`, a file-local one when
        there is none (a `static` arena or buffer)."""
        kinds = (S.STB_GLOBAL, S.STB_WEAK) + ((S.STB_LOCAL,) if local else ())
        return next((s for s in self.lookup(name) if s.binding in kinds), None)

    def demangled_symbol(self, name: str) -> Symbol | None:
        """The defined symbol whose C++ name, demangled, is `name` (`arm::app::tensorArena`,
        `(anonymous namespace)::inferenceProcessTensorArena`): a static C++ array is a local
        symbol known by its mangled name only. Globals first; None when none is."""
        c = self.defined
        rows = [k for k, off in enumerate(c.name_off) if self.strtab.startswith(b"_Z", off)]
        mangled = [raw.decode("utf-8", "replace") for raw in self.cut_names([c.name_off[k] for k in rows])]
        demangled = demangle_many(mangled)
        hits = [self.symbol(c.index[k]) for k, text in zip(rows, mangled) if demangled[text] == name]
        return min(hits, key=lambda s: (s.binding == S.STB_LOCAL, s.index), default=None)

    def names_of(self, indices) -> list[str]:
        """The names of the .symtab entries at `indices` (a relocation names its symbol so)."""
        offsets = self._fields[0]
        return [n.decode("utf-8", "replace") for n in self.cut_names([offsets[k] for k in indices])]

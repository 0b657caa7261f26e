"""A linked firmware image (ET_EXEC): its defined symbols as columns, where an address lives
(section, segment) and what a symbol holds at reset.

Built on ElfFile. The bulk path never makes one Python object per symbol and never imports
numpy: the Elf32_Sym fields are strided views of the file bytes copied into `array.array`
columns, rows are selected with bytes.translate and big-integer masks, and names are cut out
of .strtab with one bytes.find per symbol, all loops that run in C. `SymbolColumns.numpy()`
hands the same columns to numpy code (weaklink diff, bind) without a copy.
"""
from __future__ import annotations

import os
import re
import struct
from array import array
from collections import namedtuple
from functools import cached_property
from itertools import accumulate, compress, repeat
from operator import eq

from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile

# From this many non-local .symtab entries on, whole-column numpy work beats a C-implemented
# loop per symbol plus numpy's import (70 to 120 ms): the analysis of larger images uses numpy
# (weaklink.analyze.vectorised), smaller ones do not import it. Measured with
# benchmarks/bench_analyze.py: at 50k globals the loop takes 0.17 s and numpy 0.29 s, at 200k
# 0.74 s and 0.45 s.
NUMPY_FROM = 90_000

# the numpy dtypes that view the columns' arrays, by typecode
_NUMPY = {"I": "<u4", "H": "<u2", "q": "<i8", "B": "u1"}


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
    """A set of symbols as parallel columns (`array.array`, or numpy arrays after
    `numpy()`); len() is the number of rows, iteration yields the columns."""

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
        out = []
        for col in self:
            new = array(col.typecode)
            for a, b in runs:
                new.extend(col[a:b])
            out.append(new)
        return SymbolColumns(*out)

    def numpy(self):
        """The same columns as numpy arrays (views of the arrays' buffers, no copy)."""
        import numpy as np
        return SymbolColumns(*(np.frombuffer(c, _NUMPY[c.typecode]) if len(c)
                               else np.zeros(0, _NUMPY[c.typecode]) for c in self))


class Symbol(namedtuple("Symbol", "index name binding type address size shndx")):
    """One symbol, for the few that are queried or named in a finding."""

    __slots__ = ()

    @property
    def binding_name(self) -> str:
        return S.BINDING_NAMES.get(self.binding, str(self.binding))

    @property
    def type_name(self) -> str:
        return S.TYPE_NAMES.get(self.type, str(self.type))


# ARM ELF ABI ("Mapping symbols"): mapping symbols ($a, $t, $d, optionally "$t.<n>") mark code/data
# boundaries; they are not program objects.
_MAPPING_PREFIX = b"$"


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


class Image:
    """The ET_EXEC view of an ElfFile. Raises InputError for anything but a linked ARM image."""

    def __init__(self, elf: ElfFile):
        self.elf = elf
        self._lookups: dict[str, tuple[Symbol, ...]] = {}
        if elf.e_type != S.ET_EXEC:
            raise InputError(elf.name, f"ELF type {elf.e_type}, expected {S.ET_EXEC} (ET_EXEC, "
                             "a linked executable)", 16)
        if elf.symtab_index is None:
            raise InputError(elf.name, "no symbol table (.symtab): was the image stripped?")
        self._check_symtab_bounds()

    @classmethod
    def from_path(cls, path: str | os.PathLike) -> "Image":
        return cls(ElfFile.from_path(path, machine=S.EM_ARM))

    @property
    def name(self) -> str:
        return self.elf.name

    @property
    def large(self) -> bool:
        """Is the symbol table large enough for numpy to pay (NUMPY_FROM)? Counted from the
        header: the entries from sh_info (the first non-local one) on."""
        count = self.elf.symtab_span[1]
        first_global = self.elf.shdrs[self.elf.symtab_index].sh_info
        return count - min(first_global, count) >= NUMPY_FROM

    @property
    def entry(self) -> int:
        return self.elf.entry

    def _fail(self, what: str, offset: int | None = None):
        raise InputError(self.elf.name, what, offset)

    def _check_symtab_bounds(self) -> None:
        i = self.elf.symtab_index
        sh = self.elf.shdrs[i]
        if sh.sh_type == S.SHT_NOBITS:
            self._fail("symbol table is SHT_NOBITS (no bytes in the file)", self.elf.shdr_offset(i))
        link = sh.sh_link
        shdrs = self.elf.shdrs
        if link >= len(shdrs) or shdrs[link].sh_type != S.SHT_STRTAB:
            self._fail(f"symbol table links to section {link}, expected a string table",
                       self.elf.shdr_offset(i) + 24)
        self.elf.symtab_span          # checks the entry size

    def _symbol_offset(self, index: int) -> int:
        return self.elf.symtab_span[0] + index * S.SYM_SIZE

    # -- names -------------------------------------------------------------------------------
    @cached_property
    def strtab(self) -> bytes:
        return self.elf.symbol_strtab

    def cut_names(self, offsets, rows) -> list[bytes]:
        """The NUL-terminated names at `offsets` (rows: .symtab indices, for errors). A name
        running to the end of the table without its NUL ends there.

        ld writes a global's name to .strtab as it writes the symbol, so the names of
        consecutive rows are usually consecutive strings: those come from one bytes.split,
        checked against the offsets; where the chain breaks it restarts (bytes.find per name
        after a few restarts)."""
        table = self.strtab
        if len(offsets) and max(offsets) >= max(len(table), 1):
            k = next(k for k, o in enumerate(offsets) if o >= max(len(table), 1))
            self._fail(f"symbol {rows[k]} name offset {offsets[k]} out of range "
                       f"(string table has {len(table)} bytes)", self._symbol_offset(rows[k]))
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
        limit = max(len(self.strtab), 1)
        if name and max(name) >= limit:
            k = next(k for k, o in enumerate(name) if o >= limit)
            self._fail(f"symbol {k} name offset {name[k]} out of range "
                       f"(string table has {len(self.strtab)} bytes)", self._symbol_offset(k))
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
        out = []
        for col in (name, value, size, shndx):
            new = array(col.typecode)
            for a, b in runs:
                new.extend(col[a:b])
            out.append(new)
        name, value, size, shndx = out
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
        names = self.cut_names(name, index)
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
        keep = [n[:1] not in (b"", _MAPPING_PREFIX) for n in names]
        if all(keep):
            return cols
        return cols.take_runs(_runs(bytes(keep)))

    # -- numpy views: large tables (weaklink.analyze.vectorised), weaklink diff, bind -----------
    @cached_property
    def _numpy_checked(self) -> tuple:
        """(raw Elf32_Sym array, widened st_shndx) of every entry, checked as `_fields` checks
        them; numpy is imported here, on first use."""
        import numpy as np
        syms = self.elf.symbols
        shndx = self.elf.symbol_section_indices()
        real = (shndx != S.SHN_UNDEF) & (shndx < S.SHN_LORESERVE)
        bad = np.flatnonzero(real & (shndx >= len(self.elf.shdrs)))
        if bad.size:
            k = int(bad[0])
            self._fail(f"symbol {k} section index {int(shndx[k])} out of range "
                       f"({len(self.elf.shdrs)} sections)", self._symbol_offset(k) + 14)
        names = syms["st_name"]
        limit = max(len(self.strtab), 1)
        if len(names) and int(names.max()) >= limit:
            k = int(np.flatnonzero(names >= limit)[0])
            self._fail(f"symbol {k} name offset {int(names[k])} out of range "
                       f"(string table has {len(self.strtab)} bytes)", self._symbol_offset(k))
        return syms, shndx

    def _numpy_columns(self, rows) -> SymbolColumns:
        """The numpy columns (name_off and name_len int64) of the .symtab entries `rows`
        (ascending positions)."""
        import numpy as np
        syms, shndx = self._numpy_checked
        syms, shndx, index = syms[rows], shndx[rows], rows.astype(np.uint32)
        info = syms["st_info"]
        binding, stype = info >> 4, info & 0xF
        # ARM ELF ABI: only STT_FUNC has the Thumb bit in st_value (see _select).
        address = np.where(stype == S.STT_FUNC, syms["st_value"] & ~np.uint32(1), syms["st_value"])
        name_off = syms["st_name"].astype(np.int64)
        return SymbolColumns(index, name_off, self._name_spans(name_off), binding, stype,
                             address.astype(np.uint32), syms["st_size"], shndx, info)

    @cached_property
    def strtab_u8(self):
        import numpy as np
        return np.frombuffer(self.strtab, np.uint8)

    @cached_property
    def _strtab_nuls(self):
        import numpy as np
        return np.flatnonzero(self.strtab_u8 == 0)

    def _name_spans(self, offsets):
        """Lengths of the NUL-terminated names at `offsets` (numpy; checked in _numpy_checked)."""
        import numpy as np
        table, nul = self.strtab_u8, self._strtab_nuls
        if nul.size == 0:
            return np.full(len(offsets), len(table), np.int64) - offsets
        pos = np.searchsorted(nul, offsets)
        ends = np.where(pos < nul.size, nul[np.minimum(pos, nul.size - 1)], len(table))
        return ends - offsets

    @cached_property
    def numpy_defined_globals(self) -> SymbolColumns:
        """`defined_globals` as numpy columns, selected with numpy (large tables)."""
        import numpy as np
        syms, shndx = self._numpy_checked
        info = syms["st_info"]
        binding, stype = info >> 4, info & 0xF
        keep = (binding != S.STB_LOCAL) & (shndx != S.SHN_UNDEF)
        keep &= (stype != S.STT_SECTION) & (stype != S.STT_FILE)
        return self._numpy_columns(np.flatnonzero(keep))

    @cached_property
    def targets(self) -> SymbolColumns:
        """`defined` as numpy columns sorted by address, for the numpy users (weaklink diff,
        bind): globals before locals at one address, then larger sizes (stable order)."""
        import numpy as np
        syms, shndx = self._numpy_checked
        stype = syms["st_info"] & 0xF
        keep = shndx != S.SHN_UNDEF
        keep[:1] = False                                    # entry 0
        keep &= (stype != S.STT_SECTION) & (stype != S.STT_FILE)
        if len(self.strtab):
            first = self.strtab_u8[np.minimum(syms["st_name"], len(self.strtab) - 1)]
            # a name that is empty starts with its NUL
            keep &= (first != _MAPPING_PREFIX[0]) & (first != 0)
        else:
            keep[:] = False
        c = self._numpy_columns(np.flatnonzero(keep))
        local = c.binding == S.STB_LOCAL
        if len(c.size) and int(c.size.max()) >= 1 << 31:
            order = np.lexsort((-c.size.astype(np.int64), local, c.address))
        else:           # one 64-bit key: address, then globals first, then the larger
            key = c.address.astype(np.uint64) << np.uint64(32)
            key |= local.astype(np.uint64) << np.uint64(31)
            key |= np.uint64(0x7FFFFFFF) - c.size.astype(np.uint64)
            from weaklink.arraysets import stable_order
            order = stable_order(key)
        return SymbolColumns(*(col[order] for col in c))

    def holder(self, address: int) -> tuple[str, int] | None:
        """(name, offset) of the innermost defined symbol whose [address, address + size)
        holds `address` (a zero-size symbol holds its own address); a function is probed
        with the Thumb bit cleared. At one start, globals win over locals, then the larger."""
        if self.large:
            return self._holder_numpy(address)
        c = self.defined
        best = None
        for k in compress(range(len(c)), map(address.__ge__, c.address)):
            start, size = c.address[k], c.size[k]
            probe = address & ~1 if c.type[k] == S.STT_FUNC else address
            if not (start <= probe < start + size or (size == 0 and start == probe)):
                continue
            key = (start, c.binding[k] != S.STB_LOCAL, size, -c.index[k])
            if best is None or key > best[0]:
                best = (key, k, probe - start)
        if best is None:
            return None
        k = best[1]
        return self.text(c.name_off[k], c.name_len[k]), best[2]

    def _holder_numpy(self, address: int) -> tuple[str, int] | None:
        """holder() over `targets` with numpy: the first (preferred) of the holders with the
        highest start."""
        import numpy as np
        t = self.targets
        probe = np.where(t.type == S.STT_FUNC, address & ~1, address).astype(np.int64)
        start = t.address.astype(np.int64)
        end = start + t.size
        inside = (start <= probe) & ((probe < end) | ((t.size == 0) & (start == probe)))
        hits = np.flatnonzero(inside)
        if not hits.size:
            return None
        best = hits[np.argmax(start[hits])]
        return self.text(int(t.name_off[best]), int(t.name_len[best])), int(probe[best] - start[best])

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
        raw = self.cut_names([name], [index])[0]
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

    # -- sections and segments -----------------------------------------------------------------
    def real_section(self, shndx: int) -> bool:
        """Is a symbol's (SHN_XINDEX-expanded) section index a section of the file? Not
        SHN_UNDEF, SHN_ABS or SHN_COMMON. With extended numbering (0xff00 sections or more)
        an expanded index may exceed SHN_LORESERVE; only ABS and COMMON are then ambiguous,
        and read as themselves."""
        return shndx != S.SHN_UNDEF and shndx < len(self.elf.shdrs) \
            and shndx not in (S.SHN_ABS, S.SHN_COMMON)

    def section_name(self, shndx: int) -> str | None:
        """Name of a real section index; None for SHN_ABS, SHN_COMMON and SHN_UNDEF."""
        return self.elf.section_names[shndx] if self.real_section(shndx) else None

    @cached_property
    def _alloc_sections(self) -> list[int]:
        sh = self.elf.shdrs
        rows = [i for i, s in enumerate(sh) if s.sh_flags & S.SHF_ALLOC]
        return sorted(rows, key=lambda i: sh[i].sh_addr)

    def section_at(self, address: int) -> int | None:
        """The allocated section whose [sh_addr, sh_addr + sh_size) holds `address`."""
        sh = self.elf.shdrs
        for i in reversed(self._alloc_sections):
            if sh[i].sh_addr <= address < sh[i].sh_addr + sh[i].sh_size:
                return i
        return None

    def segment_at(self, address: int) -> int | None:
        """Program-header index of the PT_LOAD segment whose [p_vaddr, p_vaddr + p_memsz)
        holds `address` (the run-time address; .data's load copy sits at p_paddr)."""
        for i, p in enumerate(self.elf.phdrs):
            if p.p_type == S.PT_LOAD and p.p_vaddr <= address < p.p_vaddr + p.p_memsz:
                return i
        return None

    def load_segments(self) -> list:
        """The PT_LOAD program headers (elf.Phdr records), in program-header order."""
        return [p for p in self.elf.phdrs if p.p_type == S.PT_LOAD]

    def _file_backed(self, shndx: int) -> bool:
        """Does the section have bytes that the loader copies? NOBITS never does (.bss,
        NOLOAD); a PROGBITS section outside every PT_LOAD's file image is not loaded either."""
        sh = self.elf.shdrs[shndx]
        if sh.sh_type == S.SHT_NOBITS or not sh.sh_flags & S.SHF_ALLOC:
            return False
        segs = self.load_segments()
        if not segs:
            return True
        off, size = sh.sh_offset, sh.sh_size
        return any(p.p_offset <= off and off + size <= p.p_offset + p.p_filesz for p in segs)

    def initial_bytes(self, sym: Symbol) -> bytes | None:
        """What the symbol holds at reset: its section's file bytes (PROGBITS) or zeros
        (NOBITS/NOLOAD). None when it has no section or runs past its section."""
        shndx = sym.shndx if self.real_section(sym.shndx) else self.section_at(sym.address)
        if shndx is None or shndx == S.SHN_UNDEF:
            return None
        sh = self.elf.shdrs[shndx]
        rel = sym.address - sh.sh_addr
        if rel < 0 or rel + sym.size > sh.sh_size:
            return None
        if not self._file_backed(shndx):
            return bytes(sym.size)
        start = sh.sh_offset + rel
        return self.elf.data[start:start + sym.size]

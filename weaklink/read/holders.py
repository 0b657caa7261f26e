"""Which symbol of a linked image holds an address, the one answer every command asks for (the
target of a pointer, the function around a PC or a call, the array a model starts at), and the
image's functions and ARM mapping symbols in order: the third part of weaklink.read.image.Image,
on the columns of weaklink.read.symbols."""
from __future__ import annotations

from bisect import bisect_right
from collections import namedtuple
from functools import cached_property
from itertools import accumulate, compress

from weaklink.read import elfstructs as S
from weaklink.read.symbols import MAPPING_PREFIX, Symbol, mapping_kind

# At one start address, a sized symbol, then an object or function, names an address before a
# linker-script marker (`__DDR4_start`: size 0, NOTYPE) that happens to sit there.
_TYPED = frozenset((S.STT_OBJECT, S.STT_FUNC))


class MappingSymbol(namedtuple("MappingSymbol", "address kind section unit")):
    """An ARM mapping symbol: from `address` on, section `section` holds Thumb code ("t"), data
    ("d") or ARM code ("a"); `unit` is the source file of the STT_FILE symbol ld listed it
    under (None: ld's own)."""

    __slots__ = ()


class Holders:
    """The address half of the symbol table. Needs `defined`, `_fields`, `cut_names`, `text`
    and `elf` from the image."""

    @cached_property
    def _by_address(self) -> tuple[list[int], list[int], list[int]]:
        """The rows of `defined` by start address, their starts, and the furthest end that a
        row up to each reaches (a symbol of size 0 holds its own address)."""
        c = self.defined
        order = sorted(range(len(c)), key=c.address.__getitem__)
        starts = [c.address[k] for k in order]
        reach = list(accumulate(map(int.__add__, starts, (max(c.size[k], 1) for k in order)), max))
        return order, starts, reach

    def row_at(self, address: int, kinds=None) -> int | None:
        """The row of `defined` that holds `address`, of one of the STT_* `kinds` (None: any).
        A symbol holds [address, address + size), a symbol of size 0 its own address, a
        function the address with its Thumb bit clear. The innermost start wins; at one start,
        a sized symbol, then an object or function, then a global, then the larger, then the
        later .symtab entry."""
        c = self.defined
        order, starts, reach = self._by_address
        low = address & ~1
        best, key = None, None
        k = bisect_right(starts, address) - 1
        while k >= 0 and reach[k] > low:
            start, row = starts[k], order[k]
            if key is not None and start < key[0]:
                break
            stype, size = c.type[row], c.size[row]
            probe = low if stype == S.STT_FUNC else address
            if (kinds is None or stype in kinds) and start <= probe < start + max(size, 1):
                rank = (start, size > 0, stype in _TYPED, c.binding[row] != S.STB_LOCAL, size,
                        c.index[row])
                if key is None or rank > key:
                    best, key = row, rank
            k -= 1
        return best

    def symbol_at(self, address: int, kinds=None) -> Symbol | None:
        """The defined symbol that holds `address` (see row_at), or None."""
        row = self.row_at(address, kinds)
        return None if row is None else self.row_symbol(row)

    def row_symbol(self, row: int) -> Symbol:
        """Row `row` of `defined` as a Symbol."""
        c = self.defined
        return Symbol(c.index[row], self.text(c.name_off[row], c.name_len[row]), c.binding[row],
                      c.type[row], c.address[row], c.size[row], c.shndx[row])

    @cached_property
    def functions(self) -> list[Symbol]:
        """Every defined function (STT_FUNC), locals too, by start address, then size, then
        name; the Thumb bit is clear."""
        c = self.defined
        rows = compress(range(len(c)), map(S.STT_FUNC.__eq__, c.type))
        return sorted(map(self.row_symbol, rows), key=lambda s: (s.address, s.size, s.name))

    @cached_property
    def mapping_symbols(self) -> list[MappingSymbol]:
        """The ARM mapping symbols ($t, $d, $a; AAELF32 "Mapping symbols") in .symtab order,
        each with the source file ld listed it under: ld copies each object's local symbols
        after an STT_FILE symbol naming its source."""
        name, value, _, info, shndx = self._fields
        table, out, unit = self.strtab, [], None
        if self.elf.symtab_index is None:
            return out
        first_global = min(self.elf.shdrs[self.elf.symtab_index].sh_info, len(name))
        for k in range(1, first_global):
            if info[k] & 0xF == S.STT_FILE:
                unit = self.cut_names([name[k]])[0].decode("utf-8", "replace") or None
            elif table[name[k]:name[k] + 1] == MAPPING_PREFIX:
                kind = mapping_kind(self.cut_names([name[k]])[0].decode("utf-8", "replace"))
                if kind is not None:
                    out.append(MappingSymbol(value[k] & ~1, kind, shndx[k], unit))
        return out

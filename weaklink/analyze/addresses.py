"""Which symbol holds an address: the pointer targets of an image.

A reset value that is a pointer names the symbol it points into (weaklink.analyze.values); the
NPU check names the objects its base addresses land in (weaklink.bind, weaklink.check). Both
rank the candidates alike: at one start address a global wins over a local, then the larger
symbol, then the earlier .symtab entry.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import compress

import numpy as np

from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.read.symbols import SymbolColumns

# numpy dtypes of the array.array columns, by typecode
_DTYPES = {"I": "<u4", "H": "<u2", "q": "<i8", "B": "u1"}


def as_numpy(cols: SymbolColumns) -> SymbolColumns:
    """The same columns as numpy arrays (views of the arrays' buffers, no copy)."""
    return SymbolColumns(*(np.frombuffer(c, _DTYPES[c.typecode]) if len(c)
                           else np.zeros(0, _DTYPES[c.typecode]) for c in cols))


@lru_cache(maxsize=4)
def targets(image: Image) -> SymbolColumns:
    """Every defined program symbol of `image` (Image.defined: locals too, a `static` array is
    a typical pointer target) as numpy columns sorted by address: globals before locals at
    one address, then larger sizes, then .symtab order. name_off and name_len are int64."""
    c = as_numpy(image.defined)
    local = c.binding == S.STB_LOCAL
    order = np.lexsort((-c.size.astype(np.int64), local, c.address))     # stable
    c = SymbolColumns(*(col[order] for col in c))
    c.name_off = c.name_off.astype(np.int64)
    c.name_len = c.name_len.astype(np.int64)
    c.shndx = c.shndx.astype(np.uint32)
    return c


def holder(image: Image, address: int) -> tuple[str, int] | None:
    """(name, offset) of the innermost defined symbol whose [address, address + size) holds
    `address` (a zero-size symbol holds its own address); a function is probed with the Thumb
    bit cleared. At one start, globals win over locals, then the larger."""
    c = image.defined
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
    return image.text(c.name_off[k], c.name_len[k]), best[2]

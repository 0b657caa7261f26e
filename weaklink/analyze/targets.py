"""The pointer targets of an image as numpy columns sorted by address: what the NPU check
(weaklink.bind, weaklink.check) and weaklink diff search when they ask which symbol holds
many addresses. Ranked as weaklink.analyze.addresses.holder ranks them.
"""
from __future__ import annotations

from functools import lru_cache

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

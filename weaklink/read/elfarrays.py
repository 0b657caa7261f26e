"""The tables of weaklink.read.elfstructs as numpy structured dtypes: the view of the readers that
take a whole table at once (section and program headers, .symtab, REL and RELA sections)."""
from __future__ import annotations

import numpy as np

from weaklink.read import elfstructs as S

_CODES = {"16s": "S16", "B": "u1", "H": "<u2", "I": "<u4", "i": "<i4"}


def _dtype(fields) -> np.dtype:
    return np.dtype([(name, _CODES[code]) for name, code in fields])


SHDR = _dtype(S.SHDR_FIELDS)
PHDR = _dtype(S.PHDR_FIELDS)
SYM = _dtype(S.SYM_FIELDS)
REL = _dtype(S.REL_FIELDS)
RELA = _dtype(S.RELA_FIELDS)

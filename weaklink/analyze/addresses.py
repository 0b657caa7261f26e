"""Which symbol holds an address, one address at a time: the symbol a pointer's reset value
points into (weaklink.analyze.values). Candidates rank alike here and in
weaklink.analyze.targets (the whole table at once, with numpy): at one start address a global
wins over a local, then the larger symbol, then the earlier .symtab entry.
"""
from __future__ import annotations

from itertools import compress

from weaklink.read import elfstructs as S
from weaklink.read.image import Image


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

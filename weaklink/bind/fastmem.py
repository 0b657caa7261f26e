"""The fast memory a firmware gives the Ethos-U driver, and the driver's rule for it.

`ethosu_init(drv, base_address, fast_memory, fast_memory_size, secure, privileged)` stores the
fast memory; at every invoke, when it is non-zero and the table has more than 2 entries, the
driver fails the invoke if `base_addr_size[2] > fast_memory_size` (it logs "Fast memory area
too small") and otherwise sets `base_addr[2] = fast_memory` (research brief §2, §4).

Where the value comes from, in order: a symbol the binding names; DWARF call-site parameters
of the call to `ethosu_init`; the constants loaded into r2/r3 before the BL. The source is
always said; when none tells, the value is unknown and nothing is substituted.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from weaklink.bind import callsite
from weaklink.bind.binding import FastMemoryRule
from weaklink.read import elfstructs as S

FAST_MEMORY_INDEX = 2           # base_addr index the driver replaces
DRIVER_CHECK = "Fast memory area too small"


@dataclass(frozen=True)
class FastMemory:
    address: int | None         # None: unknown
    size: int | None
    source: str                 # where the value was read, or "unknown"
    symbol: str | None = None   # the symbol at `address`, when one covers it
    note: str = ""

    @property
    def given(self) -> bool:
        """The driver substitutes region 2 only for a known, non-zero fast memory."""
        return bool(self.address)

    def to_json(self) -> dict:
        return {"address": self.address, "size": self.size, "source": self.source,
                "symbol": self.symbol, "note": self.note}


def symbol_at(image, address: int) -> str | None:
    """The name of a defined object or function symbol whose extent holds `address`."""
    t = image.targets
    if not len(t) or not address:
        return None
    rows = np.flatnonzero((t.address <= address)
                          & (address < t.address.astype(np.int64) + np.maximum(t.size, 1)))
    if not len(rows):
        return None
    row = int(rows[np.argmax(t.address[rows])])
    return image.text(int(t.name_off[row]), int(t.name_len[row]))


def _from_symbols(symbols, rule: FastMemoryRule) -> FastMemory | None:
    for k, name in enumerate(rule.symbols):
        fact = symbols.lookup(name, local=True)
        if fact is None:
            continue
        size_name = rule.size_symbols[k] if k < len(rule.size_symbols) else None
        size_fact = symbols.lookup(size_name, local=True) if size_name else None
        size = (symbols.word(size_fact) if size_fact else None) or fact.size or None
        return FastMemory(fact.address, size, f"symbol `{name}` named by the binding", name,
                          f"`{name}` at {fact.address:#x}, {size} bytes")
    return None


def _agreed(calls, source: str, image, callee: str) -> FastMemory | None:
    """One value when every call site of `callee` passes the same r2 (and r3)."""
    seen = {(c.values.get(2), c.values.get(3)) for c in calls if 2 in c.values}
    if not calls:
        return None
    if len(seen) != 1:
        sites = ", ".join(f"{c.call_site:#x}" for c in calls)
        why = "different values" if len(seen) > 1 else "no constant in r2"
        return FastMemory(None, None, "unknown",
                          note=f"{len(calls)} call(s) of {callee} at {sites} ({source}): {why}")
    address, size = seen.pop()
    where = f"{source} at {calls[0].call_site:#x}"
    name = symbol_at(image, address)
    what = f"`{name}` " if name else ""
    size_text = f"{size} bytes" if size is not None else "size unknown"
    return FastMemory(address, size, where, name,
                      f"{callee} receives {what}{address:#x}, {size_text} ({where})")


def resolve_fast_memory(symbols, rule: FastMemoryRule | None) -> FastMemory:
    """What the driver is initialised with. `symbols` is bind.table.ImageSymbols."""
    if rule is None:
        return FastMemory(None, None, "unknown", note="the binding says nothing about fast memory")
    named = _from_symbols(symbols, rule)
    if named is not None:
        return named
    image = symbols.image
    if not any(s.type == S.STT_FUNC for s in image.lookup(rule.callee)):
        return FastMemory(None, None, "unknown", note=f"{rule.callee} is not linked in the image")
    dwarf = callsite.from_dwarf(image.elf.data, rule.callee, image.elf.name)
    found = _agreed(dwarf, "DWARF call site", image, rule.callee)
    if found is not None and found.address is not None:
        return found
    code = callsite.from_code(image, rule.callee)
    found = _agreed(code, "literal pool / immediates before the call", image, rule.callee) or found
    if found is not None:
        return found
    return FastMemory(None, None, "unknown",
                      note=f"no call of {rule.callee} found in DWARF or in the code")

"""The fast memory a firmware gives the Ethos-U driver, and the driver's rule for it.

`ethosu_init(drv, base_address, fast_memory, fast_memory_size, secure, privileged)` stores the
fast memory; at every invoke, when it is non-zero and the table has more than 2 entries, the
driver fails the invoke if `base_addr_size[2] > fast_memory_size` (it logs "Fast memory area
too small") and otherwise sets `base_addr[2] = fast_memory` (docs/npu.md §5).

Where the value comes from, in order: a symbol the binding names; DWARF call-site parameters
of the call to `ethosu_init`; the constants loaded into r2/r3 before the BL. The source is
always said. A call whose r2 cannot be read is unknown (`address` None) and nothing is
substituted: the check cannot tell. With `ethosu_init` not linked, or linked but neither
called (directly or through ld's long-branch stub) nor held as a pointer anywhere in the image,
the driver has no fast memory. A binding without [fast_memory] assumes none, and says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


from npu.records import Record
from weaklink.bind import callsite, zephyrinit
from weaklink.bind.binding import FastMemoryRule
from weaklink.bind.callsite import FAST_MEMORY_REG, FAST_MEMORY_SIZE_REG, ArgValues
from weaklink.read import elfstructs as S
from weaklink.read.dwarf import dwarf_of
from weaklink.read.image import Image

FAST_MEMORY_INDEX = 2           # base_addr index the driver replaces
DRIVER_CHECK = "Fast memory area too small"
INIT = "ethosu_init"


class DriverInit:
    """The calls of the driver's init function in one image, each source read once: DWARF call
    sites and the code before each call. check reads r1 (the NPU base, weaklink.check.board)
    and r2, r3 (the fast memory) of the same calls. `calls`: a weaklink.bind.tflmcalls.Calls
    whose one scan of the code also reads these calls (check's), else they get a scan of
    their own."""

    def __init__(self, image: Image, callee: str = INIT, calls=None):
        self.image, self.callee = image, callee
        self._calls = calls if calls is not None and calls.callee == callee else None

    @cached_property
    def linked(self) -> bool:
        return any(s.type == S.STT_FUNC and s.shndx for s in self.image.lookup(self.callee))

    @cached_property
    def dwarf(self) -> list[ArgValues]:
        return callsite.from_dwarf(dwarf_of(self.image.elf), self.callee)

    @cached_property
    def code(self) -> list[callsite.CodeCall]:
        """The calls in the code; a call in a Zephyr device's init function, which only an init
        entry calls, read once per entry with its device in r0 (weaklink.bind.zephyrinit)."""
        targets, _ = callsite.callee_targets(self.image, self.callee)
        if self._calls is not None:
            calls = self._calls.callee_calls
        else:
            calls = callsite.calls_to(self.image, targets) if targets else []
        return zephyrinit.through_init_entries(self.image, calls, targets)


@dataclass(frozen=True)
class FastMemory(Record):
    address: int | None         # None: unknown
    size: int | None
    source: str                 # where the value was read, or "unknown"
    symbol: str | None = None   # the symbol at `address`, when one covers it
    note: str = ""
    assumption: str | None = None   # the value is assumed, not read: this sentence says what and why

    JSON = ("address", "size", "source", "symbol", "note", "unknown", "assumption")

    @property
    def given(self) -> bool:
        """The driver substitutes region 2 only for a known, non-zero fast memory."""
        return bool(self.address)

    @property
    def unknown(self) -> bool:
        return self.address is None



def _none(source: str, note: str, assumption: str | None = None) -> FastMemory:
    return FastMemory(0, 0, source, note=note, assumption=assumption)


def _from_symbols(image: Image, rule: FastMemoryRule) -> FastMemory | None:
    for k, name in enumerate(rule.symbols):
        sym = image.symbol_named(name, local=True)
        if sym is None:
            continue
        size_name = rule.size_symbols[k] if k < len(rule.size_symbols) else None
        size_sym = image.symbol_named(size_name, local=True) if size_name else None
        size = (image.initial_value(size_sym) if size_sym else None) or sym.size or None
        return FastMemory(sym.address, size, f"symbol `{name}` named by the binding", name,
                          f"`{name}` at {sym.address:#x}, {size} bytes")
    return None


def _agreed(calls, source: str, image, callee: str) -> FastMemory | None:
    """One value when every call site of `callee` passes the same known r2 (and r3); unknown,
    with why, when a site's r2 cannot be read or the sites disagree."""
    if not calls:
        return None
    call_sites = list(dict.fromkeys(c.call_site for c in calls))   # a Zephyr init function's once
    sites = ", ".join(f"{a:#x}" for a in call_sites)
    unread = [c for c in calls if FAST_MEMORY_REG not in c.values]
    if unread:
        why = next((c.note for c in unread if c.note), "") or \
            "r2 holds no constant there (loaded from memory, an argument, computed, or not the same on every path)"
        return FastMemory(None, None, "unknown",
                          note=f"the call of {callee} at {unread[0].call_site:#x} ({source}"
                               f"{f'; calls at {sites}' if len(call_sites) > 1 else ''}): {why}")
    seen = {(c.values[FAST_MEMORY_REG], c.values.get(FAST_MEMORY_SIZE_REG)) for c in calls}
    if len(seen) != 1:
        return FastMemory(None, None, "unknown",
                          note=f"{len(calls)} call(s) of {callee} at {sites} ({source}) pass "
                               "different fast memories")
    address, size = seen.pop()
    where = f"{source} at {calls[0].call_site:#x}"
    held = image.symbol_at(address) if address else None
    name = held.name if held else None
    what = f"`{name}` " if name else ""
    size_text = f"{size} bytes" if size is not None else "size unknown"
    return FastMemory(address, size, where, name,
                      f"{callee} receives {what}{address:#x}, {size_text} ({where})")


def resolve_fast_memory(image: Image, rule: FastMemoryRule | None,
                        init: DriverInit | None = None) -> FastMemory:
    """What the driver is initialised with. `init`: the calls of `rule.callee` already read
    (check reads them once for the NPU base too)."""
    if rule is None:
        return _none("assumed", "the binding says nothing about fast memory",
                     "the driver is given no fast memory (the binding has no [fast_memory] "
                     "table), so base_addr[2] is used as the backend passes it")
    named = _from_symbols(image, rule)
    if named is not None:
        return named
    if init is None or init.callee != rule.callee:
        init = DriverInit(image, rule.callee)
    if not init.linked:
        # The driver keeps fast memory only from its init function: not linked, none given.
        return _none("not linked", f"{rule.callee} is not linked in the image: the driver is "
                     "given no fast memory")
    found = _agreed(init.dwarf, "DWARF call site", image, rule.callee)
    if found is not None and found.address is not None:
        return found
    found = _agreed(init.code, "literal pool / immediates before the call", image, rule.callee) or found
    if found is not None:
        return found
    pointer = callsite.address_taken(image, rule.callee)
    if pointer is not None:
        return FastMemory(None, None, "unknown",
                          note=f"no call of {rule.callee} in the code, but its address is held at "
                               f"{pointer:#x}: it is called through a pointer, with arguments the "
                               f"code before a call does not show")
    # Never called: the driver keeps the fast memory it was initialised with, none.
    return _none("never called", f"{rule.callee} is linked but nothing calls it or holds its "
                 "address: the driver is given no fast memory")

"""Where a value the code computes comes from, for the constant-tracking reader
(weaklink.bind.callsite): markers a tracing run puts in registers for what the calling
function's arguments are, what a call returns and what a load the reader cannot follow reads."""
from __future__ import annotations

# A value no constant can take as the entry marker of argument register k: seeded at a
# function's entry, a register that still holds ARGUMENT_MARK + k at a call holds the caller's
# own argument k untouched (only moves between registers keep a value exact).
ARGUMENT_MARK = 0xA11C0DE0

# Markers no constant the reader keeps can take (they live only in a tracing run, never in the
# values reported): what a call returns in r0, and what a load from memory the reader cannot
# follow reads; `mark + small offset` (a pointer aligned up, a field) stays attributed.
RETURNED, LOADED = 0xE0000000, 0xD0000000
_MARK_SPAN = 0x10000


class Trace:
    """The origins of the values a function computes: each call's return value and each
    load the reader cannot follow get a marker; stores to constant addresses are kept, so a
    value stored and loaded back keeps its origin."""

    def __init__(self):
        self.origins: dict[int, tuple] = {}        # marker -> (kind, pc, target or address)
        self.keys: dict[tuple, int] = {}
        self.stores: dict[int, int | None] = {}
        self.constants: dict[int, tuple[int, int]] = {}   # value -> (load pc, read-only address)

    def mark(self, kind: int, pc: int, what) -> int:
        key = (kind, pc)
        if key not in self.keys:
            self.keys[key] = kind + len(self.keys) * _MARK_SPAN
            self.origins[self.keys[key]] = (kind, pc, what)
        return self.keys[key]

    def memory(self, constant):
        def read(pc, address):
            value = constant(pc, address) if constant else None
            if value is not None:
                self.constants.setdefault(value, (pc, address))
            else:
                value = self.stores.get(address)
            if value is not None:
                return value
            # a field of an argument, or of what a call returned or a load read: no address
            relative = (0 <= address - ARGUMENT_MARK < _MARK_SPAN or self.origin(address) is not None)
            return self.mark(LOADED, pc, None if relative else address)
        return read

    def origin(self, value: int | None) -> tuple | None:
        """(RETURNED, call pc, callee) or (LOADED, load pc, address) for a marked value."""
        if value is None:
            return None
        for kind in (RETURNED, LOADED):
            if kind - _MARK_SPAN // 2 <= value < kind + 0x1000000:
                return self.origins.get(kind + ((value - kind + _MARK_SPAN // 2) // _MARK_SPAN) * _MARK_SPAN)
        return None

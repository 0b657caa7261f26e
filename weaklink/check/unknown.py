"""What a check cannot tell, and what it assumes instead of reading.

- `unknown` is a verdict of its own: the image does not say what the verdict depends on. The
  driver replaces region 2 with the fast memory `ethosu_init` received, when that is not 0 and
  the table has more than 2 entries, after failing the invoke when base_addr_size[2] exceeds
  its size ("Fast memory area too small"). A call whose r2 (or, with a fast memory, r3) cannot
  be read leaves both unjudged whenever the stream uses region 2 or the entry has a size.
- An assumption is a fact the verdict rests on that the image does not show (a tensor arena
  found by its name, no fast memory where no call of ethosu_init was found): each is one
  sentence, printed with the report.
"""
from __future__ import annotations

from weaklink.bind.fastmem import DRIVER_CHECK, FAST_MEMORY_INDEX
from weaklink.bind.tflm import ARENA_OPTION
from npu.report import RunResult


def binding_assumptions(tables) -> tuple[str, ...]:
    """What the tables rest on that the image does not show, each said once."""
    texts = (getattr(part, "assumption", "") for t in tables for part in (t.fast_memory, t.arena))
    return tuple(dict.fromkeys(text for text in texts if text))


def reader_assumptions(ops, rules) -> tuple[str, ...]:
    """A pointer rule with no evidence either way takes the binding's documented behaviour:
    the reader reads the pointer. Said when a stream uses that region."""
    out = []
    for op in ops:
        for b in op.table.bases:
            ev = b.evidence
            rule = rules.region(b.region)
            if ev is None or ev.reads is not None or b.region not in op.needs or rule is None:
                continue
            name = b.symbol.name if b.symbol else rule.symbols[0]
            out.append(f"`{name}` is read by the {rule.reader} code and passed as region "
                       f"{b.region} ({b.name}), as the {rules.name} binding documents: there is "
                       f"no evidence either way ({ev.detail}; give the link's objects with "
                       f"--link-input, or link with --emit-relocs, to decide)")
    return tuple(dict.fromkeys(out))


def cannot_tell_fast_memory(table, needs: dict[int, int]) -> str | None:
    """Why the driver's fast-memory rule cannot be applied, when it matters: with more than 2
    entries the driver replaces region 2 by a non-zero fast memory, after failing the invoke
    when base_addr_size[2] exceeds its size. A fast memory that cannot be read matters when
    the stream uses region 2 or the entry's size could fail that check."""
    fast, base = table.fast_memory, table.base(FAST_MEMORY_INDEX)
    if fast is None or base is None or len(table.bases) <= FAST_MEMORY_INDEX:
        return None
    used = FAST_MEMORY_INDEX in needs
    if fast.unknown and (used or base.size):
        return (f"the driver replaces region {FAST_MEMORY_INDEX} with ethosu_init's fast memory "
                f"when it is not 0, and the image does not say what it is: {fast.note}")
    if fast.given and fast.size is None and (used or base.size):
        return (f"ethosu_init's fast memory is {fast.address:#x}, but its size cannot be read "
                f"({fast.note}): the driver's check \"{DRIVER_CHECK}\" against "
                f"{base.size} bytes and the stream's {needs.get(FAST_MEMORY_INDEX, 0)} bytes "
                f"in region {FAST_MEMORY_INDEX} cannot be judged")
    return None


def unknown_needed(table, needs: dict[int, int]) -> list:
    """The bases the stream uses that the image does not say (a tensor arena not known)."""
    return [b for b in table.bases if b.unknown and b.region in needs]


def cannot_tell_base(table, needs: dict[int, int]) -> str | None:
    """Why a stream that uses a base the image does not say cannot be emulated."""
    missing = unknown_needed(table, needs)
    if not missing:
        return None
    regions = ", ".join(f"{b.region} ({b.name})" for b in missing)
    arena = table.arena
    why = arena.source if arena is not None else "no tensor arena was found"
    return (f"the stream uses region{'s' if len(missing) > 1 else ''} {regions} in TFLM's tensor "
            f"arena, and {why} (give {ARENA_OPTION})")


def not_emulated(run: dict, needs: dict[int, int]):
    """The result of a stream that is not emulated: its bases are not known (status `unknown`,
    no cycles); nothing is run at a 0 that means "not found"."""
    return RunResult("unknown", None, run["accelerator"], run["system_config"], run["memory_mode"],
                     run["soc"], (), {"total": 0}, {}, {}, (), 0.0)

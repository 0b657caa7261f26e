"""Which SoC an image runs on, from evidence: the NPU base address it gives `ethosu_init`, and
whether its loadable segments fit the SoC's memory map.

- `--soc NAME|FILE.toml|zephyr.dts` names it; the NPU base the image passes is still read and
  reported.
- Without it, the preset whose NPU register page is the address the image passes to
  `ethosu_init` (r1 at the call, read as weaklink.bind.fastmem reads its fast memory: DWARF
  call sites, else the constants before the BL) is chosen, when the image loads inside its map;
  with no such preset, the accelerator's Corstone when the image loads inside its map.
- An image that loads outside the chosen map is `unknown` ("give --soc"): the NPU's view of a
  map the image was not built for would be a guess, and its hang a false one.
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record
from npu.soc import Soc
from npu.socfile import board_for, default_soc, load_soc, soc_names
from weaklink.bind.fastmem import INIT, DriverInit

BASE_REG = 1            # ethosu_init(drv, base_address, ...): r1 under the AAPCS


@dataclass(frozen=True)
class NpuBase(Record):
    address: int | None         # None: the image does not say
    source: str                 # where it was read, or why it cannot be


@dataclass(frozen=True)
class SocChoice(Record):
    soc: Soc
    why: str
    npu_base: NpuBase
    unknown: str | None = None  # why the SoC cannot be told: the verdict is `unknown`

    JSON = ("name=soc.name", "file", "why", "unknown")

    @property
    def ref(self) -> str:
        """What npu.api.run's `soc` takes: the preset's name or the file."""
        return self.soc.name if self.soc.origin == "preset" else self.soc.origin

    @property
    def file(self) -> str | None:
        """The --soc FILE it was read from; None for a preset."""
        return None if self.soc.origin == "preset" else self.soc.origin


def npu_base(init: DriverInit) -> NpuBase:
    """The base address every call of ethosu_init passes in r1, when they agree. A call in a
    Zephyr device's init function is read once per init entry, with its device in r0
    (weaklink.bind.zephyrinit): the source names the entries."""
    if not init.linked:
        return NpuBase(None, f"{INIT} is not linked")
    read_with = ""
    for calls, how in ((init.dwarf, "DWARF call site"), (init.code, "the constants before the call")):
        seeds = "; ".join(dict.fromkeys(c.seed for c in calls if getattr(c, "seed", "")))
        if seeds:
            how, read_with = f"the code before the call, with {seeds}", f" (read with {seeds})"
        known = {c.values[BASE_REG] for c in calls if BASE_REG in c.values}
        if calls and len(known) == 1 and all(BASE_REG in c.values for c in calls):
            sites = ", ".join(dict.fromkeys(f"{c.call_site:#x}" for c in calls))
            return NpuBase(known.pop(), f"r1 of {INIT} at {sites} ({how})")
        if len(known) > 1:
            return NpuBase(None, f"the calls of {INIT} pass different base addresses "
                                 f"({', '.join(f'{k:#x}' for k in sorted(known))}){read_with}")
    return NpuBase(None, f"r1 of {INIT} holds no constant at its call (computed, or loaded from "
                         f"memory){read_with}")


def outside(image, soc: Soc) -> tuple[int, int] | None:
    """The first loaded range [start, end) no memory of the SoC holds, or None when all fit."""
    for p in image.load_segments():
        spans = [(p.p_vaddr, p.p_vaddr + p.p_memsz)] if p.p_memsz else []
        if p.p_filesz and p.p_paddr != p.p_vaddr:
            spans.append((p.p_paddr, p.p_paddr + p.p_filesz))
        for start, end in spans:
            gap = _uncovered(soc, start, end)
            if gap is not None:
                return gap
    return None


def _uncovered(soc: Soc, start: int, end: int) -> tuple[int, int] | None:
    at = start
    while at < end:
        mem = soc.memory_at(at)
        if mem is None:
            return at, end
        at = mem.origin + mem.length
    return None


def choose(image, acc, given: str | None, init: DriverInit) -> SocChoice:
    """`init`: the calls of ethosu_init, read once for the NPU base and the fast memory."""
    base = npu_base(init)
    if given:
        soc = board_for(acc, given)
        why = "given with --soc"
        if base.address is not None and soc.npu_base and base.address not in soc.npu_base:
            why += (f"; the image passes {INIT} {base.address:#x}, not {soc.name}'s NPU register page "
                    f"({', '.join(f'{b:#x}' for b in soc.npu_base)})")
        return SocChoice(soc, why, base)
    fallback = board_for(acc, None)
    if base.address is not None:
        # the presets whose NPU is there; one that carries this very accelerator first (the
        # Ensemble E7's HE and HP cores see their NPUs at the same address)
        matches = [s for s in map(load_soc, soc_names()) if base.address in s.npu_base and acc.family in s.npus]
        matches.sort(key=lambda s: acc.name not in s.accelerators)
        for soc in matches:
            gap = outside(image, soc)
            if gap is None:
                note = (f" (it carries {' or '.join(soc.accelerators)}, not {acc.name})"
                        if soc.accelerators and acc.name not in soc.accelerators else "")
                return SocChoice(board_for(acc, soc.name), f"the image passes {INIT} {base.address:#x}, "
                                 f"{soc.name}'s NPU register page ({base.source}), and loads inside "
                                 f"its memory map{note}", base)
        if matches:
            return SocChoice(fallback, "", base, _unknown(outside(image, matches[0]), matches[0], base))
    gap = outside(image, fallback)
    if gap is not None:
        return SocChoice(fallback, "", base, _unknown(gap, fallback, base))
    known = f"no preset's NPU is at {base.address:#x}" if base.address is not None else base.source
    return SocChoice(fallback, f"the default for {acc.family} ({default_soc(acc)}): the image loads "
                     f"inside its memory map; {known}", base)


def _unknown(gap, soc: Soc, base: NpuBase) -> str:
    start, end = gap
    npu = (f"the image passes {INIT} {base.address:#x}" if base.address is not None else
           f"the image's NPU base is unknown ({base.source})")
    return (f"the image loads at [{start:#x}, {end:#x}), outside {soc.name}'s memory map, and {npu}: "
            f"the SoC it runs on is unknown: give --soc (a preset: {', '.join(soc_names())}; "
            f"a FILE.toml; or a Zephyr build's zephyr.dts)")

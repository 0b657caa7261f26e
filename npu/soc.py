"""The SoC around the NPU: which memory an address hits, whether the NPU can reach it, and
through which AXI port.

Presets live in ``npu/data/soc.toml``: every memory says whether the NPU reaches it, through
which ports Arm's documentation shows it, through which further ports it is only assumed to
(with the sentence a report prints when a verdict rests on it), and its sources. The region ->
port wiring (REGIONCFG, and MEM_ATTR on U85) per memory mode is in ``npu/data/regioncfg.toml``.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, replace

from npu.errors import InputError
from npu.hw import DATA, Accelerator, MemoryMode, SystemConfig

NUM_REGIONS = 8

# What an NPU transaction that nothing answers does, from the Ethos-U core driver
# (pytorch-labs/ethos-u-core-driver-mirror src/ethosu_driver.c, src/ethosu_device_u*.c): the NPU
# raises its interrupt only when the command stream ends or a fault is flagged (STATUS.bus_status
# and friends make the IRQ handler fail the invoke); the bare-metal ethosu_semaphore_take()
# ignores its timeout and waits in __WFE() until that interrupt. An access that is never answered
# therefore never returns. Arm's CMSIS-Ethos-U integration guide describes the symptom: an
# inference that does not complete, QREAD stopping, "Confirm that the command stream, constants,
# tensor arena, and any scratch-fast buffer are all accessible to the NPU".
STALL = ("the transaction is never answered, so the NPU never reaches the end of its command "
         "stream or raises its interrupt, and the bare-metal driver waits for it forever")
STALL_ASSUMPTION = ("an NPU access to memory it cannot reach is never answered and stalls the NPU "
                    "(what ExecuTorch's CI saw with a fast-scratch base of 0 on the Corstone-320 FVP); "
                    "Arm's documentation does not say what the interconnect answers, and were it a bus "
                    "error, the driver would fail the invoke (-1) instead")
# The Ethos-U55's AXI1 (M1) manager has no write channel: Arm CMSIS-Ethos-U, Vela chapter ("The
# Ethos-U55 hardware AXI1 port is a read-only interface"); the FVP setup page: "Ethos-U55 does
# not use Dedicated_Sram because its AXI1 interface is read-only".
READ_ONLY_ASSUMPTION = ("a write routed to the Ethos-U55's read-only AXI1 port is never performed "
                        "and stalls the NPU (Arm documents the port as read-only, not what the "
                        "NPU does with such a write)")


@dataclass(frozen=True)
class SocMemory:
    name: str
    origin: int
    length: int
    kind: str                 # Vela class (Sram, Dram, OffChipFlash, OnChipFlash) or Tcm/Bram/Rom
    ports: tuple[str, ...]    # every port that reaches it, documented or assumed
    npu: bool = True          # the NPU can reach it at all
    documented: tuple[str, ...] = ()    # the ports Arm's documentation shows reaching it
    assumption: str | None = None       # printed when a verdict rests on an assumed port
    why: str | None = None              # why the NPU cannot reach it
    source: tuple[str, ...] = ()        # citations
    alias_of: str | None = None         # an alias: the memory's name

    def contains(self, address: int, size: int = 1) -> bool:
        return self.origin <= address and address + max(size, 1) <= self.origin + self.length

    @property
    def label(self) -> str:
        return self.alias_of or self.name


@dataclass(frozen=True)
class Soc:
    name: str
    npus: tuple[str, ...]
    ports: tuple[str, ...]
    memories: tuple[SocMemory, ...]
    aliases: tuple[SocMemory, ...] = ()
    areas: dict | None = None           # Vela's Axi0/Axi1 -> the SoC memory behind it
    unmapped: str = ""
    npus_source: tuple[str, ...] = ()

    @property
    def npu(self) -> str:
        return self.npus[0]

    @functools.cached_property
    def _decoded(self) -> tuple[SocMemory, ...]:
        return self.memories + self.aliases

    def memory_at(self, address: int) -> SocMemory | None:
        return next((m for m in self._decoded if m.contains(address)), None)


@dataclass(frozen=True)
class Reach:
    """Whether one access reaches memory: `reason` says why not (and what happens), `assumption`
    what a yes rests on when no Arm document found says so."""
    memory: SocMemory | None
    reason: str | None = None
    assumptions: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.reason is None


@functools.lru_cache(maxsize=None)
def _soc_table() -> dict:
    return tomllib.loads((DATA / "soc.toml").read_text())


def soc_names() -> list[str]:
    return list(_soc_table())


def _cite(keys, sources) -> tuple[str, ...]:
    return tuple(sources.get(k, k) for k in keys)


@functools.lru_cache(maxsize=None)
def load_soc(name: str) -> Soc:
    table = _soc_table()
    if name not in table:
        raise InputError(None, f"unknown SoC preset {name!r} (known: {', '.join(table)})")
    s = table[name]
    sources = s.get("sources", {})
    mems = []
    for m in s["memories"]:
        documented = tuple(m.get("ports", ()))
        mems.append(SocMemory(m["name"], m["origin"], m["length"], m["kind"],
                              documented + tuple(m.get("assumed_ports", ())) if m.get("npu", True) else (),
                              m.get("npu", True), documented, m.get("assumption"), m.get("why"),
                              _cite(m.get("source", ()), sources)))
    by_name = {m.name: m for m in mems}
    aliases = tuple(replace(by_name[a["of"]], name=a["name"], origin=a["origin"], length=a["length"],
                            source=by_name[a["of"]].source + _cite(a.get("source", ()), sources), alias_of=a["of"])
                    for a in s.get("aliases", ()))
    return Soc(name, tuple(s["npus"]), tuple(s["ports"]), tuple(mems), aliases, dict(s.get("areas", {})),
               s.get("unmapped", ""), _cite(s.get("npus_source", ()), sources))


def default_soc(acc: Accelerator) -> str:
    return "corstone-320" if acc.is_u85 else "corstone-300"


def board_for(acc: Accelerator, name: str | None) -> Soc:
    """The SoC preset `name` (default: the accelerator's Corstone), refused in one line when it
    cannot carry this accelerator: no Arm subsystem pairs an Ethos-U85 with the SSE-300, nor an
    Ethos-U55/U65 with the SSE-320."""
    board = load_soc(name or default_soc(acc))
    if acc.family not in board.npus:
        raise InputError(None, f"SoC preset {board.name} carries {' or '.join(board.npus)}, not "
                               f"{acc.name}: give --soc {default_soc(acc)} (or another preset "
                               f"with an {acc.family})")
    return board


@functools.lru_cache(maxsize=None)
def _regioncfg() -> dict:
    return tomllib.loads((DATA / "regioncfg.toml").read_text())


def _mode_row(memory_mode: str) -> dict:
    """A memory mode's REGIONCFG per region and QCONFIG (Dedicated_Sram_384KB uses Dedicated_Sram's)."""
    modes = _regioncfg()["modes"]
    for name in sorted(modes, key=len, reverse=True):
        if memory_mode == name or memory_mode.startswith(name + "_"):
            return modes[name]
    return modes["Shared_Sram"]


def region_port(soc: Soc, memory_mode: str, region: int) -> str:
    """The AXI port a region's transactions go out on."""
    return soc.ports[_regioncfg()["port_of_value"][_mode_row(memory_mode)["regioncfg"][region]]]


def stream_port(soc: Soc, memory_mode: str) -> str:
    """The AXI port the command stream is fetched through (QCONFIG)."""
    return soc.ports[_regioncfg()["port_of_value"][_mode_row(memory_mode)["qconfig"]]]


def default_placements(soc: Soc, sysconf: SystemConfig, mode: MemoryMode,
                       sizes: dict[int, int], regions: set[int]) -> dict[int, int]:
    """Where Vela assumes each region lives (its address; 0 when no SoC memory fits): the memory
    class of its AXI area in the memory mode, placed one after another (16-byte aligned) from
    the start of that SoC memory."""
    out, cursor = {}, {}
    for region in sorted(set(sizes) | regions):
        area = mode.area_for_region(region)
        vela_class = sysconf.axi0_port if area == "Axi0" else sysconf.axi1_port
        mem = next((m for m in soc.memories if m.kind == vela_class), None)
        if mem is None:
            port = soc.ports[0 if area == "Axi0" else 1]
            mem = next((m for m in soc.memories if port in m.documented), None)
        if mem is None:
            out[region] = 0
            continue
        out[region] = addr = cursor.get(mem.name, mem.origin)
        cursor[mem.name] = (addr + sizes.get(region, 0) + 15) & ~15
    return out


@dataclass(frozen=True)
class Timing:
    """The Vela memory class whose parameters time a memory's traffic, and the assumption
    that choice rests on (None: the system config describes that memory)."""
    vela_class: str
    assumption: str | None = None


def area_of(soc: Soc, sysconf: SystemConfig, mem: SocMemory) -> str | None:
    """The Vela area (Axi0 / Axi1) whose memory `mem` is on this SoC: the area's documented
    memory, or a memory of the class the system config puts on that area."""
    for area, name in (soc.areas or {}).items():
        if mem.label == name:
            return area
    for area, cls in (("Axi0", sysconf.axi0_port), ("Axi1", sysconf.axi1_port)):
        if mem.kind == cls:
            return area
    return None


def timing(soc: Soc, sysconf: SystemConfig, mem: SocMemory | None, port: str) -> Timing:
    """How the emulator times traffic to `mem`: as the class the system config puts on the
    memory's area (SRAM behind Axi0, DDR behind Axi1 on the Corstones: what Vela assumed of
    that memory, wherever the region came from); else as the memory's own class when the
    config describes it; else as the class the config puts on the port, an assumption."""
    area = area_of(soc, sysconf, mem) if mem is not None else None
    if area is not None:
        return Timing(sysconf.axi0_port if area == "Axi0" else sysconf.axi1_port)
    if mem is not None and mem.kind in sysconf.described:
        return Timing(mem.kind)
    on_port = sysconf.axi0_port if soc.ports.index(port) == 0 else sysconf.axi1_port
    if mem is None or not mem.npu:
        return Timing(on_port)          # the access hangs: its timing is never used
    return Timing(on_port, f"{soc.name}: {mem.label} has no timing in {sysconf.name} (no Vela memory class "
                           f"of its own there); its traffic is timed as {on_port}, the memory the "
                           f"system config puts on the {port} port")


def reach(soc: Soc, port: str, address: int, size: int, write: bool = False,
          read_only_ports: tuple[str, ...] = ()) -> Reach:
    """Whether every byte of [address, address+size) is reachable through `port` (for a write,
    whether the port can write). A failure's reason names what the access hits and why it never
    completes."""
    at = f"0x{address:08x}"
    mem = soc.memory_at(address)
    if mem is None:
        note = f" ({soc.unmapped})" if soc.unmapped else ""
        return Reach(None, f"no memory on {soc.name} is mapped at {at}{note}; {STALL}", (STALL_ASSUMPTION,))
    if not mem.npu:
        return Reach(mem, f"{at} is {mem.name}, {mem.why}: the NPU's AXI ports have no path to it "
                          f"({mem.source[0] if mem.source else 'no source'}); {STALL}",
                     tuple(a for a in (mem.assumption, STALL_ASSUMPTION) if a))
    if port not in mem.ports:
        via = " or ".join(mem.ports)
        return Reach(mem, f"{at} is {mem.name}, reachable through {via}, not the {port} port; {STALL}",
                     (STALL_ASSUMPTION,))
    end = address + max(size, 1) - 1
    if not mem.contains(end):
        return Reach(mem, f"the access ends at 0x{end:08x}, past the end of {mem.name}; {STALL}",
                     (STALL_ASSUMPTION,))
    if write and port in read_only_ports:
        return Reach(mem, f"a write to {at} ({mem.name}) on the {port} port, which is read-only on "
                          f"this NPU (Arm CMSIS-Ethos-U: the Ethos-U55's AXI1 interface is read-only); "
                          f"{STALL}", (READ_ONLY_ASSUMPTION,))
    return Reach(mem, None, (mem.assumption,) if port not in mem.documented and mem.assumption else ())

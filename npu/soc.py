"""The SoC around the NPU: which memory an address hits, whether the NPU can reach it, and
through which AXI port; and the QEMU machine an image of the SoC boots on.

Presets live in ``npu/data/soc.toml`` (read by npu/socfile.py): every memory says whether the
NPU reaches it, through which ports Arm's documentation shows it, through which further ports
it is only assumed to (with the sentence a report prints when a verdict rests on it), and its
sources. The region -> port wiring (REGIONCFG, and MEM_ATTR on U85) per memory mode is in
``npu/data/regioncfg.toml``; QEMU's machines are in ``npu/data/qemu.toml``.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass

from npu.hw import DATA, MemoryMode, SystemConfig

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
    timing_assumption: str | None = None  # why its Vela class times it, when no source says
    port_timing: bool = False           # timed as its port's class where the config lacks its own

    def contains(self, address: int, size: int = 1) -> bool:
        return self.origin <= address and address + max(size, 1) <= self.origin + self.length

    @property
    def label(self) -> str:
        return self.alias_of or self.name


@dataclass(frozen=True)
class Remap:
    """A CPU-local window onto a memory and the global address every other manager (the NPU)
    reaches it at: `(address & mask) + target` for an address in [origin, origin + length)."""
    name: str
    origin: int
    length: int
    mask: int
    target: int
    source: tuple[str, ...] = ()

    def contains(self, address: int) -> bool:
        return self.origin <= address < self.origin + self.length

    def apply(self, address: int) -> int:
        return (address & self.mask) + self.target


@dataclass(frozen=True)
class PortRule:
    """What the SoC's documented `ethosu_config_select` override does: a region (or the command
    stream) whose NPU address is at or above `at_or_above` goes out on `port`; the others keep
    the memory mode's REGIONCFG."""
    at_or_above: int
    port: str
    source: tuple[str, ...] = ()

    def port_for(self, address: int, default: str) -> str:
        return self.port if address >= self.at_or_above else default


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
    npu_base: tuple[int, ...] = ()      # where the NPU's registers are (each alias)
    npu_base_source: tuple[str, ...] = ()
    accelerators: tuple[str, ...] = ()  # the accelerator configs it carries (empty: any of npus)
    remaps: tuple[Remap, ...] = ()      # CPU-local aliases -> the global address the NPU reaches
    port_rule: PortRule | None = None
    origin: str = "preset"              # "preset", or the file it was read from
    assumptions: tuple[str, ...] = ()   # what a map read from a file does not tell
    npu_irq: int | None = None          # the NPU's interrupt
    vectors: int | None = None          # where its images put the vector table, when not where
                                        # the reset of the QEMU machine that runs them reads it

    def remap(self, address: int) -> int:
        """The global address of a CPU-local one (what the SoC's remap hook returns)."""
        r = next((r for r in self.remaps if r.contains(address)), None)
        return r.apply(address) if r is not None else address

    @property
    def npu(self) -> str:
        return self.npus[0]

    @functools.cached_property
    def _decoded(self) -> tuple[SocMemory, ...]:
        return self.memories + self.aliases

    def memory_at(self, address: int) -> SocMemory | None:
        return next((m for m in self._decoded if m.contains(address)), None)


@dataclass(frozen=True)
class QemuMemory:
    """A memory of a QEMU machine as an image sees it: at `origin`, and at `origin | alias`."""
    name: str
    origin: int
    length: int
    rom: bool = False                   # read-only to the CPU
    alias: int = 0                      # the secure alias's address bit (0: none)

    def spans(self) -> list[tuple[int, int]]:
        spans = [(self.origin, self.origin + self.length)]
        if self.alias:
            spans.append((self.origin | self.alias, (self.origin | self.alias) + self.length))
        return spans

    def contains(self, address: int, size: int = 1) -> bool:
        return any(lo <= address and address + max(size, 1) <= hi for lo, hi in self.spans())


@dataclass(frozen=True)
class QemuBoard:
    """A QEMU machine (npu/data/qemu.toml) as an image built for one SoC preset meets it: the
    memory the image may use, where its vector table is, and its NPU's page and interrupt."""
    name: str
    machine: str                        # QEMU's -M
    memories: tuple[QemuMemory, ...]
    vector_table: int                   # where the image's table must be: SP, reset, handlers
    npu_pages: tuple[int, ...]
    npu_irq: int
    soc: str                            # the preset whose images it runs
    reset_table: int                    # where the machine's reset reads SP and PC
    nvic_ispr: int                      # NVIC Interrupt Set-Pending Register 0
    vtor: int                           # SCB Vector Table Offset Register
    lacks: str = ""                     # the SoC's memory the machine does not have

    def memory_at(self, address: int, size: int = 1) -> QemuMemory | None:
        return next((m for m in self.memories if m.contains(address, size)), None)

    def describe(self) -> str:
        text = ", ".join(f"{m.name} 0x{m.origin:08x}+{m.length >> 10} KiB" for m in self.memories)
        return text + (f"; not {self.lacks}" if self.lacks else "")


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


VELA_CLASSES = ("Sram", "Dram", "OnChipFlash", "OffChipFlash")


def timing(soc: Soc, sysconf: SystemConfig, mem: SocMemory | None, port: str) -> Timing:
    """How the emulator times traffic to `mem`: as the memory's own Vela class (its `kind`)
    with the system config's parameters for that class; a class the config does not describe
    has Vela's defaults for it (an assumption, said), unless the SoC shapes that memory's
    traffic per port (`port_timing`: the Corstones' timing adapters): then the class the config
    puts on the port. A memory with no Vela class of its own
    (TCM, BRAM, ROM) is timed as the class the config puts on the area whose memory it is, else
    as the class the config puts on its port (an assumption)."""
    on_port = sysconf.axi0_port if soc.ports.index(port) == 0 else sysconf.axi1_port
    if mem is None or not mem.npu:
        return Timing(on_port)          # the access hangs: its timing is never used
    if mem.kind in VELA_CLASSES:
        note = f" ({mem.timing_assumption})" if mem.timing_assumption else ""
        if mem.kind in sysconf.described:
            return Timing(mem.kind, f"{soc.name}: {mem.label} is timed as {mem.kind}{note}" if note else None)
        if mem.port_timing:             # the SoC shapes each port's traffic (timing adapters)
            return Timing(on_port)
        return Timing(mem.kind, f"{soc.name}: {mem.label} is {mem.kind}{note}, which {sysconf.name} does not "
                                f"describe: its traffic is timed with Vela's defaults for {mem.kind} "
                                f"(clock scale 1.0, burst 32, no latency)")
    area = area_of(soc, sysconf, mem)
    if area is not None:
        return Timing(sysconf.axi0_port if area == "Axi0" else sysconf.axi1_port)
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
        # memories decoded back to back are one address range to the NPU's AXI manager: an
        # access that runs on into the next one (Himax WE2's SRAM0 into SRAM1) is judged there
        boundary = mem.origin + mem.length
        following = soc.memory_at(boundary)
        if following is not None and following.origin == boundary:
            rest = reach(soc, port, boundary, end + 1 - boundary, write, read_only_ports)
            if rest.ok:
                here = reach(soc, port, address, boundary - address, write, read_only_ports)
                return Reach(mem, here.reason, tuple(dict.fromkeys(here.assumptions + rest.assumptions)))
            return rest
        return Reach(mem, f"the access ends at 0x{end:08x}, past the end of {mem.name}; {STALL}",
                     (STALL_ASSUMPTION,))
    if write and port in read_only_ports:
        return Reach(mem, f"a write to {at} ({mem.name}) on the {port} port, which is read-only on "
                          f"this NPU (Arm CMSIS-Ethos-U: the Ethos-U55's AXI1 interface is read-only); "
                          f"{STALL}", (READ_ONLY_ASSUMPTION,))
    return Reach(mem, None, (mem.assumption,) if port not in mem.documented and mem.assumption else ())

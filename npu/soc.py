"""The SoC around the NPU: which memory an address hits and which AXI port reaches it.

Presets live in ``npu/data/soc.toml`` (with their assumptions). The region -> port wiring
(REGIONCFG, and MEM_ATTR on U85) per memory mode is in ``npu/data/regioncfg.toml``.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass

from npu.errors import InputError
from npu.hw import DATA, Accelerator, MemoryMode, SystemConfig

NUM_REGIONS = 8


@dataclass(frozen=True)
class SocMemory:
    name: str
    origin: int
    length: int
    kind: str                 # Vela class (Sram, Dram, OffChipFlash, OnChipFlash) or Tcm/Bram/Rom
    ports: tuple[str, ...]

    def contains(self, address: int, size: int = 1) -> bool:
        return self.origin <= address and address + max(size, 1) <= self.origin + self.length


@dataclass(frozen=True)
class Soc:
    name: str
    npu: str
    ports: tuple[str, ...]
    memories: tuple[SocMemory, ...]

    def memory_at(self, address: int) -> SocMemory | None:
        return next((m for m in self.memories if m.contains(address)), None)


@functools.lru_cache(maxsize=None)
def _soc_table() -> dict:
    return tomllib.loads((DATA / "soc.toml").read_text())


def soc_names() -> list[str]:
    return list(_soc_table())


def load_soc(name: str) -> Soc:
    table = _soc_table()
    if name not in table:
        raise InputError(None, f"unknown SoC preset {name!r} (known: {', '.join(table)})")
    s = table[name]
    mems = tuple(SocMemory(m["name"], m["origin"], m["length"], m["kind"], tuple(m["ports"]))
                 for m in s["memories"])
    return Soc(name, s["npu"], tuple(s["ports"]), mems)


def default_soc(acc: Accelerator) -> str:
    return "corstone-320" if acc.is_u85 else "corstone-300"


@functools.lru_cache(maxsize=None)
def _regioncfg() -> dict:
    return tomllib.loads((DATA / "regioncfg.toml").read_text())


def regioncfg(memory_mode: str) -> list[int]:
    """REGIONCFG per region for a memory mode (Dedicated_Sram_384KB uses Dedicated_Sram's)."""
    return list(_mode_row(memory_mode)["regioncfg"])


def _mode_row(memory_mode: str) -> dict:
    modes = _regioncfg()["modes"]
    for name in sorted(modes, key=len, reverse=True):
        if memory_mode == name or memory_mode.startswith(name + "_"):
            return modes[name]
    return modes["Shared_Sram"]


def region_port(soc: Soc, memory_mode: str, region: int) -> str:
    """The AXI port a region's transactions go out on."""
    index = _regioncfg()["port_of_value"][regioncfg(memory_mode)[region]]
    return soc.ports[index]


def stream_port(soc: Soc, memory_mode: str) -> str:
    """The AXI port the command stream is fetched through (QCONFIG)."""
    return soc.ports[_regioncfg()["port_of_value"][_mode_row(memory_mode)["qconfig"]]]


@dataclass(frozen=True)
class Placement:
    address: int
    memory: SocMemory | None


def default_placements(soc: Soc, sysconf: SystemConfig, mode: MemoryMode,
                       sizes: dict[int, int], regions: set[int]) -> dict[int, Placement]:
    """Where Vela assumes each region lives: the memory class of its AXI area in the memory
    mode, placed one after another (16-byte aligned) from the start of that SoC memory."""
    out, cursor = {}, {}
    for region in sorted(set(sizes) | regions):
        area = mode.area_for_region(region)
        vela_class = sysconf.axi0_port if area == "Axi0" else sysconf.axi1_port
        mem = next((m for m in soc.memories if m.kind == vela_class), None)
        if mem is None:
            port = soc.ports[0 if area == "Axi0" else 1]
            mem = next((m for m in soc.memories if port in m.ports), None)
        if mem is None:
            out[region] = Placement(0, None)
            continue
        addr = cursor.get(mem.name, mem.origin)
        out[region] = Placement(addr, mem)
        cursor[mem.name] = (addr + sizes.get(region, 0) + 15) & ~15
    return out


def unreachable_reason(soc: Soc, port: str, address: int, size: int) -> str | None:
    """None when every byte of [address, address+size) is reachable through `port`."""
    mem = soc.memory_at(address)
    if mem is None:
        return f"no memory on {soc.name} is mapped at 0x{address:08x}"
    if port not in mem.ports:
        via = " or ".join(mem.ports) if mem.ports else "no NPU port (CPU-only)"
        return f"0x{address:08x} is {mem.name}, reachable through {via}, not the {port} port"
    end = address + max(size, 1) - 1
    if not mem.contains(end):
        return f"the access ends at 0x{end:08x}, past the end of {mem.name}"
    return None

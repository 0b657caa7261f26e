"""Hardware as data: accelerator configs, Vela system configs and memory modes.

Accelerators come from ``npu/data/accelerators.toml``. System configs and memory modes
come from a Vela ``vela.ini`` (the bundled copy of Vela's ``Arm/vela.ini`` by default, or a
user's file), with Vela's names, values, defaults and ``inherit``.
"""
from __future__ import annotations

import configparser
import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from npu.errors import InputError, read_input

DATA = Path(__file__).resolve().parent.parent / "data"
VELA_INI = DATA / "vela.ini"
MEMORY_CLASSES = ("Sram", "Dram", "OnChipFlash", "OffChipFlash")


@dataclass(frozen=True)
class Accelerator:
    name: str
    family: str            # ethos-u55 | ethos-u65 | ethos-u85
    product: int
    macs: int
    cores: int
    config_word: int
    id_word: int
    ofm_ublock: tuple[int, int, int]
    output_cycles: tuple[float, ...]
    activation_cycles: tuple[float, ...]
    channel_rbs: tuple[int, ...] | None
    ports: tuple[str, ...]
    axi_bytes: int
    commands: str
    microblocks: tuple[tuple[int, int], ...] | None
    ifm_au: tuple[tuple[int, int, int, int], ...] = ()
    weight_overfetch: int = 0
    shram_kb: int = 0      # U55/U65 shared buffer; its last 2 KB hold the activation LUTs
    read_only_ports: tuple[str, ...] = ()   # AXI ports with no write channel (U55: AXI1)

    def ifm_alloc_unit(self, uh: int, uw: int) -> tuple[int, int]:
        return next(((au_h, au_w) for h, w, au_h, au_w in self.ifm_au if (h, w) == (uh, uw)), (uh, uw))

    @property
    def is_u85(self) -> bool:
        return self.family == "ethos-u85"


@dataclass(frozen=True)
class Memory:
    """One Vela memory class within a system config (bandwidths in bytes per NPU cycle)."""
    name: str
    clock_scale: float
    burst_length: int
    read_latency: int
    write_latency: int
    max_reads: int
    max_writes: int
    ports_used: int
    bandwidth: float


@dataclass(frozen=True)
class SystemConfig:
    name: str
    core_clock: float
    axi0_port: str
    axi1_port: str
    memories: dict[str, Memory]
    # The memory classes the config describes: its two ports' classes and any class it gives a
    # parameter for. The others hold Vela's neutral defaults (clock scale 1, latency 0).
    described: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MemoryMode:
    name: str
    const_mem_area: str    # Axi0 | Axi1
    arena_mem_area: str
    cache_mem_area: str
    arena_cache_size: int | None

    def area_for_region(self, region: int) -> str:
        """Vela's regions: 0 read-only (const), 1 scratch (arena), 2 fast scratch (cache)."""
        return {0: self.const_mem_area, 2: self.cache_mem_area}.get(region, self.arena_mem_area)


@functools.lru_cache(maxsize=None)
def _accelerator_table() -> dict:
    return tomllib.loads((DATA / "accelerators.toml").read_text())


def accelerator_names() -> list[str]:
    return [k for k in _accelerator_table() if k != "family"]


def accelerator(name: str) -> Accelerator:
    table = _accelerator_table()
    if name not in table or name == "family":
        raise InputError(None, f"unknown accelerator {name!r} (known: {', '.join(accelerator_names())})")
    a, fam = table[name], table["family"][table[name]["family"]]
    mb = fam.get("microblocks")
    return Accelerator(
        name=name, family=a["family"], product=a["product"], macs=a["macs"], cores=a["cores"],
        config_word=a["config_word"], id_word=a["id_word"], ofm_ublock=tuple(a["ofm_ublock"]),
        output_cycles=tuple(a["output_cycles"]), activation_cycles=tuple(a["activation_cycles"]),
        channel_rbs=tuple(a["channel_rbs"]) if "channel_rbs" in a else None,
        ports=tuple(fam["ports"]), axi_bytes=fam["axi_bytes"], commands=fam["commands"],
        microblocks=tuple(tuple(x) for x in mb) if mb else None,
        ifm_au=tuple(tuple(x) for x in a.get("ifm_au", ())), weight_overfetch=fam.get("weight_overfetch", 0),
        shram_kb=a.get("shram_kb", 0), read_only_ports=tuple(fam.get("read_only_ports", ())))


def commands_for_product(product: int) -> str:
    for name in accelerator_names():
        a = _accelerator_table()[name]
        if a["product"] == product:
            return _accelerator_table()["family"][a["family"]]["commands"]
    raise KeyError(product)


# ------------------------------------------------------------------------- vela.ini
@dataclass(frozen=True)
class VelaIni:
    path: Path
    system_configs: dict[str, SystemConfig]
    memory_modes: dict[str, MemoryMode]

    def system_config(self, name: str) -> SystemConfig:
        if name not in self.system_configs:
            raise InputError(self.path, f"no [System_Config.{name}] (known: {', '.join(self.system_configs)})"
                             f"{self._own_ini_hint}")
        return self.system_configs[name]

    def memory_mode(self, name: str) -> MemoryMode:
        if name not in self.memory_modes:
            raise InputError(self.path, f"no [Memory_Mode.{name}] (known: {', '.join(self.memory_modes)})"
                             f"{self._own_ini_hint}")
        return self.memory_modes[name]

    @property
    def _own_ini_hint(self) -> str:
        """Vendors ship their own vela.ini (Alif's ensemble_vela.ini, Himax's himax_vela.ini):
        a name missing from the stock one says how to give theirs."""
        return "; give the project's own vela.ini with --vela-ini FILE" if self.path == VELA_INI else ""


def _number(path, section, key, raw, kind, minimum=0):
    """A vela.ini number: finite and at least ``minimum`` (clocks, scales, ports and burst
    lengths divide cycle counts, so they must be positive; latencies may be 0)."""
    try:
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError
        value = kind(value)
    except (ValueError, OverflowError):
        raise InputError(path, f"[{section}] {key} = {raw!r} is not a finite number") from None
    if value < minimum or value > 1e15:
        raise InputError(path, f"[{section}] {key} = {raw!r}: expected a number from {minimum} to 1e15")
    return value


def _resolved(cp, path, section, seen=()) -> dict[str, str]:
    """A section's keys with ``inherit`` applied (Vela: the child's keys win)."""
    if section in seen:
        raise InputError(path, f"[{section}] inherits from itself")
    if not cp.has_section(section):
        raise InputError(path, f"inherit names a missing section [{section}]")
    own = dict(cp.items(section))
    parent = own.pop("inherit", None)
    return {**(_resolved(cp, path, parent, seen + (section,)) if parent else {}), **own}


def _system_config(path, section, name, keys) -> SystemConfig:
    get = lambda key, default, kind=float, minimum=1e-9: _number(  # noqa: E731
        path, section, key, keys.get(key.lower(), default), kind, 1 if kind is int and minimum else minimum)
    # regor.cpp: bandwidth = clock_scale * axi width (8 B for Ethos_U55 configs, else 16) * ports
    axi_bytes = 8 if name.startswith("Ethos_U55") else 16
    memories = {}
    for mem in MEMORY_CLASSES:
        scale, ports = get(f"{mem}_clock_scale", 1.0), get(f"{mem}_ports_used", 1, int)
        memories[mem] = Memory(
            name=mem, clock_scale=scale, burst_length=get(f"{mem}_burst_length", 32, int),
            read_latency=get(f"{mem}_read_latency", 0, int, 0), write_latency=get(f"{mem}_write_latency", 0, int, 0),
            max_reads=get(f"{mem}_max_reads", 16, int, 0), max_writes=get(f"{mem}_max_writes", 16, int, 0),
            ports_used=ports, bandwidth=scale * axi_bytes * ports)
    ports = {k: keys.get(k, "Sram") for k in ("axi0_port", "axi1_port")}
    for key, value in ports.items():
        if value not in MEMORY_CLASSES:
            raise InputError(path, f"[{section}] {key} = {value!r} is not one of {MEMORY_CLASSES}")
    described = frozenset({ports["axi0_port"], ports["axi1_port"]}
                          | {m for m in MEMORY_CLASSES for k in keys if k.startswith(m.lower() + "_")})
    return SystemConfig(name, get("core_clock", 500e6), ports["axi0_port"], ports["axi1_port"], memories, described)


def _memory_mode(path, section, name, keys) -> MemoryMode:
    areas = {}
    for key in ("const_mem_area", "arena_mem_area", "cache_mem_area"):
        areas[key] = keys.get(key, "Axi0")
        if areas[key] not in ("Axi0", "Axi1"):
            raise InputError(path, f"[{section}] {key} = {areas[key]!r} is not Axi0 or Axi1")
    size = keys.get("arena_cache_size")
    return MemoryMode(name, **areas,
                      arena_cache_size=_number(path, section, "arena_cache_size", size, int) if size else None)


@functools.lru_cache(maxsize=8)
def load_vela_ini(path: str | Path | None = None) -> VelaIni:
    """Parse a vela.ini (the bundled Arm/vela.ini when ``path`` is None)."""
    path = Path(path) if path else VELA_INI
    cp = configparser.ConfigParser()
    try:
        cp.read_string(read_input(path, text=True, what="vela.ini"))
    except (OSError, configparser.Error) as e:
        raise InputError(path, f"cannot read vela.ini: {e}") from None
    systems, modes = {}, {}
    for section in cp.sections():
        kind, _, name = section.partition(".")
        if kind == "System_Config":
            systems[name] = _system_config(path, section, name, _resolved(cp, path, section))
        elif kind == "Memory_Mode":
            modes[name] = _memory_mode(path, section, name, _resolved(cp, path, section))
    return VelaIni(path, systems, modes)

"""Static findings on a base-address table, before anything is emulated, each under one of
check's rules (weaklink.rules: their ids, severities and help texts): fast-scratch-null,
fast-scratch-too-small, fast-scratch-unreachable (fast_scratch_findings), fast-memory-too-small
(fast_memory_findings) and region-not-in-assumed-memory (placement_findings, after the
emulation). The firmware-analysis rules (`near-miss-override`, …) come from weaklink.analyze.
"""
from __future__ import annotations

from npu.hw import MemoryMode, SystemConfig
from npu.soc import Soc, area_of, reach, region_port, timing
from weaklink.bind.fastmem import DRIVER_CHECK
from weaklink.bind.table import BaseAddressTable, BoundBase
from weaklink.rules import (FAST_MEMORY_TOO_SMALL, FAST_SCRATCH_NULL, FAST_SCRATCH_TOO_SMALL,
                            FAST_SCRATCH_UNREACHABLE, REGION_NOT_IN_ASSUMED_MEMORY, Finding)


def defined_by(base: BoundBase) -> str:
    """Who set the base: `name` = WEAK default or strong definition (from its unit), or none."""
    if base.symbol is None:
        return "no definition"
    kind = "WEAK default" if base.symbol.binding == "weak" else "strong definition"
    where = f" from {base.symbol.defined_in}" if base.symbol.defined_in else ""
    return f"`{base.symbol.name}` = {kind}{where}"


def fast_scratch_findings(table: BaseAddressTable, region: int, needs: dict[int, int],
                          soc: Soc, memory_mode: str, read_only_ports: tuple[str, ...],
                          hooks=None) -> list[Finding]:
    """`hooks` (weaklink.check.hooks.DriverHooks): the address and port the NPU gets when the
    image overrides the driver's remap or port hooks."""
    base = table.base(region)
    if base is None or region not in needs:
        return []  # the stream never touches it (Shared_Sram, Sram_Only): 0/0 is right
    name = base.symbol.name if base.symbol else f"region {region}"
    need = needs[region]
    if base.address == 0:
        return [FAST_SCRATCH_NULL.finding(
            name, f"the model stages {need} bytes in region {region} ({base.name}) but its "
            f"base is 0: {base.note}")]
    out = []
    if 0 < base.size < need:
        out.append(FAST_SCRATCH_TOO_SMALL.finding(
            name, f"region {region} ({base.name}) is {base.size} bytes ({defined_by(base)}) "
            f"but the model addresses {need} bytes of it"))
    address = hooks.npu_address(base.address) if hooks else base.address
    port = hooks.port(region, address) if hooks else region_port(soc, memory_mode, region)
    # the fast scratch is staging memory: the stream writes it
    r = reach(soc, port, address, max(base.size, 1), write=True, read_only_ports=read_only_ports)
    if not r.ok:
        via = f" (the NPU gets {address:#x})" if address != base.address else ""
        out.append(FAST_SCRATCH_UNREACHABLE.finding(
            name, f"region {region} ({base.name}){via} goes through the {port} AXI port in "
            f"{memory_mode}, but {r.reason}"))
    return out


def placement_findings(run, needs: dict[int, int], soc: Soc, sysconf: SystemConfig, mode: MemoryMode,
                       rerun, names: dict[int, str] | None = None) -> list[Finding]:
    """Regions that completed in a memory other than the one the memory mode assumed: Vela
    placed region r's tensors in the memory behind mode.area_for_region(r) (SRAM behind Axi0,
    DDR behind Axi1 on the Corstones) and scheduled for its speed. `rerun(cost_as)` emulates
    the same stream with those regions timed as the assumed memory; the difference is what the
    placement costs: a warning when slower, an info when not slower but the memory's timing is
    itself an assumption."""
    if run.status != "ok":
        return []
    out = []
    for b in run.bases:
        mem = soc.memory_at(b.address)
        if b.region not in needs or mem is None or not mem.npu:
            continue
        area = mode.area_for_region(b.region)
        if area_of(soc, sysconf, mem) == area:
            continue
        assumed_class = sysconf.axi0_port if area == "Axi0" else sysconf.axi1_port
        assumed_name = (soc.areas or {}).get(area, assumed_class)
        actual = int(run.cycles["total"])
        assumed = int(rerun({b.region: assumed_class}).cycles["total"])
        guessed = timing(soc, sysconf, mem, b.port).assumption
        if actual <= assumed and not guessed:
            continue                   # faster than assumed, and timed from the system config
        delta = actual - assumed
        cost = (f"{actual} cycles against {assumed} with it in {assumed_name} "
                f"({delta:+d}, {100.0 * delta / max(assumed, 1):+.1f}%)")
        if guessed:
            cost += f"; {mem.label} is timed as {b.timed_as} (an assumption)"
        what = (names or {}).get(b.region, f"region {b.region}")
        out.append(REGION_NOT_IN_ASSUMED_MEMORY.finding(
            what, f"region {b.region} is in {mem.label} at {b.address:#x}, but {mode.name} "
            f"assumes it in {assumed_name} ({area}, {assumed_class} in {sysconf.name}); "
            f"the NPU reaches {mem.label} through its {b.port} port, so this is not a hang: {cost}",
            None if delta > 0 else "info"))
    return out


def fast_memory_findings(table: BaseAddressTable, region: int, needs: dict[int, int]) -> list[Finding]:
    """The driver's own check: with fast memory given and more than `region` entries, the
    invoke fails when base_addr_size[region] exceeds fast_memory_size."""
    fast, base = table.fast_memory, table.base(region)
    if fast is None or not fast.given or fast.size is None or base is None or len(table.bases) <= region:
        return []
    name = fast.symbol or f"{fast.address:#x}"
    if base.size <= fast.size:
        # the driver's check passes; the stream may still reach past the fast memory
        need = needs.get(region, 0)
        if need > fast.size:
            return [FAST_SCRATCH_TOO_SMALL.finding(
                name, f"region {region} ({base.name}) is ethosu_init's fast memory, "
                f"{fast.size} bytes ({fast.source}), but the model addresses "
                f"{need} bytes of it")]
        return []
    return [FAST_MEMORY_TOO_SMALL.finding(
        name, f"ethosu_invoke_v3 fails its check \"{DRIVER_CHECK}\": region {region} "
        f"({base.name}) is {base.size} bytes but ethosu_init was given {fast.size} "
        f"bytes of fast memory ({fast.source})")]

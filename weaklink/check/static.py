"""Static findings on a base-address table, before anything is emulated.

| rule                      | severity | when                                                     |
|---------------------------|----------|----------------------------------------------------------|
| fast-scratch-null         | error    | the stream uses the fast-scratch region but its base is 0 |
|                           |          | (weak default survived, no definition, or never read)    |
| fast-scratch-too-small    | error    | the base is set, but its size is below what the stream   |
|                           |          | addresses in that region                                 |
| fast-scratch-unreachable  | error    | the base lies in a memory the region's AXI port cannot   |
|                           |          | reach in this memory mode                                |
| fast-memory-too-small     | error    | ethosu_init was given fast memory smaller than the       |
|                           |          | table's region-2 size: the driver fails the invoke       |
|                           |          | ("Fast memory area too small")                           |

Rule ids are part of the JSON contract: never rename them. The firmware-analysis rules
(`near-miss-override`, `override-not-extracted`, …) come from weaklink.analyze.
"""
from __future__ import annotations

from npu.soc import Soc, region_port, unreachable_reason
from weaklink.analyze.findings import Finding
from weaklink.bind.fastmem import DRIVER_CHECK
from weaklink.bind.table import BaseAddressTable, BoundBase

FAST_SCRATCH_NULL = "fast-scratch-null"
FAST_SCRATCH_TOO_SMALL = "fast-scratch-too-small"
FAST_SCRATCH_UNREACHABLE = "fast-scratch-unreachable"
FAST_MEMORY_TOO_SMALL = "fast-memory-too-small"


def _who(base: BoundBase) -> str:
    if base.symbol is None:
        return "no definition"
    kind = "WEAK default" if base.symbol.binding == "weak" else "strong definition"
    where = f" from {base.symbol.defined_in}" if base.symbol.defined_in else ""
    return f"`{base.symbol.name}` = {kind}{where}"


def fast_scratch_findings(table: BaseAddressTable, region: int, needs: dict[int, int],
                          soc: Soc, memory_mode: str) -> list[Finding]:
    base = table.base(region)
    if base is None or region not in needs:
        return []  # the stream never touches it (Shared_Sram, Sram_Only): 0/0 is right
    name = base.symbol.name if base.symbol else f"region {region}"
    need = needs[region]
    if base.address == 0:
        return [Finding(FAST_SCRATCH_NULL, "error", name,
                        f"the model stages {need} bytes in region {region} ({base.name}) but its "
                        f"base is 0: {base.note}")]
    out = []
    if 0 < base.size < need:
        out.append(Finding(FAST_SCRATCH_TOO_SMALL, "error", name,
                           f"region {region} ({base.name}) is {base.size} bytes ({_who(base)}) "
                           f"but the model addresses {need} bytes of it"))
    port = region_port(soc, memory_mode, region)
    reason = unreachable_reason(soc, port, base.address, max(base.size, 1))
    if reason:
        out.append(Finding(FAST_SCRATCH_UNREACHABLE, "error", name,
                           f"region {region} ({base.name}) goes through the {port} AXI port in "
                           f"{memory_mode}, but {reason}"))
    return out


def fast_memory_findings(table: BaseAddressTable, region: int,
                         needs: dict[int, int] | None = None) -> list[Finding]:
    """The driver's own check: with fast memory given and more than `region` entries, the
    invoke fails when base_addr_size[region] exceeds fast_memory_size."""
    fast, base = table.fast_memory, table.base(region)
    if fast is None or not fast.given or base is None or len(table.bases) <= region:
        return []
    name = fast.symbol or f"{fast.address:#x}"
    if fast.size is None:
        return []
    if base.size <= fast.size:
        # the driver's check passes; the stream may still reach past the fast memory
        need = needs.get(region, 0) if needs else 0
        if need > fast.size:
            return [Finding(FAST_SCRATCH_TOO_SMALL, "error", name,
                            f"region {region} ({base.name}) is ethosu_init's fast memory, "
                            f"{fast.size} bytes ({fast.source}), but the model addresses "
                            f"{need} bytes of it")]
        return []
    return [Finding(FAST_MEMORY_TOO_SMALL, "error", name,
                    f"ethosu_invoke_v3 fails its check \"{DRIVER_CHECK}\": region {region} "
                    f"({base.name}) is {base.size} bytes but ethosu_init was given {fast.size} "
                    f"bytes of fast memory ({fast.source})")]

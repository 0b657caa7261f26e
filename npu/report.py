"""One result object, rendered as a human table or as the JSON contract (docs/json-contract.md).

Every column has a label (Vela's per-layer column names where Vela has one) and a machine
key; both renderings come from the same column table.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from npu.records import Record, to_json

SCHEMA_VERSION = 1
# The index the driver passes its platform hooks (ethosu_address_remap, ethosu_config_select)
# for the command stream, whose address goes to QBASE and whose port to QCONFIG
# (ethos-u-core-driver ethosu_device_u55_u65.c, ethosu_device_u85.c)
STREAM_REGION = -1
# Vela memory class -> (JSON key in "cycles", Vela's per-layer column label)
ACCESS_COLUMNS = {"Sram": ("sram_access", "SRAM AC"), "Dram": ("dram_access", "DRAM AC"),
                  "OnChipFlash": ("onchip_flash_access", "OnFlash AC"),
                  "OffChipFlash": ("offchip_flash_access", "OffFlash AC")}
# per-operation columns: (machine key, label, width)
OP_COLUMNS = (("offset", "Offset", 8), ("op", "NNG Operator", 12), ("start", "Start", 10),
              ("cycles", "Op Cycles", 10), ("npu", "NPU", 10), ("sram_access", "SRAM AC", 9),
              ("dram_access", "DRAM AC", 9), ("onchip_flash_access", "OnFlash AC", 10),
              ("offchip_flash_access", "OffFlash AC", 11), ("macs", "MAC Count", 10),
              ("util_mac", "Util% (MAC)", 11))


@dataclass(frozen=True)
class BaseReport(Record):
    region: int
    address: int
    size: int | None
    memory: str | None
    port: str | None
    timed_as: str | None = None      # the Vela memory class whose parameters time its traffic


@dataclass(frozen=True)
class RunResult(Record):
    status: str                                   # ok | hang | error
    diagnosis: str | None
    accelerator: str
    system_config: str
    memory_mode: str
    soc: str
    bases: tuple[BaseReport, ...]
    cycles: dict[str, int]
    pmu: dict
    traffic: dict[str, dict[str, int]]
    operations: tuple[dict, ...]
    inference_time_s: float
    core_clock: float = 0.0
    timeline: tuple[dict, ...] = field(default_factory=tuple)   # for --plot: op, start, end, ports
    region_traffic: tuple[dict, ...] = field(default_factory=tuple)  # per region: feature maps, weights, scales, DMA
    fault_region: int | None = None               # the region whose access hung or overran
    functional: object | None = None              # npu.functional.FunctionalRun of a --functional run
    assumptions: tuple[str, ...] = ()             # what the verdict rests on (SoC model, timing)
    stream: BaseReport | None = None              # the command stream's fetch (region -1), when its address is given

    schema_version = SCHEMA_VERSION
    JSON = ("schema_version", "status", "diagnosis", "accelerator", "system_config", "memory_mode",
            "soc", "bases", "cycles", "pmu", "traffic", "operations", "region_traffic",
            "inference_time_s", "assumptions", "functional?", "stream?")

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "ok" else 1

    def dumps(self) -> str:
        return json.dumps(to_json(self), indent=2)

    def to_table(self) -> str:
        lines = [f"status: {self.status}"]
        if self.diagnosis:
            lines.append(f"diagnosis: {self.diagnosis}")
        lines += [f"{self.accelerator} / {self.system_config} / {self.memory_mode} on {self.soc}", "",
                  f"{'Region':>6} {'Base':>12} {'Size':>10} {'Memory':>8} {'Port':>6}"]
        for b in self.bases:
            size = "-" if not b.size else str(b.size)
            lines.append(f"{b.region:>6} {b.address:>#12x} {size:>10} {b.memory or '(none)':>8} {b.port or '-':>6}")
        if self.operations:
            lines += ["", " ".join(f"{label:>{w}}" for _, label, w in OP_COLUMNS)]
            for o in self.operations:
                cells = []
                for key, _, w in OP_COLUMNS:
                    v = o.get(key, "")
                    v = f"0x{v:06x}" if key == "offset" else (f"{v:.2f}" if isinstance(v, float) else v)
                    cells.append(f"{v:>{w}}")
                lines.append(" ".join(cells))
        lines.append("")
        for key, value in self.cycles.items():
            lines.append(f"{key + ' cycles':<28} {value:>14}")
        for key, value in self.pmu.items():
            if isinstance(value, dict):
                value = ", ".join(f"{p} {n}" for p, n in value.items()) or "-"
            lines.append(f"{'PMU ' + key:<28} {value:>14}")
        for mem, t in self.traffic.items():
            lines.append(f"{mem + ' bytes read/written':<28} {t['read_bytes']:>14} {t['write_bytes']:>10}")
        for r in self.region_traffic:
            parts = ", ".join(f"{k[:-6].replace('_', ' ')} {v}" for k, v in r.items() if k.endswith("_bytes"))
            lines.append(f"region {r['region']} ({r['memory'] or 'unmapped'}): {parts}")
        lines.append(f"{'inference time':<28} {self.inference_time_s * 1e3:>11.3f} ms")
        if self.functional is not None:
            shapes = ", ".join(f"output_{i} {o.dtype}{list(o.shape)}" for i, o in enumerate(self.functional.outputs))
            lines.append(f"{'functional':<28} {self.functional.kernels} kernels computed; {shapes}")
        if self.assumptions:
            lines.append("")
            lines += [f"assumption: {a}" for a in self.assumptions]
        return "\n".join(lines)

"""The public entry points: load a compiled network, run it on an emulated NPU and SoC.

The pipeline reads top to bottom: resolve the hardware (accelerator, vela.ini, SoC preset)
-> bind each region to a base address (given, or where Vela assumes it) -> the driver's
checks -> replay the stream into operations -> execute on the timeline -> report.
"""
from __future__ import annotations

from pathlib import Path

from npu.driver import Base, invoke_checks
from npu.emulate.engine import DEFAULT_BUDGET, Execution, RegionBinding, execute
from npu.emulate.ops import op_accesses, operations
from npu.hw import load_vela_ini
from npu.hw import accelerator as _accel
from npu.read.model import Model, load_model
from npu.readonly import read_only_size
from npu.report import ACCESS_COLUMNS, STREAM_REGION, BaseReport, RunResult
from npu.errors import InputError
from npu.functional import run_functional
from npu.soc import NUM_REGIONS, default_placements, reach, region_port, stream_port, timing
from npu.socfile import board_for

__all__ = ["Base", "Model", "RunResult", "load_model", "region_needs", "run"]


def _default_bases(model, soc, sysconf, mode) -> list[Base]:
    """Region 0 reaches as far as the stream reads it (npu.readonly), when a container
    declares it shorter."""
    sizes = {**model.region_sizes, 0: read_only_size(model)} if model.weight_data else model.region_sizes
    placements = default_placements(soc, sysconf, mode, sizes, model.regions_used())
    return [Base(r, address, sizes.get(r, 0)) for r, address in sorted(placements.items())]


def _bindings(bases, soc, sysconf, mode, regions, cost_as=None, ports=None) -> tuple[dict[int, RegionBinding], list[str]]:
    """Each region's base, size, AXI port, the memory its base hits and the timing class, and
    the assumptions that timing rests on. `cost_as` (region -> Vela class) times a region as
    another memory: what the same stream costs with the region where the memory mode put it.
    `ports` (region -> port) overrides REGIONCFG: what a firmware's ethosu_config_select chose."""
    given = {b.region: b for b in bases}
    out, assumed = {}, []
    for r in sorted(set(given) | regions):
        b = given.get(r, Base(r, 0, 0))        # a BASEP never written reads as 0
        port = (ports or {}).get(r) or region_port(soc, mode.name, r)
        mem = soc.memory_at(b.address)
        t = timing(soc, sysconf, mem, port)
        if t.assumption and t.assumption not in assumed and r in regions:
            assumed.append(t.assumption)
        cls = (cost_as or {}).get(r, t.vela_class)
        out[r] = RegionBinding(r, b.address, b.size, port, mem, sysconf.memories[cls])
    return out, assumed


def _stream_fetch(model, soc, memory_mode, stream_address, port=None):
    """QBASE: the NPU fetches the command stream through the QCONFIG port. Checked only when
    the caller says where the stream is (0 = not given): the failure, the assumptions, and
    where the fetch goes (a BaseReport of region -1, or None)."""
    if not stream_address:
        return None, (), None
    port = port or stream_port(soc, memory_mode)
    address = stream_address + model.cop1.stream_offset
    r = reach(soc, port, address, len(model.cop1.stream))
    fetch = BaseReport(STREAM_REGION, address, len(model.cop1.stream), r.memory.name if r.memory else None, port)
    if not r.ok:
        return (f"command stream fetch at 0x{address:08x} ({len(model.cop1.stream)} bytes) on the {port} AXI "
                f"port (QCONFIG): unreachable, {r.reason}; the NPU never reads its first command"), \
            r.assumptions, fetch
    return None, r.assumptions, fetch


def _active_cycles(records) -> int:
    busy, end = 0, 0
    for start, stop in sorted((r.start, r.end) for r in records):
        if stop > end:
            busy += stop - max(start, end)
            end = stop
    return busy


def _summarise(run: Execution, acc, bindings) -> tuple[dict, dict, dict, list, list, list]:
    cycles = {"total": run.total, "npu": 0, **{k: 0 for k, _ in ACCESS_COLUMNS.values()}}
    traffic: dict[str, dict[str, int]] = {}
    regions: dict[int, dict] = {}
    beats = {direction: dict.fromkeys(sorted({b.port for b in bindings.values()}), 0)
             for direction in ("read", "write")}
    ops, timeline = [], []
    for rec in run.records:
        cycles["npu"] += rec.npu
        row = {"offset": rec.offset, "op": rec.op, "cycles": rec.cycles, "macs": rec.macs,
               "start": rec.start, "npu": rec.npu}
        for mem_class, (key, _) in ACCESS_COLUMNS.items():
            row[key] = rec.access.get(mem_class, 0)
            cycles[key] += row[key]
        row["util_mac"] = round(100.0 * rec.macs / (rec.cycles * acc.macs), 2) if rec.cycles and rec.macs else 0.0
        ops.append(row)
        ports = set()
        for (region, kind, direction), n in rec.transfers.items():
            b = bindings[region]
            name = b.memory.name if b.memory else "(unmapped)"
            t = traffic.setdefault(name, {"read_bytes": 0, "write_bytes": 0})
            t[f"{direction}_bytes"] += n
            per_region = regions.setdefault(region, {"region": region, "memory": b.memory.name if b.memory else None})
            per_region[f"{kind}_{direction}_bytes"] = per_region.get(f"{kind}_{direction}_bytes", 0) + n
            beats[direction][b.port] += -(-n // acc.axi_bytes)
            ports.add(b.port)
        timeline.append({"op": rec.op, "offset": rec.offset, "start": rec.start, "end": rec.end,
                         "ports": sorted(ports)})
    active = _active_cycles(run.records)
    pmu = {"npu_active_cycles": active, "npu_idle_cycles": max(run.total - active, 0),
           "npu_total_cycles": run.total, "axi_read_beats": beats["read"], "axi_write_beats": beats["write"]}
    return cycles, pmu, traffic, [regions[r] for r in sorted(regions)], ops, timeline


def run(model: Model | str | Path | bytes, *, accelerator: str, system_config: str, memory_mode: str,
        soc: str | None = None, bases: list[Base] | None = None, vela_ini: str | Path | None = None,
        stream_address: int = 0, fast_memory: int = 0, fast_memory_size: int = 0,
        budget: int = DEFAULT_BUDGET, functional: bool = False, inputs=None,
        cost_as: dict[int, str] | None = None, ports: dict[int, str] | None = None) -> RunResult:
    """Emulate one inference. Bad input raises InputError; everything else is a RunResult.
    With ``functional=True`` the stream also computes on bytes: ``inputs`` (one array per
    model input) go where Vela placed them and ``result.functional.outputs`` holds the outputs.
    ``cost_as`` (region -> Vela memory class) times those regions as that memory instead of the
    one their base hits: the cycles of the placement the memory mode assumed. ``ports``
    (region -> AXI port; -1 the command stream) replaces the memory mode's REGIONCFG (QCONFIG)
    for those regions: the ports a firmware's own ``ethosu_config_select`` picks."""
    model = model if isinstance(model, Model) else load_model(model)
    acc = _accel(accelerator)
    ini = load_vela_ini(vela_ini)
    sysconf, mode = ini.system_config(system_config), ini.memory_mode(memory_mode)
    board = board_for(acc, soc)
    bases = list(bases) if bases is not None else _default_bases(model, board, sysconf, mode)
    for b in bases:
        if not 0 <= b.region < NUM_REGIONS or b.address < 0 or b.size < 0:
            raise InputError(None, f"bad base {b}: regions are 0..{NUM_REGIONS - 1}, addresses and sizes >= 0")
    if len({b.region for b in bases}) != len(bases):
        raise InputError(None, "two bases for the same region")
    driver = invoke_checks(model.cop1.data, bases, acc, stream_address=stream_address,
                           fast_memory=fast_memory, fast_memory_size=fast_memory_size)
    # A *_REGION register the stream never writes reads as 0, so every stream can reach region 0.
    bindings, timed = _bindings(driver.bases, board, sysconf, mode, model.regions_used() | {0}, cost_as, ports)
    fetch, fetch_assumed, stream = _stream_fetch(model, board, mode.name, stream_address,
                                                 (ports or {}).get(STREAM_REGION)) if driver.ok else (None, (), None)
    if not driver.ok:
        execution = Execution("error", f"driver: ethosu_invoke_v3 returns -1: {driver.reason}", 0, [])
    elif fetch:
        execution = Execution("hang", fetch, 0, [])
    else:
        ops = operations(model.commands, acc.microblocks, acc.weight_overfetch)
        execution = execute(ops, acc, board, bindings, budget)
    execution.assume(fetch_assumed)
    if execution.status == "ok":
        execution.assume(timed)       # timing assumptions matter only to a run that completes
    computed = None
    if functional and execution.status == "ok":
        computed = _functional(model, acc, bindings, inputs)
    cycles, pmu, traffic, region_traffic, ops, timeline = _summarise(execution, acc, bindings)
    reports = tuple(BaseReport(b.region, b.address, b.size or None, b.memory.name if b.memory else None, b.port,
                               b.cost_memory.name) for b in bindings.values())
    return RunResult(execution.status, execution.diagnosis, acc.name, sysconf.name, mode.name, board.name,
                     reports, cycles, pmu, traffic, tuple(ops), execution.total / sysconf.core_clock,
                     sysconf.core_clock, tuple(timeline), tuple(region_traffic), execution.fault_region, computed,
                     tuple(execution.assumptions), stream)


def _functional(model, acc, bindings, inputs):
    """Compute on bytes at the bound base addresses; a region without a given size gets
    the size its container declares, or how far the stream reaches into it."""
    needs = region_needs(model, acc.name)
    placement = {r: (b.address, b.size or model.region_sizes.get(r) or needs.get(r, 0))
                 for r, b in bindings.items()}
    return run_functional(model, acc, placement, list(inputs or ()))


def region_needs(model: Model | str | Path | bytes, accelerator: str) -> dict[int, int]:
    """Bytes the command stream addresses in each region: the end of its furthest access.
    The blob does not carry Vela's fast-scratch size (docs/npu.md §4); this is what a
    caller must provide as that region's size for the stream to stay in bounds."""
    model = model if isinstance(model, Model) else load_model(model)
    acc = _accel(accelerator)
    needs: dict[int, int] = {}
    for op in operations(model.commands, acc.microblocks, acc.weight_overfetch):
        for a in op_accesses(op):
            needs[a.region] = max(needs.get(a.region, 0), a.offset + a.length - a.slack)
    return needs

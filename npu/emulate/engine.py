"""Execute the operations on a timeline: kernels in order, DMA concurrently.

The command processor issues operations in stream order. Kernel operations run one after
another; a DMA starts as soon as it is issued and the DMA engine is free, so it overlaps
the running kernel. ``NPU_OP_DMA_WAIT k`` holds the command processor until at most k DMAs
are in flight, ``NPU_OP_KERNEL_WAIT n`` until at most n kernels are.

Before each operation touches memory, every range is checked: an address the region's AXI
port cannot reach (a CPU-private TCM, an unmapped hole, a write on a read-only port) is never
answered (the NPU stalls: ``hang``); a range past a region's known size (> 0) is ``error`` (out
of bounds; on silicon, silent corruption). The cycle budget turns a run that does not finish in
time into ``hang`` as well. Every SoC assumption an access rests on (a port Arm's documentation
does not show reaching a memory) is collected for the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from npu.emulate.cost import (DMA, OpCost, ao_cycles_per_element, chained_access, compute_cycles, ifm_shares,
                              mem2mem_cycles, op_cost)
from npu.emulate.ops import Access, DmaOp, KernelOp, Stop, Wait, op_accesses
from npu.hw import Accelerator, Memory
from npu.soc import Soc, SocMemory, reach

DEFAULT_BUDGET = 10_000_000_000


@dataclass(frozen=True)
class RegionBinding:
    region: int
    address: int
    size: int                    # 0: the caller gave none
    port: str
    memory: SocMemory | None     # what the base address hits (None: nothing mapped)
    cost_memory: Memory          # the Vela memory class whose timing applies


@dataclass(frozen=True)
class OpRecord:
    offset: int
    op: str
    start: int
    end: int
    npu: int
    macs: int
    access: dict[str, int]
    transfers: dict[tuple[int, str, str], int]    # (region, kind, read|write) -> bytes

    @property
    def cycles(self) -> int:
        return self.end - self.start


@dataclass
class Execution:
    status: str = "ok"
    diagnosis: str | None = None
    total: int = 0
    fault_region: int | None = None     # the region of the access that hung or overran
    records: list[OpRecord] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)   # what the verdict rests on (SoC model)

    def assume(self, texts) -> None:
        self.assumptions += [t for t in texts if t not in self.assumptions]


def check_access(soc: Soc, bindings: dict[int, RegionBinding], access: Access, offset: int, op: str,
                 read_only_ports: tuple[str, ...], assumed: list[str]):
    """None, or (status, diagnosis) for the first thing wrong with one access. The SoC
    assumptions the access rests on are appended to `assumed`."""
    b = bindings[access.region]
    address = b.address + access.offset
    verb = "write to" if access.write else "read from"
    where = (f"{op} at command offset 0x{offset:06x}: {access.what} {verb} region {access.region} "
             f"(base 0x{b.address:08x} + offset 0x{access.offset:x} = address 0x{address:08x}, "
             f"{access.length} bytes) on the {b.port} AXI port")
    r = reach(soc, b.port, address, access.length, access.write, read_only_ports)
    assumed += [a for a in r.assumptions if a not in assumed]
    if not r.ok:
        return "hang", f"{where}: unreachable, {r.reason}"
    if b.size and access.offset + access.length - access.slack > b.size:
        return "error", (f"{where}: out of bounds, it ends at offset 0x{access.offset + access.length:x} but region "
                         f"{access.region} is {b.size} bytes")
    return None


class _Timeline:
    """The command processor, the kernel pipeline and the DMA engine, in cycles."""

    def __init__(self, acc: Accelerator, mems: dict[int, Memory], shares: dict[int, float]):
        self.acc, self.mems, self.shares = acc, mems, shares
        self.t_cmd = self.kernel_free = self.dma_free = 0
        self.kernel_ends: list[int] = []
        self.dma_ends: list[int] = []
        self.last: tuple[KernelOp, OpRecord, OpCost] | None = None

    @property
    def end(self) -> int:
        return max(self.t_cmd, self.kernel_free, self.dma_free)

    def wait(self, op: Wait) -> None:
        """Hold the command processor until at most `outstanding` are still running."""
        pending = sorted(e for e in (self.dma_ends if op.kind == "DMA" else self.kernel_ends) if e > self.t_cmd)
        if len(pending) > op.outstanding:
            self.t_cmd = pending[len(pending) - op.outstanding - 1]

    def kernel(self, op: KernelOp) -> OpRecord:
        chained = self.last if op.chained_input else None
        cost = op_cost(self.acc, op, self.mems, self.shares.get(op.offset, 1.0), chained[0] if chained else None)
        if chained:
            # U85 chaining: the consumer runs alongside its producer. The output unit does
            # both ops' work per element (regor sums the op group's AO cycles) and the memory
            # time is shared; the record is the time it adds to the group (often 0, as in Vela).
            producer_op, producer, producer_cost = chained
            npu = compute_cycles(self.acc, producer_op, self.mems, ao_cycles_per_element(self.acc, op))[0]
            group = max([npu, *chained_access(self.acc, self.mems, [producer_cost, cost]).values()])
            start = producer.end
            end = max(start, producer.start + group)       # issued with the producer: t_cmd stays
        else:
            start = max(self.t_cmd, self.kernel_free)
            end = start + cost.cycles
            self.t_cmd = start
        self.kernel_free = max(end, self.kernel_free)
        self.kernel_ends.append(end)
        record = OpRecord(op.offset, op.op, start, end, cost.npu, cost.macs, cost.access, cost.transfers)
        self.last = (op, record, cost)
        return record

    def dma(self, op: DmaOp) -> OpRecord:
        """A DMA starts when issued and the engine is free; it overlaps the running kernel."""
        src = self.mems[(op.src or op.dst).region]
        dst = self.mems[op.dst.region] if op.dst else src
        start = max(self.t_cmd, self.dma_free)
        self.dma_free = end = start + mem2mem_cycles(self.acc, src, dst, op.length)
        self.dma_ends.append(end)
        transfers = {(a.region, DMA, "write" if a.write else "read"): op.length for a in (op.src, op.dst) if a}
        return OpRecord(op.offset, "DMA", start, end, 0, 0, {}, transfers)


def execute(ops: list, acc: Accelerator, soc: Soc, bindings: dict[int, RegionBinding],
            budget: int = DEFAULT_BUDGET) -> Execution:
    """Run the operations up to NPU_OP_STOP, or to the first hang or error."""
    timeline = _Timeline(acc, {r: b.cost_memory for r, b in bindings.items()}, ifm_shares(acc, ops))
    run = Execution()
    for op in ops:
        if isinstance(op, Stop):
            break
        if isinstance(op, Wait):
            timeline.wait(op)
            continue
        name = op.op if isinstance(op, KernelOp) else "DMA"
        for access in op_accesses(op):
            failure = check_access(soc, bindings, access, op.offset, name, acc.read_only_ports,
                                   run.assumptions)
            if failure:
                run.status, run.diagnosis = failure
                run.fault_region = access.region
                run.total = timeline.end            # what was issued before it still completes
                if failure[0] == "hang":
                    run.diagnosis += (f" (stalled from cycle {timeline.t_cmd}; stopped at the cycle budget "
                                      f"of {budget})")
                return run
        run.records.append(timeline.kernel(op) if isinstance(op, KernelOp) else timeline.dma(op))
        if timeline.end > budget:
            run.status, run.total = "hang", budget
            run.diagnosis = (f"{name} at command offset 0x{op.offset:06x} would end at cycle {timeline.end}, "
                             f"past the cycle budget of {budget}")
            return run
    run.total = timeline.end
    return run

"""One NPU job, as the register model saw it start: the command stream at QBASE, the regions at
the BASEP addresses, run on `npu/`: timing always, and on bytes where the accelerator allows.

The NPU is given no sizes: a region is an address. The sizes the firmware passed to
`ethosu_invoke_v3` are known only when that function can be watched (its symbol is in the
image); they bound the emulator's out-of-bounds check and are reported. For the bytes, each
region is read from guest memory as far as the stream reaches into it, the stream runs on
them, and every range the NPU wrote is written back into guest memory, as the NPU's DMA would
have done before it raised its interrupt.
"""
from __future__ import annotations

import functools
import struct
from collections import namedtuple
from dataclasses import dataclass, field

import npu.api
from npu.emulate.ops import op_accesses, operations
from npu.errors import InputError
from npu.functional.engine import Engine
from npu.functional.memory import AddressSpace
from npu.functional.u85_engine import U85Engine
from npu.hw import accelerator as npu_accelerator
from npu.read.cop1 import COMMAND_STREAM, MAGIC, NOP, OPTIMIZER_CONFIG
from npu.readonly import read_only_end
from npu.records import Record

from weaklink.run.device import Start

# The COP1 wrapper put around a bare register stream: magic, OPTIMIZER_CONFIG with the
# accelerator's CONFIG and ID (the hardware the stream runs on: it tells the decoder which
# command set), three NOPs, COMMAND_STREAM. The stream starts 32 bytes in, so the wrapper's
# address keeps the stream's 16-byte alignment.
WRAPPER = 32

# One base_addr entry the firmware passed to ethosu_invoke_v3 (base_addr[i], base_addr_size[i]).
PassedBase = namedtuple("PassedBase", "region address size")
# Bytes the NPU wrote into guest memory.
Span = namedtuple("Span", "address size")


@dataclass(frozen=True)
class DriverCall(Record):
    """Arguments of one `ethosu_invoke_v3` call (AAPCS: r0-r3, then the stack)."""
    pc: int
    custom_data: int
    custom_data_size: int
    bases: tuple[PassedBase, ...]

    JSON = ("custom_data", "custom_data_size", "bases")


def driver_call(memory, regs: list[int]) -> DriverCall | None:
    """`ethosu_invoke_v3(drv, custom_data_ptr, custom_data_size, base_addr, base_addr_size,
    num_base_addr, user_arg)` at its entry: r1-r3, and the rest on the stack (`regs` r0..r15)."""
    stacked = struct.unpack("<III", memory.read(regs[13], 12))
    count = stacked[1]
    if not 0 <= count <= 8:
        return None
    addresses = struct.unpack(f"<{count}Q", memory.read(regs[3], 8 * count)) if count else ()
    sizes = struct.unpack(f"<{count}I", memory.read(stacked[0], 4 * count)) if count else ()
    return DriverCall(regs[15], regs[1], regs[2],
                      tuple(PassedBase(i, a, n) for i, (a, n) in enumerate(zip(addresses, sizes))))


@dataclass(frozen=True)
class RunBase(Record):
    region: int
    address: int
    size: int | None          # as passed to ethosu_invoke_v3, when that call was seen
    size_source: str          # "ethosu_invoke_v3" | "not visible at the register level"


@dataclass
class Invocation(Record):
    index: int
    pc: int                   # the store to CMD that started the job
    stream_address: int
    stream_size: int
    bases: list[RunBase]
    mode: str                 # functional | timing
    result: object = None     # npu.api.RunResult
    written: list[Span] = field(default_factory=list)  # put into guest memory
    interrupt: bool = False   # the completion interrupt was raised
    interrupt_at: str | None = None    # what delivered it: wfe | wfi | status poll | register read | next job | timeout
    interrupt_pc: int | None = None    # where the CPU was then
    note: str | None = None
    hardware: object = None   # npu.api.RunResult without the firmware's sizes (an `error` job)

    JSON = ("index", "pc", "stream_address", "stream_size", "bases", "status", "cycles",
            "diagnosis=result.diagnosis", "mode", "interrupt", "interrupt_at", "interrupt_pc",
            "written", "note", "emulation=result")

    @property
    def completed(self):
        """The run the NPU itself makes: the emulator's, or for an `error` (a size the
        firmware passed is exceeded) the same stream unbounded."""
        return self.hardware if self.hardware is not None else self.result

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def cycles(self) -> int | None:
        return int(self.result.cycles["total"]) if self.result.status == "ok" else None


def wrap_stream(stream: bytes, accelerator: str) -> bytes:
    acc = npu_accelerator(accelerator)
    words = len(stream) // 4
    header = struct.pack("<8I", MAGIC, OPTIMIZER_CONFIG, acc.config_word, acc.id_word, NOP, NOP, NOP,
                         COMMAND_STREAM | (words & 0xFFFF) << 16 | (words >> 16 & 0xFF) << 8)
    return header + stream[:words * 4]


def run_job(start: Start, index: int, pc: int, memory, *, accelerator: str, system_config: str,
            memory_mode: str, soc: str, functional: bool, sizes: dict[int, int] | None,
            required: bool = False, vela_ini: str | None = None) -> Invocation:
    """`memory` reads and writes guest memory (`read(address, n)`, `write(address, data)`).
    A stream the functional engine cannot compute fails the run when the bytes were asked for
    (`required`), and otherwise runs for timing with the reason in the job's note."""
    stream = memory.read(start.qbase, start.qsize) if start.qsize else b""
    where = f"command stream at 0x{start.qbase:08x} ({start.qsize} bytes, from QBASE/QSIZE)"
    model = npu.api.load_model(wrap_stream(stream, accelerator), where)
    regions = sorted(set(start.basep) | model.regions_used())
    bases = [RunBase(r, start.basep.get(r, 0), (sizes or {}).get(r),
                     "ethosu_invoke_v3" if sizes and r in sizes else "not visible at the register level")
             for r in regions]
    emulate = functools.partial(npu.api.run, model, accelerator=accelerator, system_config=system_config,
                                memory_mode=memory_mode, soc=soc, vela_ini=vela_ini,
                                stream_address=start.qbase - WRAPPER if start.qbase >= WRAPPER else 0)
    result = emulate(bases=[npu.api.Base(b.region, b.address, b.size or 0) for b in bases])
    job = Invocation(index, pc, start.qbase, start.qsize, bases,
                     "functional" if functional else "timing", result)
    if result.status == "error" and any(b.size for b in bases):
        # The emulator bounds each region by the size the firmware passed; the NPU has no such
        # bound and runs on: its own run is the same stream with the sizes left out.
        job.hardware = emulate(bases=[npu.api.Base(b.region, b.address, 0) for b in bases])
    if functional and job.completed.status != "hang":
        try:
            job.written = compute(model, accelerator, {b.region: b.address for b in bases}, memory)
        except InputError as e:
            if required:
                raise
            job.mode = "timing"
            job.note = f"outputs not computed, timing only: {e.what}"
    return job


def reach(model, accelerator: str) -> dict[int, int]:
    """How far the stream's accesses (over-fetch included) go into each region."""
    acc = npu_accelerator(accelerator)
    out: dict[int, int] = {}
    for op in operations(model.commands, acc.microblocks, acc.weight_overfetch):
        for a in op_accesses(op):
            out[a.region] = max(out.get(a.region, 0), a.offset + a.length)
    return out


def compute(model, accelerator: str, bases: dict[int, int], memory) -> list[Span]:
    """Run the stream on the guest's bytes and write back what the NPU wrote."""
    acc = npu_accelerator(accelerator)
    sizes = {r: n for r, n in reach(model, accelerator).items() if n}
    if acc.is_u85:         # a U85 weight stream may be programmed past the accesses' reach
        sizes[0] = max(sizes.get(0, 0), read_only_end(model.commands))
    space = AddressSpace.build({r: bases.get(r, 0) for r in sizes}, sizes)
    for r in sizes:        # overlapping regions share bytes: each reads the same guest memory
        space.views[r][:] = memoryview(memory.read(bases.get(r, 0), sizes[r]))
    if acc.is_u85:         # its weight order and formats, output stage and chaining
        engine = U85Engine(model.commands, space, acc, model.path)
    else:
        engine = Engine(model.commands, space, acc.ofm_ublock[2], model.path, acc.shram_kb)
    try:
        engine.run()
    except InputError as e:
        raise InputError(model.path, e.what, e.offset) from None
    written = []
    for r in sorted({w.region for w in space.writes}):
        base, view = space.bases[r], space.views[r]
        for lo, hi in _merge((w.start, w.end) for w in space.writes if w.region == r):
            if (lo, hi - lo) not in written:
                memory.write(lo, view[lo - base:hi - base].tobytes())
                written.append(Span(lo, hi - lo))
    return written


def _merge(ranges) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]

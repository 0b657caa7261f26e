"""The NPU's completion interrupt: when a job started through the register page completes, and
how its interrupt reaches the firmware.

The hardware (Arm Ethos-U55/U65 register map, ethos-u-core-driver `ethosu55_interface.h`,
`status_r`): writing CMD.transition_to_running_state starts the command stream and STATUS.state
reads 1 ("Running") until the stream ends; then the NPU sets STATUS.irq_raised and
cmd_end_reached and drives its IRQ line (IRQ 56 on Corstone-300), which stays raised until the
driver writes CMD.clear_irq. A job takes the emulator's cycles: for Vela-compiled networks,
tens of thousands to millions of NPU cycles, while the CPU's way from the store to CMD to the
driver's wait is a few returns and calls. Arm's driver waits in `ethosu_semaphore_take`, whose
bare-metal default is `while (count == 0) __WFE();` (ethos-u-core-driver `ethosu_driver.c`,
weak; measured in the TFLM and ExecuTorch builds: their one WFE is there); the interrupt
handler reads STATUS, gives the semaphore, and the exception's return wakes the WFE.

QEMU has no timing model, so the job's result is exact and its duration is not. The job is
computed when CMD is written (the NPU reads its inputs from then on); the bytes it writes reach
guest memory, STATUS says done and the interrupt is raised at the first moment the firmware's
behaviour can depend on it, which is one of:
- "wfe", "wfi": the CPU executes a WFE or WFI while the job runs. It would sleep until the
  interrupt wakes it, so the job completes there: the instruction is taken as executed (woken),
  then the interrupt is raised and the CPU takes it after the WFE/WFI as on the hardware (or,
  when the firmware masks it, goes on with it pending). The instructions are found in the
  image's executable sections by a linear decode (weaklink.read.thumb.starts_instruction),
  restarted at each `$t` mapping symbol and skipping `$d` data (ELF for the Arm Architecture,
  "Mapping symbols"); in a stripped image a literal that looks like one is a breakpoint that
  never stops the CPU. They are breakpoints only while a job runs;
- "status poll", "register read": the firmware reads the NPU's registers while the job runs.
  The first RUNNING_READS reads see it running (STATUS.state 1, irq_raised and cmd_end_reached
  0, QREAD 0, the PMU counters as at the start): no job is over within a register read, since
  the NPU must first fetch its command stream over AXI. How many reads a job really spans
  depends on the CPU's loop, which QEMU does not time; the bound keeps a polling driver's cost
  small. The next read completes the job first: the interrupt is raised (and taken, when the
  firmware lets it) before the read, which then sees the NPU stopped and done;
- "next job": the driver starts another stream while this one runs (the NPU runs one at a time);
- "timeout": neither happens while QEMU runs the CPU for SPIN_BUDGET seconds of its own CPU
  time (Linux's per-thread schedstat), or for the job's own duration at the system config's
  core clock when that is longer: a driver spinning on a RAM flag. CPU time, so that a loaded
  host does not cut the CPU's way to its wait short; QEMU's virtual clock follows the host's
  (no -icount), so the guest's own timers see at least the job's duration. A CPU that uses no
  time (halted where no WFI was found), or a system without schedstat, gets HALTED seconds of
  wall time more. The interrupt is raised wherever the CPU is then.
A job the emulator says hangs completes never: nothing is raised, the firmware waits as it would
on the hardware. Each job reports which event delivered its interrupt (`interrupt_at`).

The interrupt is raised from inside the guest: a debugger's write to the NVIC is dropped
(measured), so a five-instruction stub in memory the image does not use sets the IRQ's
Set-Pending bit (NVIC_ISPR); the CPU takes it when the firmware's masking allows, through the
firmware's own vector table and handler, as it would take the hardware's.
"""
from __future__ import annotations

import bisect
import struct
import time
from dataclasses import dataclass, field

from weaklink.read import elfstructs as S
from weaklink.read import thumb
from weaklink.read.image import Image
from weaklink.run.job import Invocation

RUNNING_READS = 4         # reads of the register page that see a job running
SPIN_BUDGET = 0.05        # QEMU CPU seconds before a job nobody waits for completes
HALTED = 1.0             # wall seconds past the budget for a CPU that does not run
PF_X = 0x1

# The wait-for-event/interrupt hints (Armv8-M ARM, "Hint instructions"): 16-bit, then 32-bit .W
WAITS = {b"\x20\xbf": "wfe", b"\x30\xbf": "wfi", b"\xaf\xf3\x02\x80": "wfe", b"\xaf\xf3\x03\x80": "wfi"}


@dataclass
class Pending:
    """A job that runs: its invocation, when the CPU went on after starting it, the reads it
    has seen, and the bytes the NPU writes, held until it completes."""
    job: Invocation
    cpu: float | None         # QEMU's CPU seconds when the job started (None: not known)
    wall: float               # time.monotonic() then
    budget: float
    writes: list[tuple[int, bytes]] = field(default_factory=list)
    reads: int = 0

    def left(self, cpu: float | None) -> float:
        """Seconds of the budget left, given QEMU's CPU seconds now."""
        wall = self.wall + self.budget + HALTED - time.monotonic()
        if cpu is None or self.cpu is None:
            return wall
        return min(self.cpu + self.budget - cpu, wall)

    def abandon(self) -> None:
        """The run ended first: the job's note says so."""
        note = "the run ended while the job ran: the firmware never waited for its interrupt"
        self.job.note = f"{self.job.note}; {note}" if self.job.note else note


def budget(cycles: float, core_clock: float) -> float:
    return max(SPIN_BUDGET, cycles / core_clock if core_clock > 0 else 0.0)


def wait_sites(image: Image, patterns: dict[bytes, str] = WAITS) -> dict[int, tuple[str, int]]:
    """Address -> (wfe | wfi, its length) of every WFE and WFI (or of each of `patterns`: encoding
    -> name) that starts an instruction in the image's executable sections (its executable
    segments when it has no section headers)."""
    elf = image.elf
    spans = [(s.sh_addr, s.sh_offset, s.sh_size) for s in elf.shdrs
             if s.sh_flags & S.SHF_EXECINSTR and s.sh_flags & S.SHF_ALLOC and s.sh_type != S.SHT_NOBITS]
    if not spans:
        spans = [(p.p_vaddr, p.p_offset, p.p_filesz) for p in image.load_segments() if p.p_flags & PF_X]
    marks = sorted({m.address: m.kind for m in image.mapping_symbols}.items())
    starts = [address for address, _ in marks]
    out = {}
    for address, offset, size in spans:
        code = bytes(elf.data[offset:offset + size])
        for pattern, kind in patterns.items():
            at = code.find(pattern)
            while at >= 0:
                k = bisect.bisect_right(starts, address + at) - 1
                mark = marks[k] if k >= 0 and marks[k][0] >= address else None
                lo = mark[0] - address if mark else 0
                code_here = mark is None or mark[1] == "t"
                if at % 2 == 0 and code_here and thumb.starts_instruction(code, lo, at):
                    out[(address + at) & ~1] = (kind, len(pattern))
                at = code.find(pattern, at + 1)
    return out




class HeldMemory:
    """Guest memory as the NPU sees it during a job: reads from the guest, writes held in
    `writes` until the job completes."""
    def __init__(self, client):
        self.client = client
        self.writes: list[tuple[int, bytes]] = []

    def read(self, address: int, size: int) -> bytes:
        return self.client.read_memory(address, size)

    def write(self, address: int, data: bytes) -> None:
        self.writes.append((address, bytes(data)))


def stub_code(register: int, value: int) -> bytes:
    """r0 = register; r1 = value; str r1, [r0]; dsb; isb: the store that pends the IRQ."""
    return (thumb.movw_movt(0, register) + thumb.movw_movt(1, value) + struct.pack("<H", 0x6001)
            + struct.pack("<HHHH", 0xF3BF, 0x8F4F, 0xF3BF, 0x8F6F))


STUB_LENGTH = len(stub_code(0, 0))

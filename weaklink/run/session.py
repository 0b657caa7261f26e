"""One run: QEMU boots the image halted, the debugger serves the NPU's register page, and the
firmware runs until it exits, crashes or the time is up.

How the NPU is served, for any driver version, stripped or inlined:
- an access watchpoint covers each alias of the register page; the CPU stops before the load
  or store, the debugger performs it on the register model (weaklink.run.loadstore,
  weaklink.run.device) and moves the PC past it;
- the store to CMD that starts a job runs the command stream on `npu/` (weaklink.run.job);
  the job then runs until the firmware waits for it (a WFE or WFI), reads the NPU's registers
  past a few polls, or spins for a while: then its bytes go into guest memory, STATUS says done
  and the NPU's interrupt is raised from inside the guest (weaklink.run.irq has the rule and
  the hardware facts it rests on);
- a job the emulator says hangs raises nothing: the firmware waits, as on the hardware;
- breakpoints: the fault vectors (weaklink.run.fault: the fault is read there, the handler
  runs on), the image's WFE and WFI while a job runs, and, when the image has the symbols,
  `ethosu_invoke_v3` (the sizes the firmware passes, which the NPU never sees) and `exit` and
  `_exit` (the status, r0 at the entry). None is needed to serve the NPU;
- after an exit call or a fault the CPU is looked at every few milliseconds: found in a loop
  it cannot leave (weaklink.run.spin), the run ends there: `exit-spin` with the status the
  firmware passed, or `fault`, naming the handler that spins.

For `weaklink fvp` (weaklink.fvp): QEMU's options (weaklink.run.qemu.Options), a `tee` given the
UART's and semihosting's bytes at each look, `eot_ends` (False: the exit line and EOT do not end
the run), and `hooks`: more breakpoints, each served by its function (session, registers).
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

from npu.hw import accelerator as npu_accelerator
from npu.hw import load_vela_ini
from npu.socfile import load_soc

from weaklink.errors import InputError
from weaklink.run import rsp
from weaklink.run.device import PAGE, STATUS, EthosU
from weaklink.run import ending
from weaklink.run.ending import End, Ended
from weaklink.run.fault import Fault, read_fault
from weaklink.run.image import EXITS, INVOKE, RunImage
from weaklink.run.irq import RUNNING_READS, STUB_LENGTH, HeldMemory, Pending, budget, stub_code
from weaklink.run.job import DriverCall, Invocation, driver_call, run_job
from weaklink.run.qemu import Options, Qemu
from weaklink.run.spin import no_way_out
from weaklink.run.loadstore import access_at, condition_passes, it_advance

POLL = 0.05               # seconds between looks at the UART while the firmware runs
XPSR, PC, SP, LR = 16, 15, 13, 14
SIGINT = 2                # the stop a Ctrl-C (rsp.INTERRUPT) gives
IT_BITS = (0x3F << 10) | (0x3 << 25)
THUMB = 1 << 24           # xPSR.T: an M-profile CPU executes Thumb only
CODE_BLOCK = 256          # bytes of code read at once for decoding the NPU's loads and stores
FIRST_LOOK = 0.005        # seconds after an exit call or a fault before the CPU is first looked at
MRS_R0_PSP = struct.pack("<HH", 0xF3EF, 0x8009)      # MRS r0, PSP (SYSm 9)


@dataclass
class Session:
    image: RunImage
    accelerator: str
    system_config: str
    memory_mode: str
    soc: str
    functional: bool
    timeout: float
    required: bool = False            # --functional given: a stream the engine cannot compute is an error
    invocations: list[Invocation] = field(default_factory=list)
    calls: list[DriverCall] = field(default_factory=list)
    npu_seconds: float = 0.0
    boot_seconds: float = 0.0
    decoded: dict = field(default_factory=dict)
    code: dict = field(default_factory=dict)     # CODE_BLOCK-aligned address -> bytes
    pending: Pending | None = None               # the job that runs, until its interrupt
    vela_ini: str | None = None
    exit_call: tuple[str, int, int] | None = None     # the last exit/_exit entry: (name, status, pc)
    fault: Fault | None = None                   # the last fault handler entered
    watch: str | None = None                     # exit | fault: what the CPU is looked at for
    look_at: float = 0.0                         # when the CPU is looked at next
    qemu_options: Options = field(default_factory=Options)
    tee: object = None                           # tee(uart, semihosting): the bytes so far
    eot_ends: bool = True
    hooks: dict = field(default_factory=dict)    # address -> hook(session, registers)

    def run(self) -> tuple[End, bytes, bytes]:
        """Boot, serve, and return how it ended, the UART bytes and semihosting's."""
        board = self.image.board
        acc = npu_accelerator(self.accelerator)
        self.device = EthosU(acc.id_word, acc.config_word)
        self.ports = list(load_soc(self.soc).ports)
        start = time.monotonic()
        self.qemu = Qemu.start(board.machine, self.image.path, self.qemu_options)
        try:
            try:
                self.client = rsp.GdbClient.connect(str(self.qemu.gdb), timeout=10.0,
                                                    alive=lambda: self.qemu.exited() is None)
            except rsp.RspError as e:
                self.qemu.stop()
                raise InputError(self.image.path, f"QEMU did not start: {self.qemu.errors() or e}") from None
            self.boot_seconds = time.monotonic() - start
            self.deadline = start + self.timeout
            try:
                self._arm()
                end = self._until(None)
            except Ended as e:
                end = e.end
            except rsp.RspError as e:
                end = self._qemu_end(str(e))
            if self.pending is not None:
                self.pending.abandon()
            uart, semihosting = self.qemu.uart_text(), self.qemu.semihosting_text()
            if self.tee is not None:
                self.tee(uart, semihosting)
            return end, uart, semihosting
        finally:
            self.qemu.close()

    # -- set-up ----------------------------------------------------------------------------------
    def _arm(self) -> None:
        c, board, image = self.client, self.image.board, self.image
        for page in board.npu_pages:
            c.insert(rsp.ACCESS_WATCH, page, PAGE)
        self.faults = set(image.handlers.values())
        for address in set(self.faults) | set(image.functions.values()) | set(self.hooks):
            c.insert(rsp.HW_BREAKPOINT, address)          # and ethosu_invoke_v3's, exit's, the hooks'
        self.exits = {image.functions[n]: n for n in EXITS if n in image.functions}
        bit = board.npu_irq % 32
        self.irq_stub = stub_code(board.nvic_ispr + 4 * (board.npu_irq // 32), 1 << bit)
        c.write_memory(image.stub, self.irq_stub)
        if board.vector_table != board.reset_table:
            self._boot_from(board.vector_table)

    def _boot_from(self, table: int) -> None:
        """Do what the SoC's reset does when QEMU's reads another table: VTOR = `table` (stored
        by a stub from inside the guest, like the IRQ's pending bit), then SP and PC from the
        image's table, in the Thumb state."""
        c = self.client
        self._in_guest(stub_code(self.image.board.vtor, table))
        c.write_register("sp", self.image.initial_sp)
        c.write_register("pc", self.image.reset)
        c.write_register("xpsr", THUMB)

    # -- the loop ----------------------------------------------------------------------------------
    def _until(self, target: int | None) -> End | None:
        """Run until `target` (a PC with a breakpoint), serving every stop on the way; without
        a target, until the firmware ends (raised as Ended)."""
        while True:
            stop = self._resume()
            regs = self.client.core_registers()
            pc = regs[PC]
            if stop.watch:
                self._access(regs)
            elif target is not None and pc == target:
                return None
            elif self.pending is not None and pc in self.image.waits:
                self._waits(regs)
            elif self.pending is not None and stop.signal == SIGINT:
                self._deliver("timeout", pc)
            elif pc in self.faults:
                self._fault(regs)
            elif pc == self.image.functions.get(INVOKE):
                self._driver_call(regs)
                self._step_over(pc)
            elif pc in self.hooks:
                self.hooks[pc](self, regs)
            elif pc in self.exits:
                status = regs[0] - (1 << 32) if regs[0] >> 31 else regs[0]
                self.exit_call, self.watch = (self.exits[pc], status, pc), "exit"
                self.look_at = time.monotonic() + FIRST_LOOK
                self._step_over(pc)
            elif stop.signal == SIGINT and self.watch is not None:
                self._look(regs)
            else:
                raise Ended(End("crash", pc=pc, detail=f"stopped by signal {stop.signal}"))

    def _resume(self) -> rsp.Stop:
        c = self.client
        c.resume()
        while True:
            left = self.deadline - time.monotonic()
            job_left = self.pending.left(self.qemu.cpu_seconds()) if self.pending else POLL
            look = self.watch is not None and self.pending is None
            look_left = self.look_at - time.monotonic() if look else POLL
            stop = c.wait(max(min(POLL, left, max(job_left / 2, 0.002), look_left), 0))
            if stop is not None:
                if stop.exited:
                    raise Ended(self._exited(stop))
                return stop
            end = self._exit_line()
            if end is not None:
                c.interrupt()
                raise Ended(end)
            if (self.pending is not None and job_left <= 0 or look and look_left <= 0) and left > 0:
                stop = c.interrupt()          # the job's time is up, or a look: stop the CPU where it is
                if stop is None or stop.exited:
                    raise Ended(self._exited(stop) if stop else End("qemu", detail="QEMU did not stop"))
                return stop
            if left <= 0:
                stop = c.interrupt()
                if stop is None or stop.exited:
                        raise Ended(End("timeout", detail=f"no exit within {self.timeout:g} s"))
                regs = c.core_registers()
                if self.watch is not None and self.pending is None:
                    self._look(regs)          # spinning after an exit call or a fault: that ending
                raise Ended(ending.timeout(self.timeout, regs[PC], no_way_out(self._code, regs[PC]),
                                           self.fault, self.exit_call))

    def _exit_line(self) -> End | None:
        uart = self.qemu.uart_text()
        if self.tee is not None:
            self.tee(uart, self.qemu.semihosting_text())
        return ending.exit_line(uart, self.exit_call) if self.eot_ends else None

    def _exited(self, stop: rsp.Stop) -> End:
        if stop.killed is not None:
            return End("qemu", detail=f"QEMU was terminated by signal {stop.killed}")
        # QEMU sends the status it then exits with (W, before exit()): 0..255, negatives wrap.
        # Nothing is left to wait for: the UART and semihosting files are written unbuffered.
        code = stop.exit_code
        return End("exit", code - 256 if code > 127 else code, detail="semihosting exit", exit_call=self.exit_call)

    def _qemu_end(self, why: str) -> End:
        try:
            self.qemu.process.wait(2)
        except Exception:
            pass
        rc = self.qemu.exited()
        err = self.qemu.errors().splitlines()
        detail = err[-1] if err else why
        if rc is not None and not err:
            return End("exit", rc - 256 if rc > 127 else rc, detail="QEMU exited", ending="qemu")
        return End("qemu", detail=f"QEMU stopped: {detail}")

    def _step_over(self, pc: int, kind: int = rsp.HW_BREAKPOINT) -> None:
        """QEMU stops at a breakpoint again at once: step off it with it removed."""
        c = self.client
        c.remove(kind, pc)
        stop = c.step()
        if stop.exited:
            raise Ended(self._exited(stop))
        if stop.watch:
            self._access(c.core_registers())
        c.insert(kind, pc)

    # -- the register page -------------------------------------------------------------------------
    def _page(self, address: int) -> int | None:
        for page in self.image.board.npu_pages:
            if page <= address < page + PAGE:
                return address - page
        return None

    def _access(self, regs: list[int]) -> None:
        """Perform the load or store at the PC on the register model, then move past it."""
        c, pc = self.client, regs[PC]
        access = self.decoded.get(pc)
        if access is None:          # code does not change under the driver: decode each PC once
            access = self.decoded[pc] = access_at(self._code(pc), pc, self.image.path)
        address, new = access.address(regs), {}
        span = len(access.registers) * access.size
        if not any(self._page(a) is not None for a in range(address, address + span, access.size)):
            raise Ended(End("crash", pc=pc, detail=f"the access watchpoint stopped an instruction whose "
                            f"address 0x{address:08x} is not in the NPU's register page"))
        if access.load and self.pending is not None:
            self.pending.reads += 1
            if self.pending.reads > RUNNING_READS:     # done by now: before this read
                self._deliver("status poll" if self._page(address) == STATUS else "register read", pc)
        started = None
        for k, rt in enumerate(access.registers):
            at = address + k * access.size
            offset = self._page(at)
            if access.load:
                value = self._load(at, offset, access.size, access.signed)
                new[rt] = value
            else:
                value = regs[rt] & ((1 << 8 * access.size) - 1)
                if offset is None:
                    c.write_memory(at, value.to_bytes(access.size, "little"))
                else:
                    started = self._store(offset, access.size, value) or started
        base = access.new_base(regs)
        if base is not None and not (access.load and access.base in new):
            new[access.base] = base
        if PC in new:
            raise Ended(End("crash", pc=pc, detail="a load into the PC from the NPU's registers"))
        after = list(regs[:17])
        for r, value in new.items():
            after[r] = value
        after[PC], after[XPSR] = pc + access.length, it_advance(regs[XPSR])
        c.write_core_registers(after)
        if started is not None:
            self._job(started, pc)

    def _code(self, pc: int) -> bytes:
        """The 4 bytes at `pc`, from CODE_BLOCK-byte blocks read once each: the driver's
        register accesses sit in a few functions, so a few reads serve them all."""
        block = pc & -CODE_BLOCK
        data = self.code.get(block)
        if data is None:
            try:
                data = self.client.read_memory(block, CODE_BLOCK + 4)
            except rsp.RspError:    # the block runs off the end of memory: the instruction alone
                return self.client.read_memory(pc, 4)
            self.code[block] = data
        return data[pc - block:pc - block + 4]

    def _load(self, at: int, offset: int | None, size: int, signed: bool) -> int:
        if offset is None:
            raw = int.from_bytes(self.client.read_memory(at, size), "little")
        else:
            raw = (self.device.read(offset) >> 8 * (offset & 3)) & ((1 << 8 * size) - 1)
        if signed and raw >> (8 * size - 1):
            raw -= 1 << 8 * size
        return raw & 0xFFFFFFFF

    def _store(self, offset: int, size: int, value: int):
        if size < 4:                  # a narrow store merges into the 32-bit register
            shift, mask = 8 * (offset & 3), (1 << 8 * size) - 1
            value = (self.device.read(offset) & ~(mask << shift)) | (value << shift)
        return self.device.write(offset, value)

    # -- a job and its interrupt (weaklink.run.irq) --------------------------------------------
    def _job(self, start, pc: int) -> None:
        if self.pending is not None:              # the NPU runs one stream at a time
            self._deliver("next job", pc)
        begun = time.monotonic()
        call = self.calls[-1] if self.calls else None
        sizes = {r: n for r, _, n in call.bases} if call else None
        memory = HeldMemory(self.client)
        job = run_job(start, len(self.invocations), pc, memory,
                      accelerator=self.accelerator, system_config=self.system_config,
                      memory_mode=self.memory_mode, soc=self.soc, functional=self.functional,
                      sizes=sizes, required=self.required, vela_ini=self.vela_ini)
        self.invocations.append(job)
        done = job.completed
        if done.status == "hang":
            job.note = "the NPU never completes: no interrupt is raised"
            self.npu_seconds += time.monotonic() - begun
            return
        if job.status == "error":
            job.note = ("the emulator's check failed (see the NPU line); the NPU itself has no such "
                        f"check: it ran the stream to its end in {int(done.cycles['total'])} cycles "
                        "and raised its interrupt")
        for address in self.image.waits:
            self.client.insert(rsp.BREAKPOINT, address)
        clock = load_vela_ini(self.vela_ini).system_config(self.system_config).core_clock
        self.npu_seconds += time.monotonic() - begun
        self.pending = Pending(job, self.qemu.cpu_seconds(), time.monotonic(), budget(done.cycles["total"], clock),
                               memory.writes)

    def _waits(self, regs: list[int]) -> None:
        """The CPU is at a WFE or WFI while the job runs: it sleeps there until the job's
        interrupt wakes it. The instruction counts as executed, then the interrupt comes."""
        pc = regs[PC]
        kind, length = self.image.waits[pc]
        if not condition_passes(regs[XPSR]):      # in an IT block, its condition fails: not a wait
            self._step_over(pc, rsp.BREAKPOINT)
            return
        after = list(regs[:17])
        after[PC], after[XPSR] = pc + length, it_advance(regs[XPSR])
        self.client.write_core_registers(after)
        self._deliver(kind, pc)

    def _deliver(self, trigger: str, pc: int) -> None:
        """The job completes: its bytes into guest memory, STATUS and the PMU, the interrupt."""
        pending, self.pending = self.pending, None
        for address in self.image.waits:
            self.client.remove(rsp.BREAKPOINT, address)
        begun = time.monotonic()
        for address, data in pending.writes:
            self.client.write_memory(address, data)
        self.npu_seconds += time.monotonic() - begun
        job = pending.job
        self.device.finish({"cycles": job.completed.cycles["total"], **job.completed.pmu}, self.ports)
        self._in_guest()                    # the stub pends the NPU's IRQ from inside the guest
        job.interrupt, job.interrupt_at, job.interrupt_pc = True, trigger, pc

    def _in_guest(self, code: bytes = b"") -> list[int]:
        """Run `code` (by default the interrupt stub, which stays in place) in the stub area,
        in the CPU's mode; the registers it ended with. The CPU's own are put back after."""
        c, stub = self.client, self.image.stub
        regs = c.core_registers()
        if code:
            c.write_memory(stub, code)
        into = list(regs)
        into[PC], into[XPSR] = stub, regs[XPSR] & ~IT_BITS | THUMB
        c.write_core_registers(into)
        try:
            self._run_stub(len(code) or STUB_LENGTH)
            return c.core_registers()
        finally:
            c.write_core_registers(regs)
            if code:
                c.write_memory(stub, self.irq_stub)

    def _run_stub(self, length: int = STUB_LENGTH) -> None:
        """Run from the stub at the PC to its end (a breakpoint there, while it runs)."""
        end = self.image.stub + length
        self.client.insert(rsp.HW_BREAKPOINT, end)
        self._until(end)
        self.client.remove(rsp.HW_BREAKPOINT, end)

    # -- how it ends: exit line, exit call, fault (weaklink.run.ending) ---------------------------
    def _fault(self, regs: list[int]) -> None:
        """A handler of the fault vectors is entered: read the fault, then let the handler run
        (it may print, or return); it ends the run once the CPU spins in a loop it cannot leave."""
        pc = regs[PC]
        if regs[XPSR] & 0x1FF == 0:           # the handler's code called as a function: no fault
            self._step_over(pc)
            return
        # QEMU 7.2's stub does not give the process stack pointer: an MRS in the guest does
        self.fault = read_fault(self.client, regs, self.image.handler_names.get(pc, ()),
                                lambda: self._in_guest(MRS_R0_PSP)[0])
        self.watch, self.look_at = "fault", time.monotonic() + FIRST_LOOK
        loop = no_way_out(self._code, pc)
        if loop is not None:
            raise Ended(ending.fault_spin(self.fault, loop, self.exit_call))
        self._step_over(pc)

    def _look(self, regs: list[int]) -> None:
        """After an exit call or a fault: the run ends when the CPU spins where it cannot get out."""
        loop = no_way_out(self._code, regs[PC])
        if loop is None:
            self.look_at = time.monotonic() + POLL
            return
        raise Ended(self._exit_line()
                    or (ending.fault_spin(self.fault, loop, self.exit_call) if self.watch == "fault"
                        else ending.exit_spin(self.exit_call, regs[PC], loop)))

    # -- driver calls ------------------------------------------------------------------------------
    def _driver_call(self, regs: list[int]) -> None:
        call = driver_call(HeldMemory(self.client), regs)
        if call is not None:
            self.calls.append(call)


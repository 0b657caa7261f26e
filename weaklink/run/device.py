"""The Ethos-U55/U65 register page as a device: reads answered from a register model, writes
captured, and a command stream start reported to the caller.

The layout and the fields are Arm's (ethos-u-core-driver, src/ethosu55_interface.h and
ethosu65_interface.h, `struct NPU_REG`; the same offsets in Vela's
ethosu/vela/ethos_u55_regs/ethos_u55_regs.py). What the driver does with them
(src/ethosu_device_u55_u65.c): soft reset writes RESET with the security and privilege it
wants and polls STATUS.reset_status, then compares PROT with them; the optimizer-config check
compares the stream's header with CONFIG and ID; a job writes QBASE, QSIZE and BASEP[i] and
then CMD with transition_to_running_state; the interrupt handler writes CMD.clear_irq and
reads STATUS (bus_status, cmd_parse_error, wd_fault, ecc_fault: a fault; cmd_end_reached: done).
"""
from __future__ import annotations

from dataclasses import dataclass, field

ID, STATUS, CMD, RESET = 0x000, 0x004, 0x008, 0x00C
QBASE, QBASE_HI, QREAD, QCONFIG, QSIZE, PROT, CONFIG, LOCK = (0x010, 0x014, 0x018, 0x01C, 0x020,
                                                              0x024, 0x028, 0x02C)
REGIONCFG = 0x03C
BASEP = 0x080                 # BASEP[0..7]: 64-bit registers (low word, then high word)
BASEP_COUNT = 8
PMCR, PMCNTENSET, PMCNTENCLR, PMOVSSET, PMOVSCLR, PMINTSET, PMINTCLR = (0x180, 0x184, 0x188, 0x18C,
                                                                      0x190, 0x194, 0x198)
PMCCNTR_LO, PMCCNTR_HI = 0x1A0, 0x1A4
PMEVCNTR, PMEVTYPER, PMU_EVENTS = 0x300, 0x380, 4
PAGE = 0x1000

# STATUS bits (status_r)
STATE_RUNNING, IRQ_RAISED, BUS_STATUS, RESET_STATUS = 1 << 0, 1 << 1, 1 << 2, 1 << 3
CMD_PARSE_ERROR, CMD_END_REACHED = 1 << 4, 1 << 5
# CMD bits (cmd_r)
TRANSITION_TO_RUNNING, CLEAR_IRQ, CLOCK_POWER_Q = 1 << 0, 1 << 1, 0xC
# PMCR (pmcr_r): cnt_en, event_cnt_rst, cycle_cnt_rst; num_event_cnt = 4 at reset (0x2000)
PMCR_RESET, CNT_EN, EVENT_RST, CYCLE_RST = 0x2000, 1 << 0, 1 << 1, 1 << 2
CYCLE_COUNTER = 1 << 31       # PMCNTENSET bit of the cycle counter

# pmu_event_type values this model counts, and the emulator's figure for each.
EVENTS = {0x11: "cycles",                      # CYCLE
          0x20: "npu_idle_cycles",             # NPU_IDLE
          0x23: "npu_active_cycles",           # NPU_ACTIVE
          0x82: ("read", 0), 0x87: ("write", 0),      # AXI0_RD_DATA_BEAT_RECEIVED, AXI0_WR_DATA_BEAT_WRITTEN
          0x182: ("read", 1), 0x187: ("write", 1)}    # the same on AXI1


@dataclass(frozen=True)
class Start:
    """What the driver programmed when it wrote CMD.transition_to_running_state."""
    qbase: int
    qsize: int                # bytes of command stream
    basep: dict[int, int]     # region -> the address in BASEP[region]
    regioncfg: int
    qconfig: int


@dataclass
class EthosU:
    """The registers of one NPU. `id_word`/`config_word` are the accelerator's ID and CONFIG
    (what Vela compiled the stream for: npu/data/accelerators.toml). PROT starts as the
    CPU's state at reset (secure, privileged) and follows each soft reset's request."""
    id_word: int
    config_word: int
    regs: dict[int, int] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)

    def __post_init__(self):
        self.regs.update({ID: self.id_word, CONFIG: self.config_word, PROT: 0b01,
                          PMCR: PMCR_RESET})

    # -- the CPU's side ------------------------------------------------------------------------
    def read(self, offset: int) -> int:
        return self.regs.get(offset & ~3, 0)

    def write(self, offset: int, value: int) -> Start | None:
        """A 32-bit store; returns the job when it starts one."""
        offset &= ~3
        self.written.add(offset)
        if offset in (ID, CONFIG, PROT, STATUS, QREAD):             # read-only
            pass
        elif offset == RESET:
            # pending_CPL (bit 0: 1 privileged) and pending_CSL (bit 1: 1 non-secure) become
            # PROT's active_CPL/active_CSL; the reset completes at once (reset_status 0).
            self.regs[PROT] = value & 0b11
            self.regs[STATUS] = 0
        elif offset == CMD:
            self.regs[CMD] = value & CLOCK_POWER_Q
            if value & CLEAR_IRQ:
                self.regs[STATUS] = self.regs.get(STATUS, 0) & ~IRQ_RAISED
            if value & TRANSITION_TO_RUNNING:
                self.regs[STATUS] = STATE_RUNNING
                self.regs[QREAD] = 0
                return self.start()
        elif offset == PMCR:
            if value & EVENT_RST:
                for i in range(PMU_EVENTS):
                    self.regs[PMEVCNTR + 4 * i] = 0
            if value & CYCLE_RST:
                self.regs[PMCCNTR_LO] = self.regs[PMCCNTR_HI] = 0
            self.regs[PMCR] = (value & ~(EVENT_RST | CYCLE_RST) & 0x7FF) | (PMCR_RESET & 0xF800)
        elif offset in (PMCNTENSET, PMCNTENCLR, PMOVSSET, PMOVSCLR, PMINTSET, PMINTCLR):
            self._set_clear(offset, value)
        else:
            self.regs[offset] = value & 0xFFFFFFFF
        return None

    def _set_clear(self, offset: int, value: int) -> None:
        """Write-one-to-set / write-one-to-clear pairs share one state, read through either."""
        base = {PMCNTENCLR: PMCNTENSET, PMOVSCLR: PMOVSSET, PMINTCLR: PMINTSET}.get(offset, offset)
        state = self.regs.get(base, 0)
        state = state & ~value if base != offset else state | value
        self.regs[base] = self.regs[base + 4] = state & 0xFFFFFFFF

    def start(self) -> Start:
        basep = {}
        for i in range(BASEP_COUNT):
            lo, hi = BASEP + 8 * i, BASEP + 8 * i + 4
            if lo in self.written or hi in self.written:
                basep[i] = self.regs.get(lo, 0) | self.regs.get(hi, 0) << 32
        return Start(self.regs.get(QBASE, 0) | self.regs.get(QBASE_HI, 0) << 32,
                     self.regs.get(QSIZE, 0), basep, self.regs.get(REGIONCFG, 0),
                     self.regs.get(QCONFIG, 0))

    # -- the NPU's side ------------------------------------------------------------------------
    def finish(self, pmu: dict, ports: list[str]) -> None:
        """The stream ran to its end: STATUS says so (the interrupt line is raised), QREAD has
        consumed QSIZE bytes, and enabled PMU counters advance by the job's figures."""
        self.regs[STATUS] = IRQ_RAISED | CMD_END_REACHED
        self.regs[QREAD] = self.regs.get(QSIZE, 0)
        if not self.regs.get(PMCR, 0) & CNT_EN:
            return
        enabled = self.regs.get(PMCNTENSET, 0)
        if enabled & CYCLE_COUNTER:
            total = (self.regs.get(PMCCNTR_LO, 0) | self.regs.get(PMCCNTR_HI, 0) << 32) + pmu["cycles"]
            total &= (1 << 48) - 1
            self.regs[PMCCNTR_LO], self.regs[PMCCNTR_HI] = total & 0xFFFFFFFF, total >> 32
        for i in range(PMU_EVENTS):
            if enabled >> i & 1:
                event = EVENTS.get(self.regs.get(PMEVTYPER + 4 * i, 0))
                add = _event_count(event, pmu, ports)
                self.regs[PMEVCNTR + 4 * i] = (self.regs.get(PMEVCNTR + 4 * i, 0) + add) & 0xFFFFFFFF


def _event_count(event, pmu: dict, ports: list[str]) -> int:
    if event is None:
        return 0
    if isinstance(event, str):
        return int(pmu.get(event, 0))
    direction, port = event
    beats = pmu.get(f"axi_{direction}_beats", {})
    return int(beats.get(ports[port], 0)) if port < len(ports) else 0

"""A fault, as the firmware's handler saw it on entry: which exception, which handler (with every
symbol at its address: weak aliases of one Default_Handler share it), the faulting PC from the
stacked exception frame, and the fault status registers.

Facts (Armv8-M Architecture Reference Manual, DDI0553):
- IPSR (xPSR[8:0]) is the exception number: 2 NMI, 3 HardFault, 4 MemManage, 5 BusFault,
  6 UsageFault, 7 SecureFault, 11 SVCall, 12 DebugMonitor, 14 PendSV, 15 SysTick, 16+n IRQ n;
- on entry, LR holds EXC_RETURN: bit 2 (SPSEL) says the frame is on the process stack (PSP),
  else on the main stack (MSP, the SP a handler runs on); bit 5 (DCRS) clear means the callee
  registers were stacked first (an integrity signature, a reserved word and r4-r11: 40 bytes);
- the basic frame is r0, r1, r2, r3, r12, lr, the return address (the faulting instruction for
  a synchronous fault) and xPSR, from its lowest address;
- the fault status and address registers: CFSR 0xE000ED28 (MMFSR, BFSR, UFSR), HFSR
  0xE000ED2C, DFSR 0xE000ED30, MMFAR 0xE000ED34, BFAR 0xE000ED38.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from npu.records import Record

FAULT_REGISTERS = 0xE000ED28
REGISTER_NAMES = ("CFSR", "HFSR", "DFSR", "MMFAR", "BFAR")
EXCEPTIONS = {2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault",
              7: "SecureFault", 11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}
FAULT_NUMBERS = range(2, 8)
# The status bits by name (DDI0553, "CFSR, Configurable Fault Status Register", "HFSR").
CFSR_BITS = {0: "IACCVIOL", 1: "DACCVIOL", 3: "MUNSTKERR", 4: "MSTKERR", 5: "MLSPERR", 7: "MMARVALID",
             8: "IBUSERR", 9: "PRECISERR", 10: "IMPRECISERR", 11: "UNSTKERR", 12: "STKERR",
             13: "LSPERR", 15: "BFARVALID", 16: "UNDEFINSTR", 17: "INVSTATE", 18: "INVPC", 19: "NOCP",
             20: "STKOF", 24: "UNALIGNED", 25: "DIVBYZERO"}
HFSR_BITS = {1: "VECTTBL", 30: "FORCED", 31: "DEBUGEVT"}
SPSEL, DCRS = 1 << 2, 1 << 5
CALLEE_FRAME = 40
RETURN_ADDRESS = 24          # the stacked return address's offset in the basic frame


def exception_name(number: int) -> str:
    return f"IRQ {number - 16}" if number >= 16 else EXCEPTIONS.get(number, f"exception {number}")


@dataclass(frozen=True)
class Fault(Record):
    exception: int                    # IPSR on entry
    handler: int                      # the handler's address
    names: tuple[str, ...]            # the symbols at that address, the strong definition first
    pc: int | None                    # the stacked return address: the faulting instruction
    stack: str                        # MSP | PSP: where the frame was read
    registers: dict[str, int] | None  # CFSR, HFSR, DFSR, MMFAR, BFAR; None when not readable

    JSON = ("exception", "name", "handler", "handler_names=names", "pc", "stack", "registers",
            "status=status_text")

    @property
    def name(self) -> str:
        return exception_name(self.exception)

    def handler_text(self) -> str:
        """`Default_Handler (= HardFault_Handler, BusFault_Handler)`, or the address alone."""
        if not self.names:
            return f"the handler at 0x{self.handler:08x}"
        first, rest = self.names[0], self.names[1:]
        return f"{first} (= {', '.join(rest)})" if rest else first

    @property
    def status_text(self) -> str:
        """`CFSR 0x00008200 (PRECISERR, BFARVALID), HFSR 0x40000000 (FORCED), BFAR 0xfffffff0`:
        the set status bits by name; MMFAR and BFAR only when their VALID bit says they hold
        the address."""
        r = self.registers
        if r is None:
            return "fault registers not readable"
        cfsr, hfsr = r["CFSR"], r["HFSR"]
        parts = [f"CFSR 0x{cfsr:08x}{_bits(cfsr, CFSR_BITS)}", f"HFSR 0x{hfsr:08x}{_bits(hfsr, HFSR_BITS)}"]
        if cfsr >> 7 & 1:
            parts.append(f"MMFAR 0x{r['MMFAR']:08x}")
        if cfsr >> 15 & 1:
            parts.append(f"BFAR 0x{r['BFAR']:08x}")
        return ", ".join(parts)


def _bits(value: int, names: dict[int, str]) -> str:
    set_ = [n for bit, n in names.items() if value >> bit & 1]
    return f" ({', '.join(set_)})" if set_ else ""


def fault_registers(read) -> dict[str, int] | None:
    """CFSR..BFAR through the debugger's memory reads (`read(address, n)`), or None."""
    try:
        data = read(FAULT_REGISTERS, 4 * len(REGISTER_NAMES))
    except Exception:          # the stub refused the System Control Space
        return None
    return dict(zip(REGISTER_NAMES, struct.unpack(f"<{len(REGISTER_NAMES)}I", data)))


def frame_address(exc_return: int, msp: int, psp) -> tuple[int | None, str]:
    """Where the basic frame starts, and on which stack; `psp()` reads the process stack
    pointer (None when it cannot). An LR that is not an EXC_RETURN gives None."""
    if exc_return >> 24 != 0xFF:
        return None, "MSP"
    stack = "PSP" if exc_return & SPSEL else "MSP"
    try:
        sp = psp() if stack == "PSP" else msp
    except Exception:          # the guest could not run the read
        sp = None
    if sp is None:
        return None, stack
    return sp + (0 if exc_return & DCRS else CALLEE_FRAME), stack


def read_fault(client, regs: list[int], names: tuple[str, ...], psp) -> Fault:
    """The fault at its handler's first instruction (`regs`: r0-r15, xPSR), through the
    debugger (`client.read_memory`); `psp()` reads the process stack pointer."""
    number = regs[16] & 0x1FF
    frame, stack = frame_address(regs[14], regs[13], psp)
    stacked = None
    if frame is not None:
        try:
            stacked = struct.unpack("<I", client.read_memory(frame + RETURN_ADDRESS, 4))[0]
        except Exception:      # a frame outside memory: the stacking itself faulted
            pass
    registers = fault_registers(client.read_memory) if number in FAULT_NUMBERS else None
    return Fault(number, regs[15], names, stacked, stack, registers)

"""How a run ends, as a record: the verdict (`kind`), the way (`ending`), and what the run saw on
the way out: the exit call and its status, the fault and its handler, the loop the CPU could
not leave (weaklink.run.spin).

The ways firmware ends, and how each is told:
- `semihosting`: SYS_EXIT (QEMU exits with the status);
- `exit-line`: Arm's Corstone platform code (ethos-u core_platform, targets/corstone-300/
  retarget.c) ends a program in `_exit()` by printing "Application exit code: N." and
  end-of-transmission (0x04, which stops an FVP run with uart0.shutdown_on_eot), then spins;
- `exit-spin`: `exit` or `_exit` was called (the status is r0 at its entry), then the CPU spins
  in a loop it cannot leave (Zephyr's newlib hook prints "exit" and loops);
- `fault`: a fault vector's handler was entered, then the CPU spins in a loop it cannot leave;
- `timeout`, `crash` (the debugger saw what it cannot serve), `qemu` (QEMU stopped).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from weaklink.run.fault import FAULT_NUMBERS, Fault

EOT = b"\x04"
EXIT_LINE = re.compile(rb"Application exit code: (-?\d+)\.\r?\n")


@dataclass
class End:
    """How the run ended. `kind` is the run's verdict (exit | eot | timeout | crash | qemu);
    `ending` says how: semihosting | exit-line | exit-spin | fault | timeout | crash | qemu."""
    kind: str
    exit_code: int | None = None
    pc: int | None = None
    detail: str = ""
    ending: str = ""
    fault: Fault | None = None
    spin: tuple[int, int] | None = None     # the loop the CPU could not leave: first, last address
    exit_call: tuple[str, int, int] | None = None     # (exit or _exit, status, its entry)

    def __post_init__(self):
        if not self.ending:
            self.ending = {"exit": "semihosting", "eot": "exit-line"}.get(self.kind, self.kind)


class Ended(Exception):
    def __init__(self, end: End):
        super().__init__(end.detail)
        self.end = end


def exit_line(uart: bytes, exit_call) -> End | None:
    """The platform's exit line or EOT on the UART, or None."""
    m = EXIT_LINE.search(uart)
    if EOT not in uart and not m:
        return None
    return End("eot", int(m.group(1)) if m else None, exit_call=exit_call,
               detail="the firmware sent end-of-transmission (0x04) on the UART"
               if EOT in uart else "the firmware printed its exit line")


def exit_spin(exit_call, pc: int, loop: tuple[int, int]) -> End:
    name, status, _ = exit_call
    return End("exit", status, pc=pc, ending="exit-spin", spin=loop, exit_call=exit_call,
               detail=f"{name}({status}) was called; then the CPU spun at {span(loop)}, a loop it cannot leave")


def fault_spin(f: Fault, loop: tuple[int, int], exit_call) -> End:
    entered = f"{f.handler_text()} at 0x{f.handler:08x}"
    if f.exception not in FAULT_NUMBERS:
        detail = (f"{f.name} went to {entered}, which spins at {span(loop)}: the image has no handler "
                  "of its own for it")
    elif f.pc is not None:
        detail = (f"{f.name} (pc from the exception frame on the {f.stack}; taken to {entered}, which "
                  f"spins at {span(loop)}; {f.status_text})")
    else:
        detail = f"{f.name} (taken to {entered}, which spins at {span(loop)}; {f.status_text})"
    return End("crash", pc=f.pc if f.pc is not None else loop[0], detail=detail, ending="fault",
               fault=f, spin=loop, exit_call=exit_call)


def timeout(seconds: float, pc: int | None, loop, fault, exit_call) -> End:
    return End("timeout", pc=pc, detail=f"no exit within {seconds:g} s", fault=fault, spin=loop,
               exit_call=exit_call)


def span(loop: tuple[int, int]) -> str:
    return f"0x{loop[0]:08x}" if loop[0] == loop[1] else f"0x{loop[0]:08x}..0x{loop[1]:08x}"

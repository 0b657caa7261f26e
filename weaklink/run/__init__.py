"""Run: the firmware itself executes on QEMU's mps3-an547 (Corstone-300; Corstone-320 images
that leave BRAM empty), with the Ethos-U served by `npu/` through the debugger.

`run(elf, accelerator=..., system_config=..., memory_mode=...)` boots the image, serves the
NPU's register page (weaklink.run.session), and returns a RunReport: the UART text, the exit
code, and each NPU job with the bases the driver programmed. The modules, in the order of the
data flow: `image` (what the image needs of the board: npu.socfile.qemu_board), `qemu` (the
emulator), `rsp` (the GDB remote-protocol client), `loadstore` and `device` (the register page
as a device), `job` (a command stream on `npu/`), `session` (the loop), `report`.
"""
from __future__ import annotations

import time

from npu.hw import accelerator as npu_accelerator, load_vela_ini
from npu.socfile import default_soc, qemu_board

from weaklink.errors import InputError
from weaklink.read.image import Image
from weaklink.run import image as run_image
from weaklink.run.report import RunReport
from weaklink.run.session import Session

DEFAULT_TIMEOUT = 60.0

__all__ = ["DEFAULT_TIMEOUT", "RunReport", "run"]


def run(elf, *, accelerator: str, system_config: str, memory_mode: str, soc: str | None = None,
        functional: bool | None = None, timeout: float = DEFAULT_TIMEOUT,
        vela_ini: str | None = None, session: dict | None = None) -> RunReport:
    """Boot `elf` and serve its NPU. `elf`: the image's path, or the weaklink.read.image.Image
    already read (check --run reads it once; a stripped image boots too). `functional`: None = on bytes, timing only for a stream the
    functional engine cannot compute (said in the job's note and the report's summary); True =
    on bytes or InputError; False = timing only. `vela_ini`: the file the system config and
    memory mode are read from (default: Vela's Arm/vela.ini). `session`: more of Session's
    fields (weaklink fvp's QEMU options, tee, EOT rule and hooks)."""
    begun = time.monotonic()
    acc = npu_accelerator(accelerator)
    soc = soc or default_soc(acc)
    required = bool(functional)          # --functional: a stream the engine cannot compute fails
    functional = functional is not False
    if timeout <= 0:
        raise InputError(None, f"--timeout {timeout:g}: expected a positive number of seconds")
    ini = load_vela_ini(vela_ini)         # a config it lacks: one line, before QEMU starts
    ini.system_config(system_config)
    ini.memory_mode(memory_mode)
    board = qemu_board(soc, default_soc(acc))
    image = run_image.load(elf if isinstance(elf, Image) else Image.from_path(elf, stripped=True), board)
    fields = dict(session or {})
    hooks = fields.pop("hooks", None)         # a function of the image: its breakpoints and their hooks
    session = Session(image, accelerator, system_config, memory_mode, soc, functional, timeout, required,
                      vela_ini=vela_ini, **fields)
    if hooks is not None:
        session.hooks = hooks(image)
    end, uart, semihosting = session.run()
    return RunReport(image.path, accelerator, system_config, memory_mode, soc, board.name,
                     "functional" if functional else "timing", end,
                     uart.decode("utf-8", "replace"), semihosting.decode("utf-8", "replace"),
                     session.invocations, session.calls, image, timeout,
                     {"wall": time.monotonic() - begun, "qemu_start": session.boot_seconds,
                      "npu": session.npu_seconds})

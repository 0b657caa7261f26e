"""Start Debian's `qemu-system-arm` on the board, halted, with its GDB stub on a UNIX socket.

The command line (QEMU 7.2 options):
- `-M mps3-an547 -nodefaults -display none -net none`: the board and nothing else;
- `-chardev file,... -serial chardev:uart`: UART0, the firmware's console, into a file;
- `-semihosting-config enable=on,target=native,chardev=semihosting`: QEMU itself serves
  semihosting calls (SYS_EXIT ends the run with the firmware's exit status); their console
  output goes into a file of its own (without `chardev=`, QEMU 7.2 writes it to its stderr,
  among its own messages: measured);
- `-gdb chardev:gdb -S`: the CPU waits at reset for the debugger;
- `-kernel FIRMWARE.elf`: the ELF's segments are loaded where they say.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from weaklink.errors import ToolchainMissing

QEMU = os.environ.get("WEAKLINK_QEMU", "qemu-system-arm")
INSTALL = "apt-get install qemu-system-arm"


def qemu_path() -> str:
    path = shutil.which(QEMU)
    if path is None:
        raise ToolchainMissing(f"{QEMU} not found on PATH; install it with `{INSTALL}`")
    return path


def command(qemu: str, machine: str, elf: str, uart: Path, gdb: Path | None,
            semihosting: Path | None = None) -> list[str]:
    argv = [qemu, "-M", machine, "-nodefaults", "-display", "none", "-net", "none",
            "-chardev", f"file,id=uart,path={uart}", "-serial", "chardev:uart"]
    if semihosting is None:
        argv += ["-semihosting-config", "enable=on,target=native"]
    else:
        argv += ["-chardev", f"file,id=semihosting,path={semihosting}",
                 "-semihosting-config", "enable=on,target=native,chardev=semihosting"]
    if gdb is not None:
        argv += ["-chardev", f"socket,id=gdb,path={gdb},server=on,wait=off", "-gdb", "chardev:gdb", "-S"]
    return argv + ["-kernel", elf]


@dataclass
class Qemu:
    process: subprocess.Popen
    workdir: tempfile.TemporaryDirectory
    uart: Path
    gdb: Path
    semihosting: Path
    stderr: Path

    @classmethod
    def start(cls, machine: str, elf: str) -> "Qemu":
        qemu = qemu_path()
        work = tempfile.TemporaryDirectory(prefix="weaklink-run-")
        root = Path(work.name)
        uart, gdb = root / "uart.txt", root / "gdb.sock"
        semihosting, err = root / "semihosting.txt", root / "stderr.txt"
        with open(err, "wb") as e:
            proc = subprocess.Popen(command(qemu, machine, elf, uart, gdb, semihosting),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=e)
        return cls(proc, work, uart, gdb, semihosting, err)

    def uart_text(self) -> bytes:
        return self.uart.read_bytes() if self.uart.exists() else b""

    def semihosting_text(self) -> bytes:
        return self.semihosting.read_bytes() if self.semihosting.exists() else b""

    def errors(self) -> str:
        """QEMU's own complaints, without the board's notice about its unconnected NIC."""
        text = self.stderr.read_text(errors="replace") if self.stderr.exists() else ""
        return "\n".join(line for line in text.splitlines() if "has no peer" not in line).strip()

    def cpu_seconds(self) -> float | None:
        """The CPU time QEMU's threads have run so far (its vCPU's among them): the sum of
        Linux's /proc/PID/task/*/schedstat (nanoseconds on the CPU, first field); None where
        the system has no such file."""
        root = Path(f"/proc/{self.process.pid}/task")
        try:
            tasks = list(root.iterdir())
        except OSError:
            return None
        total = 0
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except FileNotFoundError:          # a thread that ended meanwhile
                continue
            except (OSError, ValueError, IndexError):
                return None
        return total / 1e9

    def exited(self) -> int | None:
        return self.process.poll()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        self.stop()
        self.workdir.cleanup()

"""Start Debian's `qemu-system-arm` on the board, halted, with its GDB stub on a UNIX socket.

The command line (QEMU 7.2 options):
- `-M mps3-an547 -nodefaults -display none -net none`: the board and nothing else;
- `-chardev file,... -serial chardev:uart`: UART0, the firmware's console, into a file;
- `-semihosting-config enable=on,target=native,chardev=semihosting`: QEMU itself serves
  semihosting calls (SYS_EXIT ends the run with the firmware's exit status); their console
  output (SYS_WRITEC, SYS_WRITE0) goes into a file of its own (without `chardev=`, QEMU 7.2
  writes it to its stderr, among its own messages: measured). The file handles newlib's
  rdimon opens on `:tt` for stdout and stderr (SYS_OPEN modes 4 and 8) are QEMU's own stdout
  and stderr instead (QEMU 7.2 semihosting/arm-compat-semi.c, SYS_OPEN of ":tt"; measured:
  ExecuTorch's semihosting runner logs with fprintf(stderr)). An FVP prints all of these on
  its terminal, so QEMU's stdout and stderr are the same file, opened for appending, with the
  chardev appending too (`append=on`): one console in the order written. QEMU's own messages
  there are the lines that start with its program name and a colon (QEMU's error_report);
- `-gdb chardev:gdb -S`: the CPU waits at reset for the debugger;
- `-kernel FIRMWARE.elf`: the ELF's segments are loaded where they say.

`Options` (for `weaklink fvp`): semihosting off (a BKPT 0xAB is then a debug event the CPU
escalates to HardFault), the command line SYS_GET_CMDLINE answers (QEMU joins its `arg=`
values with spaces: one value is the line as given), the directory semihosting's file calls
resolve relative paths in (QEMU's own working directory), and raw files QEMU's generic loader
(`-device loader,file=...,addr=...,force-raw=on`) puts in memory before the CPU starts.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from weaklink.toolchain import which

QEMU = os.environ.get("WEAKLINK_QEMU", "qemu-system-arm")
INSTALL = "apt-get install qemu-system-arm"


def qemu_path() -> str:
    return which(QEMU, install=INSTALL)


@dataclass(frozen=True)
class Options:
    semihosting: bool = True
    cmdline: str | None = None
    cwd: str | None = None
    data: tuple[tuple[str, int], ...] = ()     # (file, address)
    uarts: tuple[str, ...] = ()                # files for UART1, UART2, ... ("": nowhere)


def _value(text) -> str:
    """A QEMU option value: a comma is written twice."""
    return str(text).replace(",", ",,")


def command(qemu: str, machine: str, elf: str, uart: Path, gdb: Path | None,
            semihosting: Path | None = None, options: Options = Options()) -> list[str]:
    argv = [qemu, "-M", machine, "-nodefaults", "-display", "none", "-net", "none",
            "-chardev", f"file,id=uart,path={_value(uart)}", "-serial", "chardev:uart"]
    # mps3-an547 connects its UARTs to -serial in order (QEMU hw/arm/mps2-tz.c, serial_hd(i))
    for n, path in enumerate(options.uarts, 1):
        argv += ["-chardev", f"file,id=uart{n},path={_value(path)}", "-serial", f"chardev:uart{n}"] \
            if path else ["-serial", "null"]
    config = f"enable={'on' if options.semihosting else 'off'},target=native"
    if options.cmdline is not None:
        config += f",arg={_value(options.cmdline)}"
    if semihosting is None:
        argv += ["-semihosting-config", config]
    else:
        argv += ["-chardev", f"file,id=semihosting,path={_value(semihosting)},append=on",
                 "-semihosting-config", f"{config},chardev=semihosting"]
    for path, address in options.data:
        argv += ["-device", f"loader,file={_value(path)},addr=0x{address:x},force-raw=on"]
    if gdb is not None:
        argv += ["-chardev", f"socket,id=gdb,path={gdb},server=on,wait=off", "-gdb", "chardev:gdb", "-S"]
    return argv + ["-kernel", elf]


@dataclass
class Qemu:
    process: subprocess.Popen
    workdir: tempfile.TemporaryDirectory
    uart: Path
    gdb: Path
    semihosting: Path                            # the console: chardev, QEMU's stdout and stderr
    own: bytes                                   # how QEMU's own lines there start

    @classmethod
    def start(cls, machine: str, elf: str, options: Options = Options()) -> "Qemu":
        qemu = qemu_path()
        work = tempfile.TemporaryDirectory(prefix="weaklink-run-")
        root = Path(work.name)
        uart, gdb = root / "uart.txt", root / "gdb.sock"
        semihosting = root / "semihosting.txt"
        with open(semihosting, "ab") as console:
            proc = subprocess.Popen(command(qemu, machine, str(Path(elf).resolve()), uart, gdb, semihosting,
                                            options),
                                    stdin=subprocess.DEVNULL, stdout=console, stderr=console,
                                    cwd=options.cwd)
        return cls(proc, work, uart, gdb, semihosting, Path(qemu).name.encode() + b":")

    def uart_text(self) -> bytes:
        return self.uart.read_bytes() if self.uart.exists() else b""

    def _console(self) -> list[bytes]:
        text = self.semihosting.read_bytes() if self.semihosting.exists() else b""
        return text.splitlines(keepends=True)

    def semihosting_text(self) -> bytes:
        """The firmware's semihosting console so far, without QEMU's own lines. A last line not
        yet ended that could still become one of them is held back, so the text only grows."""
        lines = self._console()
        if lines and not lines[-1].endswith(b"\n") and self.own.startswith(lines[-1][:len(self.own)]):
            lines.pop()
        return b"".join(line for line in lines if not line.startswith(self.own))

    def errors(self) -> str:
        """QEMU's own complaints, without the board's notice about its unconnected NIC."""
        own = (line.decode(errors="replace").rstrip() for line in self._console() if line.startswith(self.own))
        return "\n".join(line for line in own if "has no peer" not in line).strip()

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

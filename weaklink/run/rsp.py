"""A GDB remote serial protocol client: the debugger side of QEMU's GDB stub, over a socket.

The protocol (GDB manual, "Remote Protocol"): each packet is `$payload#cc`, cc the payload's
byte sum modulo 256 in hex; the receiver acknowledges with `+` (or asks again with `-`). `}`
escapes a byte as `}` then the byte XOR 0x20, and `*` starts a run-length encoding. A Ctrl-C
byte (0x03) interrupts the running target.

What QEMU 7.2's stub does that matters here (measured, see the module's tests):
- it has no `QStartNoAckMode`: every packet is acknowledged;
- `p`/`P` answer nothing until `qXfer:features:read:target.xml` has been read, which also
  gives the register numbers (`regnum`);
- `c` at a breakpoint stops at it again at once: step off it first;
- watchpoints on Arm stop before the access (the load or store has not happened), with a
  stop reply `T05...;watch:ADDR;` (`rwatch`, `awatch`);
- the target's exit (semihosting SYS_EXIT) is a `W` packet with the exit status;
- memory is written with `M` (hex): `X` (binary) is answered with an empty packet;
- `G` writes the registers in the `g` layout from the packet's start, as far as it goes.
"""
from __future__ import annotations

import re
import select
import socket
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

# Z-packet types (GDB manual, "Packets": z type,addr,kind).
BREAKPOINT, HW_BREAKPOINT, WRITE_WATCH, READ_WATCH, ACCESS_WATCH = 0, 1, 2, 3, 4
SIGTRAP = 5
INTERRUPT = b"\x03"


class RspError(Exception):
    """The stub answered with an error, broke the protocol, or went away."""


@dataclass(frozen=True)
class Stop:
    """Why the target stopped: a signal (with the watchpoint hit, if one was), or its exit."""
    signal: int | None = None
    watch: str | None = None            # "watch" | "rwatch" | "awatch"
    address: int | None = None          # the watched address the access hit
    exit_code: int | None = None        # set when the target exited (W packet)
    killed: int | None = None           # set when it was terminated by a signal (X packet)

    @property
    def exited(self) -> bool:
        return self.exit_code is not None or self.killed is not None


@dataclass(frozen=True)
class Register:
    name: str
    regnum: int
    bits: int


def checksum(payload: bytes) -> bytes:
    return b"%02x" % (sum(payload) & 0xFF)


def unescape(payload: bytes) -> bytes:
    """Undo `}` escapes and expand `*` run-length encoding (the byte before `*` repeated
    count - 29 more times)."""
    if b"}" not in payload and b"*" not in payload:     # hex replies, most packets: nothing to undo
        return payload
    out, i = bytearray(), 0
    while i < len(payload):
        b = payload[i]
        if b == 0x7D:
            out.append(payload[i + 1] ^ 0x20)
            i += 2
        elif b == 0x2A and out:
            out += bytes((out[-1],)) * (payload[i + 1] - 29)
            i += 2
        else:
            out.append(b)
            i += 1
    return bytes(out)


def parse_stop(payload: bytes) -> Stop:
    """A stop reply: `S05`, `T05key:value;...`, `W00` (exited), `X09` (killed)."""
    text = payload.decode("ascii", "replace")
    kind = text[:1]
    if kind == "W":
        return Stop(exit_code=int(text[1:3], 16))
    if kind == "X":
        return Stop(killed=int(text[1:3], 16))
    if kind not in "ST" or len(text) < 3:
        raise RspError(f"unexpected stop reply {text!r}")
    watch = address = None
    for item in text[3:].split(";"):
        key, _, value = item.partition(":")
        if key in ("watch", "rwatch", "awatch"):
            watch, address = key, int(value, 16)
    return Stop(signal=int(text[1:3], 16), watch=watch, address=address)


class GdbClient:
    """One connection to a GDB stub. Every request waits for its reply; `resume` starts the
    target and `wait` collects its stop (or nothing, after a timeout)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = b""
        self.packet_size = 4096
        self.registers: dict[str, Register] = {}

    @classmethod
    def connect(cls, path: str, timeout: float = 5.0, alive=None) -> "GdbClient":
        """The stub at the UNIX socket `path`; retried until it listens, `timeout` passes, or
        `alive()` (the stub's process) says it is gone."""
        deadline = time.monotonic() + timeout
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                client = cls(sock)
                client.handshake()
                return client
            except (OSError, RspError) as e:
                # QEMU may take (and drop) a connection before its stub is set up: try again
                sock.close()
                if time.monotonic() > deadline or (alive is not None and not alive()):
                    raise RspError(f"no GDB stub at {path}: {e}") from None
                time.sleep(0.002)

    def close(self) -> None:
        self.sock.close()

    def _write(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise RspError(f"the GDB stub closed the connection ({e})") from None

    # -- packets -------------------------------------------------------------------------------
    def _read_more(self, timeout: float | None) -> bool:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return False
        try:
            data = self.sock.recv(65536)
        except ConnectionError as e:
            raise RspError(f"the GDB stub closed the connection ({e})") from None
        if not data:
            raise RspError("the GDB stub closed the connection")
        self.buffer += data
        return True

    def _take_packet(self) -> bytes | None:
        """One complete packet from the buffer (acknowledged), or None. Stray `+` and `-` are
        acknowledgements of our own packets, handled by `send`."""
        start = self.buffer.find(b"$")
        if start < 0:
            self.buffer = b""
            return None
        end = self.buffer.find(b"#", start)
        if end < 0 or len(self.buffer) < end + 3:
            self.buffer = self.buffer[start:]
            return None
        payload, cc = self.buffer[start + 1:end], self.buffer[end + 1:end + 3]
        self.buffer = self.buffer[end + 3:]
        if checksum(payload) != cc.lower():
            self._write(b"-")
            return None
        try:
            self.sock.sendall(b"+")
        except OSError:         # the stub sent its last packet (W: the target exited) and left
            pass
        return unescape(payload)

    def receive(self, timeout: float | None = 10.0) -> bytes | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            packet = self._take_packet()
            if packet is not None:
                return packet
            left = None if deadline is None else max(deadline - time.monotonic(), 0)
            if not self._read_more(left):
                return None

    def send(self, payload: bytes) -> None:
        """Send a packet and wait for its `+` (resent on `-`, at most three times)."""
        frame = b"$" + payload + b"#" + checksum(payload)
        for _ in range(3):
            self._write(frame)
            if self._ack():
                return
        raise RspError(f"the stub refused packet {payload[:40]!r} three times")

    def _ack(self) -> bool:
        while not self.buffer:
            if not self._read_more(10.0):
                raise RspError("no acknowledgement from the GDB stub within 10 s")
        head, self.buffer = self.buffer[:1], self.buffer[1:]
        if head == b"+":
            return True
        if head == b"-":
            return False
        self.buffer = head + self.buffer       # a packet already: its ack was lost; accept
        return True

    def request(self, payload: str, timeout: float = 10.0) -> bytes:
        data = payload.encode()
        self.send(data)
        reply = self.receive(timeout)
        if reply is None:
            raise RspError(f"no reply to {data[:40]!r} within {timeout} s")
        return reply

    def ok(self, payload: str) -> None:
        reply = self.request(payload)
        if reply != b"OK":
            raise RspError(f"{payload!r}: stub answered {reply!r}")

    # -- session set-up ----------------------------------------------------------------------
    def handshake(self) -> None:
        reply = self.request("qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=arm")
        m = re.search(rb"PacketSize=([0-9a-fA-F]+)", reply)
        if m:
            self.packet_size = int(m.group(1), 16)
        self.registers = self._target_registers()

    def _xfer(self, annex: str) -> bytes:
        out, offset = b"", 0
        while True:
            reply = self.request(f"qXfer:features:read:{annex}:{offset:x},{self.packet_size - 16:x}")
            if reply[:1] not in (b"m", b"l"):
                raise RspError(f"qXfer {annex}: {reply[:40]!r}")
            out += reply[1:]
            offset += len(reply) - 1
            if reply[:1] == b"l":
                return out

    def _target_registers(self) -> dict[str, Register]:
        """The register numbers, from target.xml and the files it includes. Reading it is
        also what makes QEMU's stub answer `p` and `P`."""
        regs: dict[str, Register] = {}
        pending, seen, nextnum = ["target.xml"], set(), 0
        while pending:
            annex = pending.pop(0)
            if annex in seen:
                continue
            seen.add(annex)
            # QEMU's target.xml uses `xi:include` without declaring the xi namespace
            root = ET.fromstring(self._xfer(annex).replace(b"xi:include", b"include"))
            for el in root.iter():
                tag = el.tag.rsplit("}", 1)[-1]
                if tag == "include":
                    pending.append(el.get("href"))
                elif tag == "reg":
                    num = int(el.get("regnum", nextnum))
                    regs[el.get("name")] = Register(el.get("name"), num, int(el.get("bitsize", 32)))
                    nextnum = num + 1
        return regs

    # -- registers and memory ----------------------------------------------------------------
    def core_registers(self) -> list[int]:
        """r0..r15 and xPSR from one `g` packet: QEMU sends the core registers, then (once the
        target description was read) xPSR, as 32-bit little-endian words."""
        reply = self.request("g")
        if len(reply) < 136:
            raise RspError(f"`g` answered {reply[:40]!r}")
        return [int.from_bytes(bytes.fromhex(reply[i * 8:i * 8 + 8].decode()), "little") for i in range(17)]

    def write_core_registers(self, values: list[int]) -> None:
        """r0..r15 and xPSR in one `G` packet, in the `g` layout: QEMU writes registers from
        the packet's start for as many bytes as it holds, so the 17 words set exactly these."""
        self.ok("G" + b"".join((v & 0xFFFFFFFF).to_bytes(4, "little") for v in values[:17]).hex())

    def regnum(self, name: str) -> int:
        if name in self.registers:
            return self.registers[name].regnum
        if re.fullmatch(r"r\d+", name) and int(name[1:]) < 16:
            return int(name[1:])
        raise RspError(f"the target has no register {name!r}")

    def write_register(self, name: str, value: int) -> None:
        bits = self.registers[name].bits if name in self.registers else 32
        data = (value & ((1 << bits) - 1)).to_bytes(bits // 8, "little").hex()
        self.ok(f"P{self.regnum(name):x}={data}")

    def read_memory(self, address: int, length: int) -> bytes:
        out, chunk = bytearray(), (self.packet_size - 8) // 2
        while len(out) < length:
            n = min(chunk, length - len(out))
            reply = self.request(f"m{address + len(out):x},{n:x}")
            if reply.startswith(b"E") and len(reply) == 3 or not reply:
                raise RspError(f"reading {n} bytes at 0x{address + len(out):08x}: {reply!r}")
            out += bytes.fromhex(reply.decode())
        return bytes(out)

    def write_memory(self, address: int, data: bytes) -> None:
        """`M` with hex data (QEMU 7.2 answers `X` with an empty packet: unsupported)."""
        chunk = (self.packet_size - 32) // 2
        for pos in range(0, len(data), chunk):
            part = data[pos:pos + chunk]
            self.ok(f"M{address + pos:x},{len(part):x}:{part.hex()}")

    # -- break- and watchpoints --------------------------------------------------------------
    def insert(self, kind: int, address: int, length: int = 2) -> None:
        self.ok(f"Z{kind},{address:x},{length:x}")

    def remove(self, kind: int, address: int, length: int = 2) -> None:
        self.ok(f"z{kind},{address:x},{length:x}")

    # -- execution -----------------------------------------------------------------------------
    def resume(self, step: bool = False) -> None:
        self.send(b"s" if step else b"c")

    def wait(self, timeout: float | None) -> Stop | None:
        """The stop reply of a resumed target, or None when `timeout` passes first."""
        packet = self.receive(timeout)
        if packet is None:
            return None
        return parse_stop(packet)

    def step(self) -> Stop:
        self.resume(step=True)
        stop = self.wait(10.0)
        if stop is None:
            raise RspError("a single step did not stop within 10 s")
        return stop

    def interrupt(self, timeout: float = 5.0) -> Stop | None:
        self._write(INTERRUPT)
        return self.wait(timeout)

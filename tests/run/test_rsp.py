"""The GDB remote-protocol client (weaklink.run.rsp): the packet layer on its own, then every
request against QEMU's stub on a real image, including the stub's quirks the session relies on."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from weaklink import toolchain
from weaklink.run import loadstore, rsp
from weaklink.run.qemu import Qemu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import build_firmware  # noqa: E402

MAIN = r"""
void say(const char *s);
volatile unsigned int counter = 5;
volatile unsigned int sink;
int main(void) { say("hello\n"); sink = counter; counter = 7; return 42; }
"""


def test_checksum_and_escapes():
    assert rsp.checksum(b"OK") == b"9a"
    assert rsp.unescape(b"a}\x03b") == b"a#b"           # } escapes #: 0x23 ^ 0x20 = 0x03
    assert rsp.unescape(b"0* ") == b"0" * 4              # run-length: ' ' is 32, 32 - 29 = 3 more


@pytest.mark.parametrize("packet, stop", [
    (b"S05", rsp.Stop(signal=5)),
    (b"T05thread:p01.01;", rsp.Stop(signal=5)),
    (b"T05thread:p01.01;awatch:58102000;", rsp.Stop(signal=5, watch="awatch", address=0x58102000)),
    (b"W2a", rsp.Stop(exit_code=42)),
    (b"X09", rsp.Stop(killed=9)),
])
def test_stop_replies(packet, stop):
    assert rsp.parse_stop(packet) == stop


def test_stop_reply_garbage_is_an_error():
    with pytest.raises(rsp.RspError):
        rsp.parse_stop(b"OK")


def _symbols(elf):
    out = subprocess.run([toolchain.tool("nm"), str(elf)], capture_output=True, text=True).stdout
    return {parts[2]: int(parts[0], 16) for parts in (line.split() for line in out.splitlines()) if len(parts) == 3}


@pytest.fixture
def session(qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, MAIN)
    q = Qemu.start("mps3-an547", str(elf))
    client = rsp.GdbClient.connect(str(q.gdb))
    yield client, _symbols(elf), q
    client.close()
    q.close()


def read_register(client, name: str) -> int:
    """One register by its `p` packet (the session reads them all with `g`)."""
    reply = client.request(f"p{client.regnum(name):x}")
    assert reply and not reply.startswith(b"E"), reply
    return int.from_bytes(bytes.fromhex(reply.decode()), "little")


def test_registers_at_reset(session):
    client, syms, _ = session
    assert client.registers["pc"].regnum == 15 and client.registers["xpsr"].regnum == 25
    regs = client.core_registers()
    assert regs[15] == syms["Reset_Handler"] & ~1
    assert regs[13] == syms["__stack_top"]
    assert regs[16] >> 24 & 1                               # xPSR.T: Thumb
    assert read_register(client, "pc") == regs[15]


def test_memory_round_trip_across_packets(session):
    client, _, _ = session
    data = bytes((i * 7 + 3) & 0xFF for i in range(10000))  # more than two 4 KB packets
    client.write_memory(0x30010000, data)
    assert client.read_memory(0x30010000, len(data)) == data


def test_register_write(session):
    client, _, _ = session
    client.write_register("r7", 0x12345678)
    assert client.core_registers()[7] == 0x12345678


def test_core_registers_written_in_one_packet(session):
    """`G` with r0..r15 and xPSR sets exactly those: each reads back, and the VFP registers
    after them in the `g` layout are untouched."""
    client, _, _ = session
    before = client.core_registers()
    s0 = read_register(client, "s0") if "s0" in client.registers else None
    want = [0x11110000 + r for r in range(13)] + [before[13], before[14], before[15] + 2,
                                                  before[16] ^ 1 << 29]      # the C flag flipped
    client.write_core_registers(want)
    assert client.core_registers() == want
    if s0 is not None:
        assert read_register(client, "s0") == s0


def test_breakpoint_hits_again_until_stepped_off(session):
    client, syms, _ = session
    main = syms["main"] & ~1
    client.insert(rsp.HW_BREAKPOINT, main)
    client.resume()
    assert client.wait(10).signal == rsp.SIGTRAP and client.core_registers()[15] == main
    client.resume()                                         # QEMU: stops at the same place
    assert client.wait(10).signal == rsp.SIGTRAP and client.core_registers()[15] == main
    client.remove(rsp.HW_BREAKPOINT, main)
    client.step()
    assert client.core_registers()[15] != main


def test_read_watchpoint_stops_before_the_load(session):
    client, syms, _ = session
    counter = syms["counter"]
    client.insert(rsp.READ_WATCH, counter, 4)
    client.resume()
    stop = client.wait(10)
    assert stop.watch == "rwatch" and stop.address == counter
    regs = client.core_registers()
    access = loadstore.access_at(client.read_memory(regs[15], 4), regs[15])
    assert access.load and access.address(regs) == counter  # the PC is at the load, not past it
    rt = access.registers[0]
    client.remove(rsp.READ_WATCH, counter, 4)
    client.step()
    assert client.core_registers()[rt] == 5


def test_write_watchpoint_stops_before_the_store(session):
    client, syms, _ = session
    counter = syms["counter"]
    client.insert(rsp.WRITE_WATCH, counter, 4)
    client.resume()
    stop = client.wait(10)
    assert stop.watch == "watch"
    assert client.read_memory(counter, 4) == (5).to_bytes(4, "little")   # not yet written
    client.remove(rsp.WRITE_WATCH, counter, 4)
    client.step()
    assert client.read_memory(counter, 4) == (7).to_bytes(4, "little")


def test_semihosting_exit_is_a_w_packet(session):
    client, _, q = session
    client.resume()
    stop = client.wait(10)
    assert stop is None or stop.exited
    if stop is not None:
        assert stop.exit_code == 42
    q.process.wait(10)
    assert q.process.returncode == 42 and q.uart_text() == b"hello\n"


def test_interrupt_stops_a_running_target(qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, "int main(void) { for (;;) {} }")
    q = Qemu.start("mps3-an547", str(elf))
    try:
        client = rsp.GdbClient.connect(str(q.gdb))
        client.resume()
        assert client.wait(0.2) is None                      # still running
        stop = client.interrupt()
        assert stop is not None and stop.signal is not None
    finally:
        q.close()

"""Damaged archives through the `weaklink link` command line: one line, exit 2, nothing written.

Each case damages a real archive built by arm-none-eabi-ar (GNU symbol index, long-name
table) or a real thin archive, in the way the fuzz script found worth pinning down."""
from __future__ import annotations

import os
import struct

import pytest

import weaklink.cli as cli
from weaklink import toolchain
from weaklink.scenario import Scenario

pytestmark = pytest.mark.skipif(not toolchain.available(), reason="needs the arm-none-eabi toolchain")

START = ".global _start\n.thumb_func\n_start:\n bl q1\n"
Q1 = '.section .text.q1,"ax",%progbits\n.global q1\n.thumb_func\nq1:\n bx lr\n'
LONG = "a_member_with_a_long_name.o"


@pytest.fixture
def sc(tmp_path):
    sc = Scenario(tmp_path)
    sc.asm("m.o", START)
    sc.asm(LONG, Q1)
    sc.archive("libq.a", [LONG])
    sc.archive("libthin.a", [LONG], thin=True)
    return sc


def _link(sc, capsys, monkeypatch, archive: str) -> str:
    monkeypatch.setattr(cli, "COMMANDS", ("link",))
    monkeypatch.chdir(sc.root)
    before = {p: p.stat().st_mtime_ns for p in sc.root.iterdir()}
    assert cli.main(["link", "-e", "_start", "m.o", archive]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"weaklink: error: {archive}: "), err
    assert {p: p.stat().st_mtime_ns for p in sc.root.iterdir()} == before   # nothing written
    return err


def _members(data: bytes):
    """(header offset, name field, size) of each member of a regular archive."""
    at = 8
    while at + 60 <= len(data):
        name, size = data[at:at + 16].strip(), int(data[at + 48:at + 58])
        yield at, name, size
        at += 60 + size + (size & 1)


def _damage(sc, name: str, change) -> str:
    data = bytearray((sc.root / "libq.a").read_bytes())
    change(data, {n: (at, size) for at, n, size in _members(bytes(data))})
    (sc.root / name).write_bytes(bytes(data))
    return name


def test_symbol_index_claims_more_entries_than_it_holds(sc, capsys, monkeypatch):
    def change(data, m):
        at, _ = m[b"/"]
        data[at + 60:at + 64] = struct.pack(">I", 0x3FFFFFFF)   # 1 G entries in a few bytes
    err = _link(sc, capsys, monkeypatch, _damage(sc, "bad.a", change))
    assert "archive symbol index claims 1073741823 entries" in err


def test_long_name_offset_out_of_range(sc, capsys, monkeypatch):
    def change(data, m):
        at = next(a for n, (a, _) in m.items() if n.startswith(b"/0"))
        data[at:at + 16] = b"/99999".ljust(16)
    err = _link(sc, capsys, monkeypatch, _damage(sc, "bad.a", change))
    assert "long name offset 99999 out of range" in err


def test_member_size_past_the_end(sc, capsys, monkeypatch):
    def change(data, m):
        at = next(a for n, (a, _) in m.items() if n.startswith(b"/0"))
        data[at + 48:at + 58] = b"4294967295"
    err = _link(sc, capsys, monkeypatch, _damage(sc, "bad.a", change))
    assert "member size 4294967295 runs past the end of the archive" in err


def test_thin_member_missing(sc, capsys, monkeypatch):
    os.remove(sc.root / LONG)
    err = _link(sc, capsys, monkeypatch, "libthin.a")
    assert f"thin archive member {LONG} cannot be read" in err


def test_thin_member_that_is_not_a_regular_file(sc, capsys, monkeypatch):
    os.remove(sc.root / LONG)
    os.mkdir(sc.root / LONG)
    err = _link(sc, capsys, monkeypatch, "libthin.a")
    assert f"thin archive member {LONG} is not a regular file" in err

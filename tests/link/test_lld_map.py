"""ld.lld map files: detected by their header, read into the same LinkMap as GNU maps, and
used by `weaklink analyze --map` to attribute a symbol to its input file."""
from __future__ import annotations

import json
import subprocess

import pytest
from snippets import data, func, ref, start

from weaklink.cli import main
from weaklink.errors import InputError
from weaklink.read.ldmap import parse_map, parse_map_text
from weaklink.resolve.lld import oracle

pytestmark = pytest.mark.skipif(not oracle.available(), reason="ld.lld-16 not installed")


@pytest.fixture
def linked(sc):
    sc.asm("main.o", start("a", "x"))
    sc.asm("a.o", func("a") + ref("b"))
    sc.asm("b.o", func("b") + data("x"))
    sc.archive("lib.a", ["a.o", "b.o"])
    for name, extra in (("plain.map", []), ("cref.map", ["--cref"])):
        subprocess.run([oracle.lld_path(), f"-Map={name}", *extra, "-o", "out.elf", "lib.a",
                        "main.o"], cwd=sc.root, check=True)
    return sc


def test_lld_map_is_detected_and_read(linked):
    m = parse_map(linked.root / "plain.map")
    assert m.loads == ("main.o", "lib.a(a.o)", "lib.a(b.o)")
    assert m.cref["x"] == ("lib.a(b.o)",) and m.cref["_start"] == ("main.o",)
    assert m.archive_members == () and m.memory == ()


def test_lld_cref_lists_the_definition_first(linked):
    m = parse_map(linked.root / "cref.map")
    assert m.cref["x"][0] == "lib.a(b.o)" and "main.o" in m.cref["x"]


def test_analyze_attributes_from_an_lld_map(linked, capsys, monkeypatch):
    monkeypatch.chdir(linked.root)
    assert main(["analyze", "--json", "out.elf", "--map", "plain.map", "--symbol", "x"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert json.dumps(out).count("lib.a(b.o)") >= 1


def test_a_corrupt_lld_map_names_the_line():
    text = "     VMA      LMA     Size Align Out     In      Symbol\n   200d4  oops\n"
    with pytest.raises(InputError, match="line 2"):
        parse_map_text(text, "bad.map")

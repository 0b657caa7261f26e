"""The units of .debug_info (weaklink.read.dwarf.units) against pyelftools: unit names on every
unit of the fixture firmware and of images built with DWARF 2, 3, 4 and 5 (names as
DW_FORM_string, strp and line_strp), the 64-bit format, type units, C and assembly units;
abbreviation tables entry by entry."""
from __future__ import annotations

import io

import pytest
from elftools.elf.elffile import ELFFile

from weaklink import toolchain
from weaklink.read.dwarf import Dwarf
from weaklink.read.dwarf.forms import AbbrevTable, sizes
from weaklink.read.dwarf.units import UNKNOWN, DebugInfo
from weaklink.read.elf import ElfFile

SOURCE = """\
int counter = 3;
static int hidden;
int bump(int by) { hidden += by; return counter += by; }
"""
ASM = """\
.syntax unified
.thumb
.global start
.thumb_func
start: bx lr
"""


def _pairs(path):
    """(our name, pyelftools' name) of every unit of an image."""
    elf = ElfFile.from_path(path)
    parts = [elf.section_bytes(i) if (i := elf.find_section(n)) is not None else b""
             for n in (".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str")]
    names = DebugInfo(*parts)
    dwarf = ELFFile(io.BytesIO(elf.data)).get_dwarf_info()
    out = []
    for cu in dwarf.iter_CUs():
        attr = cu.get_top_DIE().attributes.get("DW_AT_name")
        want = attr.value.decode(errors="replace") if attr is not None else None
        out.append((names.unit_name(cu.cu_offset), want))
    return out


@pytest.mark.parametrize("flag", ["-gdwarf-2", "-gdwarf-3", "-gdwarf-4", "-gdwarf-5",
                                  "-gdwarf-4 -gstrict-dwarf", "-gdwarf-5 -gdwarf64",
                                  "-gdwarf-4 -gdwarf64"])
def test_unit_names_match_pyelftools(cross_toolchain, tmp_path, flag):
    (tmp_path / "a.c").write_text(SOURCE)
    (tmp_path / "b.s").write_text(ASM)
    steps = [("gcc", [*toolchain.CPU_FLAGS, *flag.split(), "-O1", "-c", "a.c", "-o", "a.o"]),
             ("gcc", [*toolchain.CPU_FLAGS, *flag.split(), "-c", "b.s", "-o", "b.o"]),
             ("ld", ["-e", "start", "a.o", "b.o", "-o", "t.elf"])]
    for tool, argv in steps:
        done = toolchain.run(tool, argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    pairs = _pairs(tmp_path / "t.elf")
    assert len(pairs) == 2
    for ours, theirs in pairs:
        assert ours is not UNKNOWN and ours == theirs


def test_type_units(cross_toolchain, tmp_path):
    """DWARF 5 type units (g++ -fdebug-types-section) in .debug_info: a longer header, a
    DW_TAG_type_unit without a name; the compile unit after them reads as before."""
    (tmp_path / "t.cpp").write_text("struct Point { int x, y; };\nPoint origin = {1, 2};\n"
                                    "int norm(Point p) { return p.x + p.y; }\n")
    for tool, argv in [("g++", [*toolchain.CPU_FLAGS, "-gdwarf-5", "-fdebug-types-section",
                                "-O1", "-c", "t.cpp", "-o", "t.o"]),
                       ("ld", ["-e", "0", "t.o", "-o", "t.elf"])]:
        done = toolchain.run(tool, argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert _pairs(tmp_path / "t.elf") == [(None, None), ("t.cpp", "t.cpp")]
    dwarf = Dwarf(ElfFile.from_path(tmp_path / "t.elf"))
    assert dwarf.unit_names() == ["?", "t.cpp"] and dwarf.variable_units("origin") == ["t.cpp"]


def test_every_fixture_unit(firmware):
    seen = 0
    for outcome in firmware.values():
        if not outcome.ok:
            continue
        for ours, theirs in _pairs(outcome.cwd / outcome.elf):
            assert ours == theirs
            seen += 1
    assert seen > 20


def test_damaged_units_are_unknown_not_errors():
    names = DebugInfo(b"\x07\x00\x00\x00\x05\x00\x01", b"", b"", b"")
    assert names.unit_name(0) is UNKNOWN
    assert names.unit_name(1000) is UNKNOWN


def _abbrev_pairs(path):
    """(ours, pyelftools') of every abbreviation of every unit of an image, as (tag number,
    has children, ((attribute, form), ...))."""
    from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_FORM, ENUM_DW_TAG

    elf = ElfFile.from_path(path)
    abbrev = elf.section_bytes(elf.find_section(".debug_abbrev"))
    dwarf = ELFFile(io.BytesIO(elf.data)).get_dwarf_info()
    for cu in dwarf.iter_CUs():
        table = dwarf.get_abbrev_table(cu["debug_abbrev_offset"])
        ours = AbbrevTable(abbrev, cu["debug_abbrev_offset"],
                           sizes(cu["address_size"], cu["version"], 4))
        for code in sorted(table._abbrev_map, reverse=True):        # the last ones first
            theirs = table.get_abbrev(code)
            want = (ENUM_DW_TAG[theirs["tag"]], theirs.has_children(),
                    tuple((ENUM_DW_AT.get(s.name, s.name), ENUM_DW_FORM[s.form])
                          for s in theirs["attr_spec"]))
            got = ours.get(code)
            yield (got.tag, got.children, tuple((a, f) for a, f, _ in got.spec)), want


def test_abbreviations_match_pyelftools(firmware):
    """The lazily delimited abbreviation entries (one regular-expression match each) decode
    as pyelftools decodes them, DW_FORM_implicit_const values included (GCC 12 writes
    DWARF 5 with them)."""
    o = firmware["weak-example-u85"]
    pairs = list(_abbrev_pairs(o.cwd / o.elf))
    assert len(pairs) > 100
    for ours, theirs in pairs:
        assert ours == theirs

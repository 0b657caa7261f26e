"""Linker scripts against the real ld: the default script (no -T), INPUT/GROUP/INCLUDE with
the -L search, PROVIDE/assignment values, and one-line errors for malformed scripts."""
from __future__ import annotations

import pytest
from linkgen import compare
from snippets import data, func, start

from weaklink.errors import InputError
from weaklink.read import ldscript
from weaklink.resolve.script import glob_match, parse_script, rule_matches

DEFAULT_NAMES = ("__bss_start__", "__bss_end__", "end", "_end", "etext", "edata",
                 "__exidx_start", "__init_array_start", "_stack", "__data_start", "__end__")


@pytest.mark.parametrize("defined", [(), ("end",), ("etext",), ("__bss_start__",)])
def test_default_script_defines_what_newlib_needs(sc, defined):
    sc.asm("m.o", start(*DEFAULT_NAMES) + "".join(data(n) for n in defined))
    args = ["m.o", *[a for n in DEFAULT_NAMES for a in ("-y", n)]]
    assert compare(sc, args) == []
    res = sc.link(args)
    assert res.ok
    assert res.symbols["end"].binding == ("global" if "end" in defined else "script")
    assert res.symbols["__bss_start__"].binding == "script"     # a plain assignment wins
    assert res.symbols["__bss_start__"].value is None            # from an address


def test_no_T_without_default_names_is_an_undefined_reference(sc):
    sc.asm("m.o", start("not_in_default_script"))
    assert compare(sc, ["m.o"]) == []


def test_input_group_include_and_search(sc):
    sc.asm("m.o", start("a1", "b1"))
    sc.asm("a.o", func("a1")); sc.asm("b.o", func("b1") + ".word a2\n"); sc.asm("a2.o", func("a2"))
    (sc.root / "lib").mkdir()
    sc.archive("lib/liba.a", ["a.o", "a2.o"]); sc.archive("lib/libb.a", ["b.o"])
    (sc.root / "lib" / "inc.ld").write_text("PROVIDE(extra = 0x10 + 0x20);\n")
    (sc.root / "top.ld").write_text(
        "ENTRY(_start)\nINCLUDE inc.ld\nINPUT(m.o)\nGROUP(libb.a -la)\n"
        "SECTIONS { .text : { *(.text*) } }\n")
    sc.asm("x.o", ".text\n.word extra\n")
    args = ["-L", "lib", "-T", "top.ld", "x.o"]
    assert compare(sc, args) == []
    res = sc.link(args)
    assert [x.member for x in res.extracted] == ["lib/libb.a(b.o)", "lib/liba.a(a.o)",
                                                 "lib/liba.a(a2.o)"]
    assert res.symbols["extra"].binding == "script" and res.symbols["extra"].value == 0x30


@pytest.mark.parametrize("text,where", [
    ("SECTIONS { .text : { *(.text) }", "unexpected end of script"),
    ("ENTRY(_start\n", "line 2"),
    ("PROVIDE(x = );", "expected an expression"),
    ("SECTIONS {\n  .text : { *(.text) }\n  foo = 1 +;\n}", "line 3"),
    ("/* never closed", "unterminated comment"),
])
def test_malformed_script_is_one_line_error(text, where):
    with pytest.raises(InputError) as err:
        parse_script(text, "bad.ld")
    msg = str(err.value)
    assert msg.startswith("bad.ld: line ") and where in msg and "\n" not in msg


def test_malformed_script_cli_exit_2(sc, capsys):
    from weaklink.cli import main
    sc.asm("m.o", start())
    (sc.root / "bad.ld").write_text("SECTIONS {\n .text : { *(.text) \n")
    code = main(["link", "-T", str(sc.root / "bad.ld"), str(sc.root / "m.o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bad.ld: line" in err


def test_expressions_fold_constants():
    s = ldscript.parse("A = 0x100; B = A * 2 + 1K; C = MAX(A, 3) - (1 << 4); D = . + 4;"
                       "E = A > 1 ? 7 : 9; F = ORIGIN(RAM); G = 010; H = 1M;", "e.ld")
    values = {a.name: a.value for a in s.assignments}
    assert values == {"A": 0x100, "B": 0x200 + 1024, "C": 0x100 - 16, "D": None, "E": 7,
                      "F": None, "G": 8, "H": 1 << 20}


def test_patterns():
    s = ldscript.parse("SECTIONS { .init_array : { KEEP (*(.init_array EXCLUDE_FILE "
                       "(*crtbegin.o *crtend?.o) .ctors)) KEEP(*crtbegin.o(.ctors)) "
                       "*(SORT_BY_NAME(.text.*)) lib*.a:x*.o(.rodata) } /DISCARD/ : "
                       "{ *(.comment) } }", "p.ld")
    keep, crtb, sort, member, disc = s.rules
    assert keep.keep and rule_matches(keep, "x.o", None, ".ctors")
    assert not rule_matches(keep, "/usr/lib/crtbegin.o", None, ".ctors")
    assert rule_matches(keep, "/usr/lib/crtbegin.o", None, ".init_array")
    assert rule_matches(crtb, "/usr/lib/crtbegin.o", None, ".ctors")
    assert rule_matches(sort, "a.o", None, ".text.f") and not rule_matches(sort, "a.o", None, ".text")
    assert rule_matches(member, "libq.a", "xy.o", ".rodata")
    assert not rule_matches(member, "libq.a", "yx.o", ".rodata")
    assert disc.output == "/DISCARD/"
    assert glob_match("*.o", "a/b.o") and glob_match(".text.[ab]*", ".text.b1")

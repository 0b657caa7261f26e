"""The scenario catalogue of docs/linker-semantics.md §7, each case checked against the real ld
(exit status, errors, archive table, commons, --cref, defining files) and pinned down."""
from __future__ import annotations

import subprocess

import pytest
from snippets import comm, data, func, ref, start
from linkgen import compare

from weaklink import toolchain

E = ["-e", "_start"]


def agree(sc, args):
    diffs = compare(sc, [*E, *args])
    assert diffs == [], "\n".join(diffs)
    return sc.link([*E, *args])


def members(res):
    return [x.member for x in res.extracted]


@pytest.mark.parametrize("order", [("s1.o", "s2.o"), ("s2.o", "s1.o")])
def test_strong_strong_is_an_error_both_orders(sc, order):
    sc.asm("m.o", start("x")); sc.asm("s1.o", data("x")); sc.asm("s2.o", data("x"))
    res = agree(sc, ["m.o", *order])
    assert not res.ok
    (err,) = res.errors
    assert err.file == order[1]
    assert err.message == f"multiple definition of `x'; {order[0]}: first defined here"


def test_strong_strong_with_muldefs_keeps_first(sc):
    sc.asm("m.o", start("x")); sc.asm("s1.o", data("x")); sc.asm("s2.o", data("x"))
    res = agree(sc, ["-z", "muldefs", "m.o", "s2.o", "s1.o"])
    assert res.ok and res.symbols["x"].file == "s2.o"


@pytest.mark.parametrize("order,winner", [(("w.o", "s.o"), "s.o"), (("s.o", "w.o"), "s.o")])
def test_strong_beats_weak_both_orders(sc, order, winner):
    sc.asm("m.o", start("x")); sc.asm("w.o", data("x", weak=True)); sc.asm("s.o", data("x"))
    res = agree(sc, ["m.o", *order])
    assert res.ok and res.symbols["x"].file == winner and res.symbols["x"].binding == "global"


@pytest.mark.parametrize("order", [("w1.o", "w2.o"), ("w2.o", "w1.o")])
def test_first_weak_wins(sc, order):
    sc.asm("m.o", start("x")); sc.asm("w1.o", data("x", True)); sc.asm("w2.o", data("x", True))
    res = agree(sc, ["m.o", *order])
    assert res.symbols["x"].file == order[0] and res.symbols["x"].binding == "weak"


@pytest.mark.parametrize("sizes", [(4, 16), (16, 4), (8, 8)])
def test_commons_merge_to_largest(sc, sizes):
    sc.asm("m.o", start("x"))
    sc.asm("c1.o", comm("x", sizes[0])); sc.asm("c2.o", comm("x", sizes[1]))
    res = agree(sc, ["m.o", "c1.o", "c2.o"])
    owner = "c2.o" if sizes[1] > sizes[0] else "c1.o"
    assert res.symbols["x"] .binding == "common"
    assert (res.symbols["x"].file, res.symbols["x"].size) == (owner, max(sizes))


@pytest.mark.parametrize("order", [("c.o", "s.o"), ("s.o", "c.o")])
def test_strong_beats_common(sc, order):
    sc.asm("m.o", start("x")); sc.asm("c.o", comm("x", 16)); sc.asm("s.o", data("x"))
    res = agree(sc, ["m.o", *order])
    assert res.symbols["x"].file == "s.o" and res.symbols["x"].size == 4


@pytest.mark.parametrize("order", [("c.o", "w.o"), ("w.o", "c.o")])
def test_common_beats_weak(sc, order):
    sc.asm("m.o", start("x")); sc.asm("c.o", comm("x", 8)); sc.asm("w.o", data("x", True))
    res = agree(sc, ["m.o", *order])
    assert res.symbols["x"].binding == "common" and res.symbols["x"].file == "c.o"


def test_weak_undefined_does_not_extract(sc):
    sc.asm("m.o", start(weak=("hook",))); sc.asm("h.o", func("hook")); sc.archive("libh.a", ["h.o"])
    res = agree(sc, ["m.o", "libh.a"])
    assert res.ok and res.extracted == () and res.symbols["hook"].binding == "undefined-weak"


def test_weak_undefined_with_u_extracts(sc):
    sc.asm("m.o", start(weak=("hook",))); sc.asm("h.o", func("hook")); sc.archive("libh.a", ["h.o"])
    res = agree(sc, ["m.o", "libh.a", "-u", "hook"])
    assert [(x.member, x.file) for x in res.extracted] == [("libh.a(h.o)", None)]


def test_weak_definition_blocks_archive_strong(sc):
    sc.asm("m.o", start("x")); sc.asm("w.o", data("x", True))
    sc.asm("s.o", data("x")); sc.archive("libs.a", ["s.o"])
    res = agree(sc, ["m.o", "w.o", "libs.a"])
    assert res.extracted == () and res.symbols["x"].file == "w.o"


def test_strong_wins_when_member_pulled_for_another_symbol(sc):
    sc.asm("m.o", start("x", "other")); sc.asm("w.o", data("x", True))
    sc.asm("s.o", data("x") + func("other")); sc.archive("libs.a", ["s.o"])
    res = agree(sc, ["m.o", "w.o", "libs.a"])
    assert res.ok and res.symbols["x"].file == "libs.a(s.o)"


def test_archive_before_object_is_undefined(sc):
    sc.asm("m.o", start("lib_fn")); sc.asm("f.o", func("lib_fn")); sc.archive("liblf.a", ["f.o"])
    res = agree(sc, ["liblf.a", "m.o"])
    assert not res.ok and res.errors[0].message == "undefined reference to `lib_fn'"


@pytest.fixture
def circular(sc):
    sc.asm("m.o", start("a1"))
    sc.asm("a1.o", func("a1") + ref("b1")); sc.asm("a2.o", func("a2"))
    sc.asm("b1.o", func("b1") + ref("a2"))
    sc.archive("liba.a", ["a1.o", "a2.o"]); sc.archive("libb.a", ["b1.o"])
    return sc


@pytest.mark.parametrize("args,ok", [
    (["m.o", "liba.a", "libb.a"], False),
    (["m.o", "--start-group", "liba.a", "libb.a", "--end-group"], True),
    (["m.o", "-(", "liba.a", "libb.a", "-)"], True),
    (["m.o", "liba.a", "libb.a", "liba.a"], True),
])
def test_circular_archives(circular, args, ok):
    assert agree(circular, args).ok is ok


def test_intra_archive_backward_dependency(sc):
    sc.asm("m.o", start("q1")); sc.asm("q2.o", func("q2")); sc.asm("q1.o", func("q1") + ref("q2"))
    sc.archive("libq.a", ["q2.o", "q1.o"])
    res = agree(sc, ["m.o", "libq.a"])
    assert res.ok and members(res) == ["libq.a(q1.o)", "libq.a(q2.o)"]


@pytest.mark.parametrize("refs,whole,ok", [(("dup",), False, True), (("dup", "o1", "o2"), False, False),
                                           (("dup",), True, False)])
def test_two_members_same_strong(sc, refs, whole, ok):
    sc.asm("m.o", start(*refs))
    sc.asm("d1.o", func("dup") + func("o1")); sc.asm("d2.o", func("dup") + func("o2"))
    sc.archive("libdup.a", ["d1.o", "d2.o"])
    lib = ["--whole-archive", "libdup.a", "--no-whole-archive"] if whole else ["libdup.a"]
    res = agree(sc, ["m.o", *lib])
    assert res.ok is ok


@pytest.mark.parametrize("args,winner", [
    (["libweak.a", "libstrong.a"], "libweak.a(w.o)"),
    (["libstrong.a", "libweak.a"], "libstrong.a(s.o)"),
    (["libcombo.a"], "libcombo.a(w.o)"),
])
def test_weak_vs_strong_archive_order(sc, args, winner):
    sc.asm("m.o", start("wh")); sc.asm("w.o", data("wh", True)); sc.asm("s.o", data("wh"))
    sc.archive("libweak.a", ["w.o"]); sc.archive("libstrong.a", ["s.o"])
    sc.archive("libcombo.a", ["w.o", "s.o"])
    assert agree(sc, ["m.o", *args]).symbols["wh"].file == winner


@pytest.mark.parametrize("member,pulled", [
    (data("shared"), True), (func("shared"), False), (data("shared", True), False),
    (comm("shared", 8), False)])
def test_common_pulls_only_global_data(sc, member, pulled):
    sc.asm("m.o", start() + comm("shared", 4)); sc.asm("sd.o", member)
    sc.archive("lib_sd.a", ["sd.o"])
    res = agree(sc, ["m.o", "lib_sd.a"])
    assert members(res) == (["lib_sd.a(sd.o)"] if pulled else [])
    if pulled:
        assert res.extracted[0].file == "m.o" and res.symbols["shared"].binding == "global"


@pytest.mark.parametrize("where,pulled", [("before", False), ("after", True)])
def test_defsym_position_relative_to_archive(sc, where, pulled):
    sc.asm("m.o", start("hook")); sc.asm("h.o", data("hook")); sc.archive("libh.a", ["h.o"])
    ds = ["--defsym", "hook=0x1234"]
    args = ["m.o", *ds, "libh.a"] if where == "before" else ["m.o", "libh.a", *ds]
    res = sc.link([*E, *args])
    ld = sc.ld([*E, *args])
    assert res.ok == ld.ok and members(res) == [x.member for x in ld.map.archive_members]
    assert members(res) == (["libh.a(h.o)"] if pulled else [])
    assert res.symbols["hook"].binding == "absolute" and res.symbols["hook"].file is None


def test_defsym_overrides_object_definition(sc):
    sc.asm("m.o", start("x")); sc.asm("s.o", data("x"))
    args = [*E, "--defsym", "x=0x10", "m.o", "s.o"]
    res, ld = sc.link(args), sc.ld(args)
    assert res.ok and ld.ok and res.symbols["x"].binding == "absolute"


@pytest.mark.parametrize("values,ok", [((16, 16), True), ((16, 32), False)])
def test_absolute_duplicates(sc, values, ok):
    sc.asm("m.o", start("ABSV"))
    for k, v in enumerate(values):
        sc.asm(f"abs{k}.o", f".global ABSV\n.set ABSV, {v}\n")
    res = agree(sc, ["m.o", "abs0.o", "abs1.o"])
    assert res.ok is ok
    if not ok:
        assert res.errors[0].message == "multiple definition of `ABSV'"


@pytest.mark.parametrize("how", [["-e", "q1"], ["-T", "ent.ld"]])
def test_entry_extracts(sc, how):
    sc.asm("q1.o", func("q1") + ref("q2")); sc.asm("q2.o", func("q2"))
    sc.archive("libq.a", ["q1.o", "q2.o"])
    (sc.root / "ent.ld").write_text("ENTRY(q1)\n")
    args = [*how, "libq.a"]
    res, ld = sc.link(args), sc.ld(args)
    got = [(x.member, x.file, x.symbol) for x in res.extracted]
    assert got == [(x.member, x.file, x.symbol) for x in ld.map.archive_members]
    assert got == [("libq.a(q1.o)", None, "q1"), ("libq.a(q2.o)", "libq.a(q1.o)", "q2")]


def test_required_symbol_not_defined(sc):
    sc.asm("m.o", start())
    res = agree(sc, ["m.o", "--require-defined=nothere"])
    assert [e.message for e in res.errors] == ["required symbol `nothere' not defined"]


def test_weak_reference_sites_fail_when_symbol_strongly_undefined(sc):
    sc.asm("m.o", start("y")); sc.asm("wr.o", ref("y", weak=True))
    res = agree(sc, ["m.o", "wr.o"])
    assert {(e.symbol, e.file) for e in res.errors} == {("y", "m.o"), ("y", "wr.o")}


def test_undefined_symbol_without_relocation_is_silent(sc):
    sc.asm("m.o", start() + ".global zz\n")
    assert agree(sc, ["m.o"]).ok


@pytest.mark.parametrize("ref_kind,provided", [("strong", True), ("weak", True), ("none", False),
                                               ("def", False), ("weakdef", False)])
def test_provide(sc, ref_kind, provided):
    body = {"strong": ref("prov"), "weak": ref("prov", True), "none": "",
            "def": data("prov"), "weakdef": data("prov", True)}[ref_kind]
    sc.asm("m.o", start() + body)
    (sc.root / "p.ld").write_text("ENTRY(_start)\nPROVIDE(prov = 0x2222);\n"
                                  "SECTIONS { .text : { *(.text*) } .data : { *(.data*) } }\n")
    res = agree(sc, ["-T", "p.ld", "m.o"])
    if ref_kind != "none":
        info = res.symbols["prov"]
        assert (info.binding == "script") is provided
        assert info.value == (0x2222 if provided else None)


def test_comdat_first_group_wins(sc):
    src = "inline int twice(int x) { return 2 * x; }\nint use_%s(int v) { return twice(v); }\n"
    flags = ("-O0", "-fno-exceptions", "-fno-unwind-tables")
    sc.c("t1.o", src % "a", *flags, cxx=True); sc.c("t2.o", src % "b", *flags, cxx=True)
    sc.c("m.o", "int use_a(int); int use_b(int);\n"
         "extern \"C\" int _start(void) { return use_a(1) + use_b(2); }", *flags, cxx=True)
    res = agree(sc, ["m.o", "t1.o", "t2.o"])
    assert res.ok and res.symbols["_Z5twicei"].file == "t1.o"
    ld = sc.ld([*E, "m.o", "t1.o", "t2.o"])
    assert any(d.file == "t2.o" and d.section == ".group" for d in ld.map.discarded)


def test_thin_archive(sc):
    sc.asm("m.o", start("q1")); sc.asm("q1.o", func("q1"))
    sc.archive("libt.a", ["q1.o"], thin=True)
    assert members(agree(sc, ["m.o", "libt.a"])) == ["q1.o"]


def test_library_search_path(sc):
    (sc.root / "lib").mkdir()
    sc.asm("m.o", start("q1")); sc.asm("q1.o", func("q1"))
    sc.archive("lib/libq.a", ["q1.o"])
    assert members(agree(sc, ["m.o", "-L", "lib", "-lq"])) == ["lib/libq.a(q1.o)"]
    assert members(agree(sc, ["m.o", "-Llib/", "-lq"])) == ["lib//libq.a(q1.o)"]


@pytest.mark.parametrize("seq,ok", [
    ("s.o --defsym s=0x40 w.o", False), ("s.o --defsym s=0x40 s2.o", False),
    ("w.o --defsym s=0x40 s.o", False), ("w.o --defsym s=0x40 w2.o", False),
    ("c.o --defsym s=0x40 s.o", True), ("c.o --defsym s=0x40 w.o", True),
    ("--defsym s=0x40 s.o s2.o", False), ("--defsym s=0x40 w.o s.o", True),
    ("--defsym s=0x40 c.o s.o", True), ("s.o --defsym s=0x40 c.o", True)])
def test_defsym_against_object_definitions(sc, seq, ok):
    """Measured on 2.40, not in the brief: --defsym over an object's definition is 'hard'."""
    sc.asm("m.o", start("s"))
    for name, body in (("s.o", data("s")), ("s2.o", data("s")), ("w.o", data("s", True)),
                       ("w2.o", data("s", True)), ("c.o", comm("s", 8))):
        sc.asm(name, body)
    args = ["m.o", *seq.split(), "-y", "s"]
    if seq.startswith("c.o"):
        # ld 2.40 aborts here ("BFD internal error ... in _bfd_doprnt") while printing the
        # "size of symbol changed" warning for the defsym'd name: a crash, not a resolution
        # decision, so there is nothing to agree with. The model's answer is ld's intent.
        res = sc.link([*E, *args])
        ld = subprocess.run([toolchain.tool("ld"), *E, "-o", "o.elf", *args],
                            cwd=sc.root, capture_output=True, text=True)
        assert "internal error" in ld.stderr
    else:
        res = agree(sc, args)
    assert res.ok is ok and res.symbols["s"].binding == "absolute"


def test_defsym_inside_group_is_evaluated_again_on_rescan(sc):
    """Measured, not in the brief: a group rescan re-evaluates its --defsym, which by then
    overrides an object's (weak) definition and so clashes with a later strong one."""
    sc.asm("m.o", start("a")); sc.asm("a.o", func("a") + ref("b")); sc.asm("a2.o", func("a2") + ref("c"))
    sc.asm("b.o", func("b") + ref("a2") + data("x", True)); sc.asm("c.o", func("c") + data("x"))
    sc.archive("libA.a", ["a.o", "a2.o"]); sc.archive("libB.a", ["b.o", "c.o"])
    res = agree(sc, ["m.o", "-(", "libA.a", "--defsym", "x=0x40", "libB.a", "-)", "-y", "x"])
    assert [(e.kind, e.file) for e in res.errors] == [("multiple-definition", "libB.a(c.o)")]


@pytest.mark.parametrize("script,tail,extracted", [
    ("PROVIDE(s = 0x80);", ["libs.a"], []),            # PROVIDE fires where the script sits
    ("PROVIDE(s = 0x80);", ["c.o"], []),               # ... then overrides a later common
    ("s = 0x80;", ["s.o"], []),                        # a plain assignment yields silently
    ("s = 0x80;", ["libs.a"], []),
])
def test_script_assignments_at_their_place(sc, script, tail, extracted):
    sc.asm("m.o", start("s")); sc.asm("s.o", data("s")); sc.asm("c.o", comm("s", 8))
    sc.archive("libs.a", ["s.o"])
    (sc.root / "x.ld").write_text(f"ENTRY(_start)\n{script}\n")
    res = agree(sc, ["m.o", "-T", "x.ld", *tail, "-y", "s"])
    assert res.ok and members(res) == extracted and res.symbols["s"].binding == "script"
    assert res.symbols["s"].value == 0x80


def test_provide_before_the_reference_does_not_fire(sc):
    sc.asm("m.o", start("s")); sc.asm("s.o", data("s")); sc.archive("libs.a", ["s.o"])
    (sc.root / "x.ld").write_text("ENTRY(_start)\nPROVIDE(s = 0x80);\n")
    res = agree(sc, ["-T", "x.ld", "m.o", "libs.a"])
    assert members(res) == ["libs.a(s.o)"] and res.symbols["s"].file == "libs.a(s.o)"


def test_gc_sections_drops_undefined_reference_in_collected_section(sc):
    """Catalogue case "undefined reference only in a GC'd section": ld links (the unused
    function is collected before undefined symbols are reported), and so does the model."""
    sc.asm("m.o", start() + '.section .text.unused,"ax",%progbits\n.word missing\n')
    args = [*E, "--gc-sections", "m.o"]
    res = agree(sc, args)
    assert res.ok and [(c.file, c.section) for c in res.collected] == [("m.o", ".text.unused")]
    assert not agree(sc, [*E, "m.o"]).ok


def test_scenario_docstring_example(sc):
    """The example in weaklink/scenario.py, run as written."""
    sc.c("main.o", "extern int x; int _start(void) { return x; }")
    sc.c("weak.o", "__attribute__((weak)) int x = 1;")
    sc.c("strong.o", "int x = 5;")
    sc.archive("libs.a", ["strong.o"])
    args = ["-e", "_start", "main.o", "weak.o", "libs.a"]
    assert sc.link(args).symbols["x"].file == "weak.o"
    assert sc.ld(args).map.archive_members == ()
    assert compare(sc, args) == []

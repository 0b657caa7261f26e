"""One test per row of weaklink/resolve/lld/rules.py, each checked against ld.lld-16 too
(Scenario.lld), plus the lld command line: --flavor lld, --why-extract=FILE, --compare."""
from __future__ import annotations

import json
import sys

import pytest
from snippets import comm, data, func, ref, start

from weaklink.cli import main
from weaklink.resolve.lld import oracle

pytestmark = pytest.mark.skipif(not oracle.available(), reason="ld.lld-16 not installed")


def both(sc, args):
    """The model's result, after checking it against the real ld.lld on the same inputs."""
    from weaklink.resolve.lld import resolve
    state, model = resolve(args, cwd=str(sc.root))
    assert oracle.differences(model, sc.lld(args), state, messages=True) == []
    return model


def extracted(res):
    return [(x.file, x.member, x.symbol) for x in res.extracted]


def test_archive_before_reference_still_extracts_innermost_first(sc):      # rows (1) (3)
    sc.asm("main.o", start("a"))
    sc.asm("a.o", func("a") + ref("b"))
    sc.asm("b.o", func("b"))
    sc.archive("lib.a", ["a.o", "b.o"])
    res = both(sc, ["lib.a", "main.o"])
    assert res.ok and extracted(res) == [("lib.a(a.o)", "lib.a(b.o)", "b"),
                                         ("main.o", "lib.a(a.o)", "a")]
    assert not sc.link(["lib.a", "main.o"]).ok          # GNU ld: archive order


def test_an_extraction_chain_deeper_than_the_interpreters_stack(sc):       # row (3)
    """Each member references the next one's symbol: lld extracts the chain member by member,
    innermost first. The model follows it on a stack of its own, with the interpreter's
    recursion limit untouched."""
    depth = 400
    sc.asm("main.o", start("f0"))
    members = [sc.asm(f"m{i}.o", func(f"f{i}") + (ref(f"f{i + 1}") if i + 1 < depth else ""))
               for i in range(depth)]
    sc.archive("lib.a", members)
    limit = sys.getrecursionlimit()
    res = both(sc, ["lib.a", "main.o"])         # every member lazy before the first reference
    assert sys.getrecursionlimit() == limit
    assert res.ok and len(res.extracted) == depth
    assert extracted(res)[0] == (f"lib.a(m{depth - 2}.o)", f"lib.a(m{depth - 1}.o)", f"f{depth - 1}")
    assert extracted(res)[-1] == ("main.o", "lib.a(m0.o)", "f0")


def test_weak_reference_keeps_the_lazy_symbol_until_a_strong_one(sc):      # rows (2) (4)
    sc.asm("main.o", start(weak=("a",)))
    sc.asm("o.o", ref("a"))
    sc.asm("a.o", func("a"))
    sc.archive("lib.a", ["a.o"])
    assert both(sc, ["main.o", "lib.a"]).symbols["a"].binding == "undefined-weak"
    res = both(sc, ["main.o", "lib.a", "o.o"])
    assert extracted(res) == [("o.o", "lib.a(a.o)", "a")]
    res = both(sc, ["main.o", "o.o", "lib.a"])      # the Undefined's file: the weak referrer
    assert extracted(res) == [("main.o", "lib.a(a.o)", "a")]


def test_first_lazy_definition_wins_even_weak(sc):                         # row (5)
    sc.asm("main.o", start("x"))
    sc.asm("w.o", data("x", weak=True))
    sc.asm("s.o", data("x", size=8))
    sc.archive("libw.a", ["w.o"])
    sc.archive("libs.a", ["s.o"])
    assert both(sc, ["main.o", "libw.a", "libs.a"]).symbols["x"].binding == "weak"
    assert both(sc, ["libs.a", "libw.a", "main.o"]).symbols["x"].binding == "global"


def test_weak_default_blocks_the_archive_override(sc):                    # row (6)
    sc.asm("main.o", start("x"))
    sc.asm("w.o", data("x", weak=True))
    sc.asm("s.o", data("x", size=8))
    sc.archive("libs.a", ["s.o"])
    res = both(sc, ["libs.a", "main.o", "w.o"])
    assert res.extracted == () or extracted(res) == [("main.o", "libs.a(s.o)", "x")]
    assert both(sc, ["main.o", "w.o", "libs.a"]).extracted == ()


def test_common_does_not_extract_and_beats_weak(sc):                      # rows (7) (8) (9)
    sc.asm("main.o", start("x") + comm("x", 8))
    sc.asm("d.o", data("x"))
    sc.asm("w.o", data("x", weak=True))
    sc.asm("c.o", comm("x", 16))
    sc.archive("lib.a", ["d.o"])
    res = both(sc, ["main.o", "lib.a"])
    assert res.extracted == () and res.symbols["x"].binding == "common"
    assert not sc.link(["main.o", "lib.a"]).symbols["x"].binding == "common"   # GNU extracts
    res = both(sc, ["main.o", "w.o", "c.o"])
    assert res.symbols["x"][:4] == ("common", "c.o", 16, "COMMON")


def test_duplicates_stop_the_link_and_are_worded_like_lld(sc):            # rows (10) (11)
    sc.asm("main.o", start("x", "zz"))
    sc.asm("a.o", data("x"))
    sc.asm("b.o", data("x"))
    sc.asm("w.o", data("x", weak=True))
    res = both(sc, ["main.o", "a.o", "w.o", "b.o"])
    assert [e.kind for e in res.errors] == ["multiple-definition"]   # no undefined zz after it
    assert res.errors[0].message == ("duplicate symbol: x\n>>> defined at a.o:(x)\n"
                                     ">>> defined at b.o:(.data+0x0)")


def test_undefined_symbol_message_and_spelling(sc):
    sc.asm("main.o", start("s1", "t1", "s1"))
    sc.asm("a.o", data("s0"))
    res = both(sc, ["main.o", "a.o"])
    assert res.errors[0].message == ("undefined symbol: s1\n>>> referenced by main.o:(.text+0x4)"
                                     "\n>>> referenced by main.o:(.text+0xC)\n"
                                     ">>> did you mean: s0\n>>> defined in: a.o")


def test_defsym_applies_after_extraction(sc):
    sc.asm("main.o", start("x"))
    sc.asm("a.o", data("x"))
    sc.archive("lib.a", ["a.o"])
    res = both(sc, ["main.o", "--defsym", "x=0x40", "lib.a"])
    assert extracted(res) == [("main.o", "lib.a(a.o)", "x")]
    assert res.symbols["x"].binding == "absolute"


def test_start_lib_and_warn_backrefs(sc):
    sc.asm("main.o", start("a"))
    sc.asm("a.o", func("a") + ref("b"))
    sc.asm("b.o", func("b"))
    res = both(sc, ["--warn-backrefs", "--start-lib", "b.o", "a.o", "--end-lib", "main.o"])
    assert extracted(res) == [("a.o", "b.o", "b"), ("main.o", "a.o", "a")]
    assert [w.message for w in res.warnings] == [
        "backward reference detected: a in main.o refers to a.o"]


def test_cli_flavor_lld_json_and_why_extract_file(sc, capsys, monkeypatch):
    sc.asm("main.o", start("a"))
    sc.asm("a.o", func("a"))
    sc.archive("lib.a", ["a.o"])
    monkeypatch.chdir(sc.root)
    code = main(["link", "--flavor", "lld", "--json", "--", "--why-extract=w.txt",
                 "lib.a", "main.o"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["flavor"] == "lld"
    assert out["extracted"] == [{"member": "lib.a(a.o)", "file": "main.o", "symbol": "a"}]
    assert (sc.root / "w.txt").read_text() == "reference\textracted\tsymbol\nmain.o\tlib.a(a.o)\ta\n"


def test_cli_compare_lists_the_archive_order_difference(sc, capsys, monkeypatch):
    sc.asm("main.o", start("a"))
    sc.asm("a.o", func("a"))
    sc.archive("lib0.a", ["a.o"])
    monkeypatch.chdir(sc.root)
    code = main(["link", "--compare", "gnu,lld", "--json", "lib0.a", "main.o"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    kinds = {(d["kind"], d["symbol"]) for d in out["differences"]}
    assert ("outcome", "") in kinds and ("extracted", "a") in kinds
    reason = next(d["reason"] for d in out["differences"] if d["kind"] == "extracted")
    assert reason.startswith("GNU ld: lib0.a precedes main.o and is never searched again; "
                             "lld: lazy symbols are remembered")
    assert main(["link", "--compare", "gnu,lld", "main.o", "lib0.a"]) == 0


def test_source_lines_from_stt_file_and_dwarf(sc):
    src = "extern int missing_var; extern void missing_fn(void); int glob = 3;\n" \
          "void _start(void) { missing_fn(); glob = missing_var; }"
    sc.c("m.o", src)
    sc.c("mg.o", src, "-g")
    sc.c("d.o", "int glob = 4;", "-g")
    res = both(sc, ["m.o"])                       # no -g: gcc's STT_FILE name
    assert res.errors[0].message == ("undefined symbol: missing_fn\n>>> referenced by m.o.c"
                                     "\n>>>               m.o:(_start)")
    res = both(sc, ["mg.o"])                      # -g: the DWARF line of the call
    assert res.errors[0].message.splitlines()[1] == ">>> referenced by mg.o.c:2"
    res = both(sc, ["mg.o", "d.o"])               # a variable: its declaration
    assert res.errors[0].message.splitlines()[1:4] == [
        ">>> defined at mg.o.c:1", ">>>            mg.o:(glob)", ">>> defined at d.o.c:1"]


def test_wrap_resolves_names_first_then_swaps(sc):
    sc.asm("main.o", start("foo"))
    sc.asm("f.o", func("foo"))
    sc.asm("w.o", func("__wrap_foo") + ref("__real_foo"))
    sc.archive("libf.a", ["f.o"])
    sc.archive("libw.a", ["w.o"])
    # lld: main.o's own reference to foo extracts f.o; __wrap_foo comes as <internal>
    res = both(sc, ["libw.a", "main.o", "libf.a", "--wrap=foo"])
    assert extracted(res) == [("main.o", "libf.a(f.o)", "foo"),
                              (None, "libw.a(w.o)", "__wrap_foo")]   # <internal>
    res = both(sc, ["main.o", "f.o", "--wrap=foo"])            # no wrapper anywhere
    assert [e.message.splitlines()[0] for e in res.errors] == ["undefined symbol: __wrap_foo"]


def test_wrap_of_a_weak_default_leaves_the_wrapper_out(sc):
    sc.asm("main.o", start("foo"))
    sc.asm("f.o", func("foo", weak=True))
    sc.asm("w.o", func("__wrap_foo"))
    sc.archive("libw.a", ["w.o"])
    res = both(sc, ["main.o", "f.o", "libw.a", "--wrap=foo"])   # __wrap_foo added weak
    assert res.extracted == () and res.symbols["__wrap_foo"].binding == "undefined-weak"


def test_cxx_comdat_and_gc_sections_against_lld(sc):
    """Compiled C++: inline functions, templates and inline variables in COMDAT groups in two
    translation units, a missing function only used from a collected section."""
    common = ("inline int twice(int x) { return 2 * x; }\n"
              "template <class T> T sq(T x) { return x * x; }\n"
              "inline int counter = 1;\n")
    sc.c("a.o", common + 'extern "C" void _start() { counter = twice(sq(3)); }\n'
         "void unused() { extern void missing(); missing(); }",
         "-std=c++17", "-ffunction-sections", "-O0", cxx=True)
    sc.c("b.o", common + "int use_b() { return twice(sq(counter)); }", "-std=c++17", "-O0",
         "-ffunction-sections", cxx=True)
    res = both(sc, ["a.o", "b.o"])
    assert [e.symbol for e in res.errors] == ["_Z7missingv"]
    res = both(sc, ["--gc-sections", "a.o", "b.o"])
    assert res.ok and res.symbols["_Z5twicei"].file == "a.o"

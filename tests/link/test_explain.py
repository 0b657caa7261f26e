"""--why-not reasons, --why-extract layout and -y lines, checked on real scenarios."""
from __future__ import annotations

import pytest
from snippets import comm, data, func, ref, start

E = ["-e", "_start"]


def reasons(res, symbol):
    return {(w.file, w.reason) for w in res.why_not if w.symbol == symbol}


def test_blocked_by_earlier_weak_definition(sc):
    sc.asm("m.o", start("x")); sc.asm("w.o", data("x", True))
    sc.asm("s.o", data("x")); sc.archive("libs.a", ["s.o"])
    res = sc.link([*E, "m.o", "w.o", "libs.a"], why_not=["x"])
    assert reasons(res, "x") == {("libs.a(s.o)", "blocked-by-weak")}
    assert "blocked by an earlier weak definition in w.o" in res.why_not[0].detail


def test_archive_scanned_before_first_reference(sc):
    sc.asm("m.o", start("lib_fn")); sc.asm("f.o", func("lib_fn")); sc.archive("liblf.a", ["f.o"])
    res = sc.link([*E, "liblf.a", "m.o"], why_not=["lib_fn"])
    assert reasons(res, "lib_fn") == {("liblf.a(f.o)", "archive-order")}
    assert "--start-group" in res.why_not[0].detail


def test_only_weakly_referenced(sc):
    sc.asm("m.o", start(weak=("hook",))); sc.asm("h.o", func("hook")); sc.archive("libh.a", ["h.o"])
    res = sc.link([*E, "m.o", "libh.a"], why_not=["hook"])
    assert reasons(res, "hook") == {("libh.a(h.o)", "only-weak-reference")}


def test_never_referenced(sc):
    sc.asm("m.o", start()); sc.asm("h.o", func("hook")); sc.archive("libh.a", ["h.o"])
    res = sc.link([*E, "m.o", "libh.a"], why_not=["hook"])
    assert reasons(res, "hook") == {("libh.a(h.o)", "never-referenced")}


def test_lost_to_common(sc):
    sc.asm("m.o", start("x")); sc.asm("c.o", comm("x", 8)); sc.asm("w.o", data("x", True))
    res = sc.link([*E, "m.o", "c.o", "w.o"], why_not=["x"])
    assert reasons(res, "x") == {("w.o", "lost-to-common")}


def test_common_does_not_pull_a_function(sc):
    sc.asm("m.o", start() + comm("shared", 4)); sc.asm("f.o", func("shared"))
    sc.archive("libf.a", ["f.o"])
    res = sc.link([*E, "m.o", "libf.a"], why_not=["shared"])
    assert reasons(res, "shared") == {("libf.a(f.o)", "common-needs-data")}


def test_first_weak_wins_and_multiple_definition(sc):
    sc.asm("m.o", start("x", "y"))
    sc.asm("w1.o", data("x", True) + data("y")); sc.asm("w2.o", data("x", True) + data("y"))
    res = sc.link([*E, "m.o", "w1.o", "w2.o"], why_not=["x", "y"])
    assert reasons(res, "x") == {("w2.o", "first-weak-wins")}
    assert reasons(res, "y") == {("w2.o", "multiple-definition")}


def test_mangled_name_near_miss(sc):
    # namespace cfg { __attribute__((weak)) int level = 1; }  vs  a global `int level = 5;`
    sc.asm("m.o", start("_ZN3cfg5levelE")); sc.asm("cfg.o", data("_ZN3cfg5levelE", True))
    sc.asm("override.o", data("level"))
    res = sc.link([*E, "m.o", "cfg.o", "override.o"], why_not=["_ZN3cfg5levelE"])
    (miss,) = [w for w in res.why_not if w.reason == "mangled-name-near-miss"]
    assert miss.file == "override.o" and "`level'" in miss.detail


def test_near_miss_in_unextracted_archive_member(sc):
    sc.asm("m.o", start("level")); sc.asm("cfg.o", data("_ZN3cfg5levelE"))
    sc.archive("libcfg.a", ["cfg.o"])
    res = sc.link([*E, "m.o", "libcfg.a"], why_not=["level"])
    assert any(w.reason == "mangled-name-near-miss" and "cfg::level" in w.detail
               for w in res.why_not)


def test_why_extract_matches_the_map_table(sc):
    sc.asm("m.o", start("q1") + comm("shared", 4))
    sc.asm("q1.o", func("q1") + ref("q2")); sc.asm("a_rather_long_member_name_q2.o", func("q2"))
    sc.asm("sd.o", data("shared")); sc.asm("h.o", func("hook"))
    sc.archive("libq.a", ["q1.o", "a_rather_long_member_name_q2.o", "sd.o", "h.o"])
    args = [*E, "-u", "hook", "m.o", "libq.a"]
    res, ld = sc.link(args), sc.ld(args)
    text = (sc.root / "out.map").read_text().split("\n\n")[1]
    assert "\n".join(res.why_extract_lines()) == text.strip("\n")
    assert len(ld.map.archive_members) == 4


@pytest.mark.parametrize("symbol", ["q1", "q2", "shared"])
def test_trace_symbol_matches_ld_y(sc, symbol):
    sc.asm("m.o", start("q1") + comm("shared", 4))
    sc.asm("q1.o", func("q1") + ref("q2")); sc.asm("q2.o", func("q2") + data("shared"))
    sc.archive("libq.a", ["q1.o", "q2.o"])
    args = [*E, "m.o", "libq.a", "-y", symbol]
    assert sc.link(args).trace == sc.ld(args).trace


def test_strong_definition_wins_over_weak(sc):
    sc.asm("m.o", start("x")); sc.asm("w.o", data("x", True)); sc.asm("s.o", data("x"))
    res = sc.link([*E, "m.o", "w.o", "s.o"], why_not=["x"])
    assert reasons(res, "x") == {("w.o", "strong-definition-wins")}


def test_archive_listed_twice_does_not_blame_a_member_on_itself(sc):
    """The member pulled at the archive's first occurrence is the winner; its second
    occurrence searches the same member again and must not list it as a loser to itself."""
    sc.asm("m.o", start("foo")); sc.asm("f.o", func("foo")); sc.asm("w.o", func("foo", weak=True))
    sc.archive("libf.a", ["f.o"])
    res = sc.link([*E, "m.o", "libf.a", "w.o", "libf.a"], why_not=["foo"])
    assert res.symbols["foo"].file == "libf.a(f.o)"
    assert reasons(res, "foo") == {("w.o", "strong-definition-wins")}
    # and where the weak one came first, the member is blocked at both occurrences: one entry
    res = sc.link([*E, "w.o", "libf.a", "m.o", "libf.a"], why_not=["foo"])
    assert [(w.file, w.reason) for w in res.why_not] == [("libf.a(f.o)", "blocked-by-weak")]

"""--wrap=SYM against the real ld: renamed references, extraction, -y, --cref, --why-not."""
from __future__ import annotations

import pytest
from linkgen import compare
from snippets import func

from weaklink.errors import UsageError

MAIN = """.text
.global _start
_start: .word foo
.word __real_foo
.word bar
.word __real_baz
.weak wk
.word wk
"""
WRAPPER = """.text
.global __wrap_foo
__wrap_foo: .word __real_foo
.global foo
foo: .word 0
.word foo
"""
TRACE = [a for s in ("foo", "__wrap_foo", "__real_foo", "bar", "__wrap_bar", "baz", "wk",
                     "__wrap_wk") for a in ("-y", s)]


@pytest.fixture
def wsc(sc):
    sc.asm("m.o", MAIN)
    sc.asm("w.o", WRAPPER)
    sc.asm("a.o", func("__wrap_bar"))
    sc.asm("c.o", func("wk") + func("__wrap_wk") + func("baz"))
    sc.archive("liba.a", ["a.o", "c.o"])
    return sc


@pytest.mark.parametrize("wraps", [
    ["--wrap=foo", "--wrap", "bar", "-wrap", "baz", "--wrap=wk"],
    ["--wrap=foo"],
    ["--wrap=bar", "--wrap=__real_foo", "--wrap=foo"],
    ["-wrap=baz", "--wrap=zz"],
    [],
])
@pytest.mark.parametrize("order", [["m.o", "w.o", "liba.a"], ["liba.a", "m.o", "w.o"],
                                   ["m.o", "liba.a", "w.o"]])
def test_wrap_agrees_with_ld(wsc, wraps, order):
    args = ["-e", "_start", *wraps, *order, *TRACE]
    assert compare(wsc, args) == []


@pytest.mark.parametrize("trace", [["-y", "__wrap_foo"], ["-y", "foo"], ["-y", "__real_foo"],
                                   ["-y", "foo", "-y", "__real_foo"]])
def test_trace_without_cref_needs_both_names(wsc, trace):
    """Without --cref ld notices a wrapped reference only if its own name is traced too."""
    args = ["-e", "_start", "--wrap=foo", "--wrap=bar", "m.o", "w.o", "liba.a", *trace]
    assert wsc.link(args).trace == _ld_trace_nocref(wsc, args)


def _ld_trace_nocref(sc, args):
    import subprocess

    from weaklink import toolchain
    from weaklink.resolve.gnu.oracle import parse_ld_stderr
    proc = subprocess.run([toolchain.tool("ld"), "-o", "o.elf", *args], cwd=sc.root,
                          capture_output=True, text=True)
    return parse_ld_stderr(proc.stderr)[1]


def test_wrapped_reference_extracts_the_wrapper_and_why_not_says_so(wsc):
    res = wsc.link(["-e", "_start", "--wrap=bar", "--wrap=foo", "m.o", "w.o", "liba.a"],
                   why_not=["foo"])
    assert [x.symbol for x in res.extracted] == ["__wrap_bar"]
    assert res.why_not[0].reason == "wrapped" and res.why_not[0].file == "w.o"


def test_wrap_option_forms_are_accepted():
    from weaklink.resolve.cmdline import parse
    opts = parse(["--wrap=a", "--wrap", "b", "-wrap", "c", "-wrap=d"])
    assert opts.wrap == ("a", "b", "c", "d")
    with pytest.raises(UsageError):
        parse(["--wrap"])

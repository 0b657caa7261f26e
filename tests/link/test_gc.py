"""--gc-sections against the real ld (--print-gc-sections is the oracle): roots, KEEP, notes,
SHF_GNU_RETAIN, init arrays, non-alloc sections, .ARM.exidx, COMDAT groups, __start_/__stop_,
--wrap, and undefined references only from kept sections."""
from __future__ import annotations

from pathlib import Path

import pytest
from linkgen import compare
from snippets import start

DATA = Path(__file__).parent / "data"
SCRIPT = ("SECTIONS { .text : { *(.text*) KEEP(*(.keepme)) } .data : { *(.data*) *(.init_array) "
          "*(.ctors) *(.myarr) *(.fini_array) *(.preinit_array) *(.dtors) *(.init_array.*) } "
          "/DISCARD/ : { *(.disc) } }\n")


@pytest.fixture
def gsc(sc):
    for name in ("gc_main", "gc_used", "gc_arrays"):
        sc.asm(f"{name}.o", (DATA / f"{name}.s").read_text())
    (sc.root / "s.ld").write_text(SCRIPT)
    (sc.root / "e.ld").write_text("ENTRY(_start)\n" + SCRIPT)
    sc.archive("libu.a", ["gc_used.o"])
    return sc


@pytest.mark.parametrize("args", [
    ["-T", "s.ld"],                      # no ENTRY: no entry root, .init_array not kept
    ["-T", "s.ld", "-e", "_start"],
    ["-T", "e.ld"],
    [],                                  # ld's default script: KEEP for init arrays, ctors
    ["-u", "other"],
    ["--require-defined", "nfn"],
    ["--wrap=used"],
])
@pytest.mark.parametrize("inputs", [["gc_main.o", "gc_used.o", "gc_arrays.o"],
                                    ["gc_main.o", "libu.a", "gc_arrays.o"]])
def test_gc_agrees_with_ld(gsc, args, inputs):
    full = ["--gc-sections", *args, *inputs]
    assert compare(gsc, full) == []


def test_symbols_say_whether_they_are_kept(gsc):
    res = gsc.link(["--gc-sections", "gc_main.o", "gc_used.o", "gc_arrays.o"])
    assert res.symbols["used"].kept and res.symbols["_start"].kept
    assert not res.symbols["unused"].kept and not res.symbols["other"].kept
    assert res.ok                        # `missing` is referenced only from .text.unused
    assert not gsc.link(["gc_main.o", "gc_used.o", "gc_arrays.o"]).ok


EXIDX_MAIN = """
struct S { S(); ~S(); };
int used_fn(int x);
extern "C" void _start(void) { used_fn(1); }
"""
EXIDX_LIB = """
int used_fn(int x) { return x + 1; }
int unused_fn(int x) { return x * 3; }
template <class T> T twice(T v) { return v + v; }
inline int with_static() { static int n; return ++n; }
int t1(int v) { return twice(v) + with_static(); }
"""
EXIDX_LIB2 = """
template <class T> T twice(T v) { return v + v; }
inline int with_static() { static int n; return ++n; }
int t2(int v) { return twice(v) + with_static(); }
extern int not_defined_anywhere;
int dead_user() { return not_defined_anywhere; }
"""


@pytest.mark.parametrize("flags", [("-O1", "-ffunction-sections", "-fdata-sections"),
                                   ("-O0", "-ffunction-sections", "-funwind-tables")])
@pytest.mark.parametrize("roots", [[], ["-u", "_Z2t1i"], ["-u", "_Z2t2i"]])
def test_gc_cxx_comdat_and_exidx(sc, flags, roots):
    cxx = ("-fno-exceptions", "-fno-rtti", *flags)
    sc.c("m.o", EXIDX_MAIN, *cxx, cxx=True)
    sc.c("l1.o", EXIDX_LIB, *cxx, cxx=True)
    sc.c("l2.o", EXIDX_LIB2, *cxx, cxx=True)
    sc.archive("libl.a", ["l1.o", "l2.o"])
    args = ["--gc-sections", *roots, "m.o", "l1.o", "l2.o"]
    assert compare(sc, args) == []
    assert compare(sc, ["--gc-sections", *roots, "m.o", "libl.a"]) == []


def test_start_stop_symbols_keep_their_section(sc):
    sc.asm("m.o", start("__start_mysec", "__stop_mysec"))
    sc.asm("d.o", '.section mysec,"a",%progbits\n.word 1\n.section other,"a",%progbits\n.word 2\n')
    assert compare(sc, ["--gc-sections", "-e", "_start", "m.o", "d.o"]) == []


DISCARD_SCRIPT = "ENTRY(_start)\nSECTIONS { .text : { *(.text*) } .keep : { *(.disc.keep) } " \
                 "/DISCARD/ : { *(.disc*) } }\n"


@pytest.mark.parametrize("gc", [[], ["--gc-sections"]])
@pytest.mark.parametrize("used", [True, False])
def test_reference_to_a_discarded_definition(sc, gc, used):
    sc.asm("m.o", start(*(["dfn"] if used else [])))
    sc.asm("d.o", '.section .text.d,"ax",%progbits\n.global dfn\ndfn: .word dsym\n.word ksym\n'
                  '.section .disc,"a",%progbits\n.global dsym\ndsym: .word 0\n'
                  '.section .disc.keep,"a",%progbits\n.global ksym\nksym: .word 0\n')
    (sc.root / "d.ld").write_text(DISCARD_SCRIPT)
    res = sc.link(["-T", "d.ld", *gc, "m.o", "d.o"])
    assert compare(sc, ["-T", "d.ld", *gc, "m.o", "d.o"]) == []
    assert [e.kind for e in res.errors] == (["defined-in-discarded-section"]
                                            if used or not gc else [])


@pytest.mark.parametrize("extra", [[], ["-init=foo"], ["-fini", "bar"]])
def test_init_and_fini_symbols_are_roots(sc, extra):
    """ld keeps the sections defining `_init` and `_fini` (or the -init/-fini names), even
    when no KEEP covers them (crti.o's .init/.fini under a script without KEEP)."""
    sc.asm("a.o", '.section .text.s,"ax",%progbits\n.global _start\n_start: .word 0\n'
                  '.section .text.a,"ax",%progbits\n.global _init\n_init: .word 0\n'
                  '.section .text.b,"ax",%progbits\n.global _fini\n_fini: .word 0\n'
                  '.section .text.f,"ax",%progbits\n.global foo\nfoo: .word 0\n'
                  '.section .text.c,"ax",%progbits\n.word 0\n')
    (sc.root / "s.ld").write_text("SECTIONS { .text : { *(.text*) } }\n")
    assert compare(sc, ["--gc-sections", "-T", "s.ld", "-e", "_start", *extra, "a.o"]) == []


@pytest.mark.parametrize("assignment", ["x = bar;", "PROVIDE(x = baz);", "x = bar + 4;",
                                        "x = 0x100;", "x = ADDR(.text);", "HIDDEN(x = q);"])
def test_script_symbol_set_from_another_keeps_its_section(sc, assignment):
    sc.asm("e.o", '.section .text.s,"ax",%progbits\n.global _start\n_start: .word x\n')
    sc.asm("a.o", "".join(f'.section .text.{n},"ax",%progbits\n.global {n}\n{n}: .word 0\n'
                          for n in ("bar", "baz", "q")))
    (sc.root / "s.ld").write_text("SECTIONS { .text : { *(.text*) } } " + assignment + "\n")
    assert compare(sc, ["--gc-sections", "-T", "s.ld", "-e", "_start", "e.o", "a.o"]) == []

"""Symbols the linkers define on their own (weaklink/resolve/linker_defined.py), each case
checked against the real arm-none-eabi-ld 2.40 (exit status, errors, --cref, defining files)
and, where lld is installed, ld.lld-16 (errors in its wording, defining files in the image)."""
from __future__ import annotations

import subprocess

import pytest
from linkgen import compare
from snippets import func, start

from weaklink import toolchain
from weaklink.resolve.lld import oracle

E = ["-e", "_start"]
SCRIPT = "SECTIONS { .text 0x1000 : { *(.text*) } .data : { *(.data*) } .bss : { *(.bss*) } }\n"
# a script that puts input section `mysec` into .data: no output section called mysec
INTO_DATA = "SECTIONS { .text 0x1000 : { *(.text*) } .data : { *(.data*) *(mysec) } }\n"
needs_lld = pytest.mark.skipif(not oracle.available(), reason="ld.lld-16 not installed")


def agree(sc, args):
    diffs = compare(sc, [*E, *args])
    assert diffs == [], "\n".join(diffs)
    res = sc.link([*E, *args], cref=True)
    # the summary's count, taken without building the table, is the table's length
    assert res.symbol_count() == len(res.symbols)
    return res


def agree_lld(sc, args):
    from weaklink.resolve.lld import resolve
    state, model = resolve([*E, *args], cwd=str(sc.root))
    assert oracle.differences(model, sc.lld([*E, *args]), state, messages=True) == []
    return model


def gotpc(name: str = "use_got") -> str:
    """What GCC's -fPIC code does: find the GOT pc-relative (R_ARM_BASE_PREL)."""
    return f".text\n.global {name}\n{name}: bx lr\n.word _GLOBAL_OFFSET_TABLE_ - .\n"


def got_only(var: str, how: str = "GOT") -> str:
    """A GOT-relative use of `var` that never names _GLOBAL_OFFSET_TABLE_."""
    return f".text\n.global use_{var}\nuse_{var}: bx lr\n.word {var}({how})\n" + \
        f".data\n.global {var}\n{var}: .word 1\n"


def image_symbols(sc, name="out.elf") -> str:
    return subprocess.run([toolchain.tool("nm"), name], cwd=sc.root, capture_output=True,
                          text=True).stdout


@pytest.mark.parametrize("script", [False, True])
def test_a_got_user_gets_the_got_symbol(sc, script):
    sc.asm("main.o", start("use_got"))
    sc.asm("pic.o", gotpc())
    args = ["main.o", "pic.o"]
    if script:
        (sc.root / "s.ld").write_text(SCRIPT)
        args = ["-T", "s.ld", *args]
    res = agree(sc, args)
    assert res.ok and res.errors == ()
    got = res.symbols["_GLOBAL_OFFSET_TABLE_"]
    assert (got.binding, got.file, got.section) == ("linker", "main.o", ".got")
    assert res.cref["_GLOBAL_OFFSET_TABLE_"] == ("main.o", "pic.o")
    assert " _GLOBAL_OFFSET_TABLE_" in image_symbols(sc)


@pytest.mark.parametrize("how", ["GOT", "GOTOFF", "GOT_PREL", "gottpoff"])
def test_every_got_relative_relocation_makes_the_got(sc, how):
    """R_ARM_GOT_BREL, R_ARM_GOTOFF32, R_ARM_GOT_PREL, R_ARM_TLS_IE32: ld defines the symbol
    even though no file names it, in the first file with relocations (its --cref definer)."""
    sc.asm("data.o", ".data\n.global d\nd: .word 1\n")          # no relocations
    sc.asm("main.o", ".text\n.global _start\n_start: bx lr\n")  # R_ARM_V4BX: the dynobj
    body = got_only("v", how) if how != "gottpoff" else \
        ".text\n.global use_v\nuse_v: .word v(gottpoff)\n.section .tbss,\"awT\",%nobits\n" \
        ".global v\nv: .space 4\n"
    sc.asm("pic.o", body)
    res = agree(sc, ["-o", "out.elf", "data.o", "main.o", "pic.o"])
    assert res.cref["_GLOBAL_OFFSET_TABLE_"] == ("main.o",)
    assert res.symbols["_GLOBAL_OFFSET_TABLE_"].binding == "linker"


def test_no_got_user_no_got_symbol(sc):
    sc.asm("main.o", start("f"))
    sc.asm("f.o", func("f"))
    res = agree(sc, ["main.o", "f.o"])
    assert "_GLOBAL_OFFSET_TABLE_" not in res.symbols


@pytest.mark.parametrize("section", ['.tbss,"awT",%nobits', '.tdata,"awT",%progbits\n.word 1'])
def test_a_thread_local_section_gets_the_tls_base_in_the_output(sc, section):
    """Even an empty .tbss, and with nothing referencing the name."""
    sc.asm("main.o", start() + f".section {section}\n")
    res = agree(sc, ["-o", "out.elf", "main.o"])
    assert res.cref["_TLS_MODULE_BASE_"] == ("out.elf",)
    assert res.symbols["_TLS_MODULE_BASE_"][:2] == ("linker", "out.elf")


@pytest.mark.parametrize("extracted", [True, False])
def test_a_got_user_in_an_archive_counts_once_extracted(sc, extracted):
    sc.asm("main.o", start(*(["use_got"] if extracted else ["f"])))
    sc.asm("f.o", func("f"))
    sc.asm("pic.o", gotpc())
    sc.archive("lib.a", ["pic.o", "f.o"])
    res = agree(sc, ["main.o", "lib.a"])
    assert ("_GLOBAL_OFFSET_TABLE_" in res.symbols) == extracted


def test_a_got_user_collected_by_gc_sections_still_made_the_got(sc):
    sc.asm("main.o", ".data\n.global _start\n_start: .word 0\n")  # no relocations
    sc.asm("pic.o", ".section .text.dead,\"ax\",%progbits\n.global dead\ndead: "
           ".word _GLOBAL_OFFSET_TABLE_ - .\n")
    res = agree(sc, ["--gc-sections", "main.o", "pic.o"])
    assert res.ok and res.cref["_GLOBAL_OFFSET_TABLE_"] == ("pic.o",)


@pytest.mark.parametrize("order", [("def.o", "pic.o"), ("pic.o", "def.o")])
def test_an_object_defining_the_got_symbol_loses_to_ld_silently(sc, order):
    sc.asm("main.o", start("use_got"))
    sc.asm("pic.o", gotpc())
    sc.asm("def.o", ".data\n.global _GLOBAL_OFFSET_TABLE_\n_GLOBAL_OFFSET_TABLE_: .word 0\n")
    res = agree(sc, ["main.o", *order])
    assert res.ok and res.symbols["_GLOBAL_OFFSET_TABLE_"][:3] == ("linker", "main.o", 0)


@pytest.mark.parametrize("script, defined", [(None, True), (SCRIPT, True), (INTO_DATA, False)])
def test_start_stop_symbols_follow_the_output_section(sc, script, defined):
    sc.asm("main.o", start("__start_mysec", "__stop_mysec") + ".section mysec,\"a\"\n.word 1\n")
    args = ["main.o"]
    if script:
        (sc.root / "s.ld").write_text(script)
        args = ["-T", "s.ld", *args]
    if defined:
        assert agree(sc, args).ok
        return
    # ld stops at "protected symbol `__start_mysec' isn't defined" and writes an empty map:
    # compare what it printed
    res, ld = sc.link([*E, *args]), sc.ld([*E, *args])
    assert not res.ok and not ld.ok
    assert {(e.kind, e.symbol, e.file) for e in res.errors} == set(ld.errors)


def test_fpic_runner_link_agrees_with_ld(cross_toolchain):
    """The Release-shaped C++ runner, -fPIC with a GOT, linked with its -T script."""
    from weaklink.builders import firmware as fixtures, release as fixtures_release
    from weaklink.scenario import Scenario

    image = fixtures_release.build([fixtures_release.VARIANTS[1]])[0]
    root = fixtures.cache_dir()
    args = ["-T", str(image.script), *map(str, image.objects), str(toolchain.libgcc_path())]
    sc = Scenario(root)
    diffs = compare(sc, [*args])
    assert diffs == [], "\n".join(diffs)
    res = sc.link(args, cref=True)
    assert res.ok and res.symbols["_GLOBAL_OFFSET_TABLE_"].binding == "linker"


PIC = r"""
extern int *counter;
extern int shared_value;
int read_all(void) { return *counter + shared_value; }
int main(void) { return read_all(); }
"""
DEFS = "static int storage; int *counter = &storage; int shared_value = 3;\n"


@pytest.mark.parametrize("gc", [[], ["-Wl,--gc-sections"]])
def test_fpic_driver_line_with_newlib_agrees_with_ld(sc, gc):
    """`weaklink link -- arm-none-eabi-gcc …` on -fPIC objects: ld makes the GOT and its
    symbol; the model agrees (it used to report `_GLOBAL_OFFSET_TABLE_` undefined)."""
    from weaklink.resolve.gnu.oracle import differences

    sc.c("pic.o", PIC, "-fPIC")
    sc.c("defs.o", DEFS, "-fPIC")
    argv = [toolchain.tool("gcc"), *toolchain.CPU_FLAGS, "-specs=nosys.specs", *gc,
            "pic.o", "defs.o", "-o", "app.elf"]
    model = sc.link_driver(argv, cref=True)
    real = sc.driver(argv)
    assert differences(model, real, args=list(model.ld_args)) == []
    assert model.ok and model.symbols["_GLOBAL_OFFSET_TABLE_"].binding == "linker"


# -- ld.lld-16 ---------------------------------------------------------------------------------
@needs_lld
@pytest.mark.parametrize("script", [False, True])
def test_lld_defines_the_got_symbol_only_when_named(sc, script):
    sc.asm("main.o", start("use_got", "use_v"))
    sc.asm("pic.o", gotpc())
    sc.asm("v.o", got_only("v"))
    args = ["main.o", "pic.o", "v.o"]
    if script:
        (sc.root / "s.ld").write_text(SCRIPT)
        args = ["-T", "s.ld", *args]
    res = agree_lld(sc, args)
    assert res.ok and res.symbols["_GLOBAL_OFFSET_TABLE_"].binding == "linker"
    # a GOT-relative use alone does not name the symbol: lld defines nothing (GNU ld does)
    sc.asm("main2.o", start("use_v"))
    res = agree_lld(sc, [*args[:-3], "main2.o", "v.o"])
    assert res.ok and "_GLOBAL_OFFSET_TABLE_" not in res.symbols


@needs_lld
def test_lld_refuses_an_object_that_defines_the_got_symbol(sc):
    sc.asm("main.o", start())
    sc.asm("def.o", ".data\n.global _GLOBAL_OFFSET_TABLE_\n_GLOBAL_OFFSET_TABLE_: .word 0\n")
    res = agree_lld(sc, ["main.o", "def.o"])
    (err,) = res.errors
    assert err.kind == "linker-symbol-redefined"
    assert err.message == "def.o cannot redefine linker defined symbol '_GLOBAL_OFFSET_TABLE_'"


RESERVED = ("__ehdr_start", "__executable_start", "__dso_handle", "__exidx_start",
            "__exidx_end", "__init_array_start", "__init_array_end", "__fini_array_start",
            "__fini_array_end", "__preinit_array_start", "__preinit_array_end",
            "__rel_iplt_start", "__rel_iplt_end", "__start_mysec", "__stop_mysec",
            "__bss_start", "end", "_end", "etext", "_etext", "edata", "_edata",
            # never defined by lld: they stay undefined
            "__rela_iplt_start", "__bss_start__", "_DYNAMIC")


@needs_lld
@pytest.mark.parametrize("script", [None, SCRIPT, INTO_DATA,
                                    "MEMORY { R : ORIGIN = 0x1000, LENGTH = 0x100000 }\n"])
def test_lld_reserved_symbols(sc, script):
    sc.asm("main.o", start(*RESERVED) + ".section mysec,\"a\"\n.word 1\n")
    args = ["main.o"]
    if script:
        (sc.root / "s.ld").write_text(script)
        args = ["-T", "s.ld", *args]
    res = agree_lld(sc, args)
    undefined = {e.symbol for e in res.errors}
    assert {"__rela_iplt_start", "__bss_start__", "_DYNAMIC"} <= undefined
    assert "__ehdr_start" not in undefined


@needs_lld
def test_compare_explains_the_reserved_got_symbol(sc, capsys, monkeypatch):
    from weaklink.cli import main

    sc.asm("main.o", start("use_got"))
    sc.asm("pic.o", gotpc())
    sc.asm("def.o", ".data\n.global _GLOBAL_OFFSET_TABLE_\n_GLOBAL_OFFSET_TABLE_: .word 0\n")
    monkeypatch.chdir(sc.root)
    main(["link", "--compare", "gnu,lld", *E, "main.o", "pic.o", "def.o"])
    out = capsys.readouterr().out
    assert "lld reserves _GLOBAL_OFFSET_TABLE_: an input may not define it" in out

"""Compiler-driver lines: ld arguments from `gcc -###`, plugin options dropped, sources refused,
LTO IR objects refused, the CLI's `-- CC ARGS` form, and COMDAT on compiled C++."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from weaklink import toolchain
from weaklink.cli import main
from weaklink.errors import InputError, UsageError
from weaklink.resolve.compiler_driver import ld_command, strip_plugin_options
from weaklink.resolve.gnu.oracle import differences

GCC = ["arm-none-eabi-gcc", *toolchain.CPU_FLAGS]
APP = """
#include <stdlib.h>
__attribute__((weak)) void board_init(void) { }
void unused(void) { extern void nowhere(void); nowhere(); }
int main(void) { board_init(); void *p = malloc(4); free(p); return 0; }
"""


def test_plugin_options_are_dropped():
    args = ["-plugin", "/x/liblto_plugin.so", "-plugin-opt=/x/lto-wrapper",
            "--plugin", "p.so", "--plugin-opt=-foo", "-o", "a.elf", "m.o"]
    assert strip_plugin_options(args) == ["-o", "a.elf", "m.o"]


@pytest.mark.parametrize("specs", [["-specs=nosys.specs"], ["-specs=nano.specs", "-specs=nosys.specs"],
                                   ["-specs=rdimon.specs"]])
@pytest.mark.parametrize("gc", [[], ["-Wl,--gc-sections"]])
def test_newlib_driver_line_agrees_with_the_real_link(sc, specs, gc):
    sc.c("app.o", APP, "-ffunction-sections")
    argv = [*GCC, *specs, *gc, "app.o", "-lm", "-o", "app.elf"]
    model = sc.link_driver(argv, cref=True)
    real = sc.driver(argv)
    assert differences(model, real, args=list(model.ld_args)) == []
    assert model.ok == bool(gc)          # `nowhere` is only referenced from a collected section
    assert "-plugin" not in model.ld_args and any(a.endswith("crt0.o") for a in model.ld_args)
    assert model.symbols["__bss_start__"].binding == "script"     # ld's default script


def test_sources_on_the_line_are_refused(sc):
    (sc.root / "x.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(UsageError, match="would compile x.c"):
        ld_command([*GCC, "-specs=nosys.specs", "x.c"], cwd=str(sc.root))


def test_lto_ir_object_is_exit_2(sc, capsys, monkeypatch):
    sc.c("lto.o", "int main(void) { return 0; }", "-flto")
    with pytest.raises(InputError, match="lto.o: LTO IR objects are not modelled"):
        sc.link_driver([*GCC, "-specs=nosys.specs", "lto.o"])
    monkeypatch.chdir(sc.root)
    code = main(["link", "--", *GCC, "-specs=nosys.specs", "lto.o"])
    assert code == 2
    assert capsys.readouterr().err == "weaklink: error: lto.o: LTO IR objects are not modelled\n"


def test_cli_driver_form_json_has_ld_args(sc, capsys, monkeypatch):
    sc.c("app.o", APP, "-ffunction-sections")
    monkeypatch.chdir(sc.root)
    code = main(["link", "--json", "--", *GCC, "-specs=nosys.specs", "-Wl,--gc-sections",
                 "app.o", "-o", "app.elf"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["ok"] and doc["ld_args"][:2] == ["-X", "-o"]
    assert {"file": "app.o", "section": ".text.unused"} in doc["collected"]
    assert doc["symbols"]["unused"]["kept"] is False and doc["symbols"]["main"]["kept"] is True


def test_cli_answers_the_question_asked(sc, capsys, monkeypatch):
    sc.c("app.o", APP, "-ffunction-sections")
    sc.c("board.o", "void board_init(void) { }")
    sc.archive("libboard.a", ["board.o"])
    monkeypatch.chdir(sc.root)
    argv = [*GCC, "-specs=nosys.specs", "-Wl,--gc-sections", "app.o", "libboard.a"]
    code = main(["link", "--why-not", "board_init", "--", *argv])
    out = capsys.readouterr().out
    assert code == 0
    assert "why not board_init from libboard.a(board.o):" in out and "[blocked-by-weak]" in out
    assert "board_init resolves to the weak definition in app.o" in out
    assert "SYMBOL" not in out and out.rstrip().endswith("link would succeed")
    main(["link", "--symbols", "--", *argv])
    table = capsys.readouterr().out
    assert "IN IMAGE" in table and "no, collected" in table


CXX_A = """
template <class T> struct Reg { static int count; __attribute__((noinline)) static T twice(T v) { return v + v; } };
template <class T> int Reg<T>::count = 3;
inline int next_id() { static int id; return ++id; }
inline int shared_cfg = 5;
extern "C" int use_a(int v) { return Reg<int>::twice(v) + Reg<int>::count + next_id() + shared_cfg; }
"""
CXX_B = CXX_A.replace("use_a", "use_b")


@pytest.mark.parametrize("flags", [(), ("-ffunction-sections", "-fdata-sections")])
@pytest.mark.parametrize("gc", [[], ["-Wl,--gc-sections"]])
def test_comdat_templates_static_locals_vague_data(sc, flags, gc):
    cxx = ("-fno-exceptions", "-fno-rtti", "-std=c++17", "-O1", *flags)
    sc.c("a.o", CXX_A, *cxx, cxx=True)
    sc.c("b.o", CXX_B, *cxx, cxx=True)
    sc.c("m.o", "int use_a(int); int use_b(int); int main(void) { return use_a(1) + use_b(2); }")
    argv = [*GCC, "-specs=nosys.specs", *gc, "m.o", "a.o", "b.o"]
    model = sc.link_driver(argv, cref=True)
    assert differences(model, sc.driver(argv), args=list(model.ld_args)) == []
    assert model.ok                                  # COMDAT copies are no multiple definition
    for sym in ("_ZN3RegIiE5countE", "_ZZ7next_idvE2id", "shared_cfg", "_ZN3RegIiE5twiceEi"):
        assert model.symbols[sym].file == "a.o"      # the first group wins


EXAMPLES = Path("/usr/share/doc/gcc-arm-none-eabi/examples/ldscripts")


@pytest.mark.skipif(not (EXAMPLES / "nokeep.ld").exists(),
                    reason="the toolchain's example linker scripts are not installed")
@pytest.mark.parametrize("script", ["gcc.ld", "nokeep.ld", "multi-ram.ld"])
@pytest.mark.parametrize("gc", [[], ["-Wl,--gc-sections"]])
def test_the_toolchains_example_scripts(sc, script, gc):
    """Arm's example scripts (INCLUDE mem.ld through -L; nokeep.ld has no KEEP at all)."""
    sc.c("app.o", APP, "-ffunction-sections")
    argv = [*GCC, "-specs=nano.specs", "-specs=nosys.specs", *gc, f"-L{EXAMPLES}", "-T", script,
            "app.o", "-lm", "-o", "app.elf"]
    model = sc.link_driver(argv, cref=True)
    assert differences(model, sc.driver(argv), args=list(model.ld_args)) == []


def test_print_gc_sections_lines_in_human_output(sc, capsys, monkeypatch):
    sc.c("app.o", APP, "-ffunction-sections")
    monkeypatch.chdir(sc.root)
    main(["link", "--", *GCC, "-specs=nosys.specs", "-Wl,--gc-sections,--print-gc-sections",
          "app.o"])
    out = capsys.readouterr().out
    assert "ld: removing unused section '.text.unused' in file 'app.o'" in out

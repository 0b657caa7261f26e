"""Which symbol holds an address (weaklink.read.image.Image.symbol_at), the one answer that
analyze's pointer targets, diff's compared targets, bind's names and run's PC names all use.

The image is assembled and linked here with the real cross toolchain: a nested symbol, aliases
and linker-style markers at one start, a Thumb function, a gap."""
from __future__ import annotations

import numpy as np
import pytest

from weaklink.diff.columns import _holders
from weaklink.read import elfstructs as S
from weaklink.read.image import Image

ASM = r"""
    .syntax unified
    .thumb
    .section .text.f,"ax",%progbits
    .global f
    .type f, %function
    .thumb_func
f:
    nop
    bx lr
    .size f, .-f

    .data
    .balign 16
    .global outer, marker_a, marker_b
    .type outer, %object
    .type local_alias, %object
outer:
local_alias:
marker_a:
marker_b:
    .space 16
    .type inner, %object
inner:
    .space 8
    .size inner, 8
    .space 40
    .size outer, 64
    .size local_alias, 64
    .global after
    .type after, %object
after:
    .word f
    .size after, 4
    .space 64
    .global tail
tail:
"""


@pytest.fixture(scope="module")
def image(cross_toolchain, tmp_path_factory):
    d = tmp_path_factory.mktemp("symbol_at")
    (d / "a.s").write_text(ASM)
    for name, argv in (("gcc", [*cross_toolchain.CPU_FLAGS, "-c", "a.s", "-o", "a.o"]),
                       ("ld", ["-e", "f", "-Ttext=0x10000", "-Tdata=0x20000", "a.o", "-o", "a.elf"])):
        done = cross_toolchain.run(name, argv, cwd=d)
        assert done.returncode == 0, done.stderr
    return Image.from_path(d / "a.elf")


def _name(image, address, kinds=None):
    sym = image.symbol_at(address, kinds)
    return sym.name if sym else None


def test_the_innermost_start_wins_and_an_outer_symbol_holds_past_a_nested_one(image):
    outer = image.symbol_named("outer").address
    assert _name(image, outer + 16) == "inner"
    assert _name(image, outer + 23) == "inner"
    # past `inner`, inside `outer`: the nearer start holds nothing, the outer symbol does
    assert _name(image, outer + 24) == "outer"
    assert image.symbol_at(outer + 24).offset(outer + 24) == 24
    assert _name(image, outer + 64) == "after"
    assert _name(image, outer + 68) is None                 # the gap after `after`
    assert _name(image, 0xFFFFFFF0) is None


def test_at_one_start_sized_then_typed_then_global(image):
    """`outer` (global object), `local_alias` (local object of the same size) and two global
    markers of size 0 start together: the global object names the address."""
    outer = image.symbol_named("outer").address
    assert {s.name for s in image.lookup("marker_a") + image.lookup("local_alias")} == {
        "marker_a", "local_alias"}
    assert _name(image, outer) == "outer"
    markers = [image.symbol_named(n) for n in ("marker_a", "marker_b")]
    assert all(m.size == 0 and m.type == S.STT_NOTYPE for m in markers)
    # of the two markers alone (kinds: NOTYPE), the later .symtab entry
    later = max(markers, key=lambda m: m.index)
    assert _name(image, outer, (S.STT_NOTYPE,)) == later.name


def test_a_function_holds_its_thumb_address(image):
    f = image.symbol_named("f")
    assert f.address & 1 == 0
    held = image.symbol_at(f.address | 1)
    assert held.name == "f" and held.offset(f.address | 1) == 0
    assert _name(image, f.address + 2, (S.STT_FUNC,)) == "f"
    assert _name(image, image.symbol_named("outer").address, (S.STT_FUNC,)) is None
    assert [s.name for s in image.functions] == ["f"]


def test_mapping_symbols_mark_code_and_data(image):
    """`$t` where f's code starts, `$d` where the data does, each under the STT_FILE symbol
    ld copied from the object (gas names it after the object without a .file directive)."""
    f, outer = image.symbol_named("f"), image.symbol_named("outer")
    assert [(m.address, m.kind, m.unit) for m in image.mapping_symbols] == [
        (f.address, "t", "a.o"), (outer.address, "d", "a.o")]


def test_diff_finds_every_holder_as_symbol_at_does(image):
    """diff asks for the holders of many addresses at once: the same rows as row_at."""
    start = image.symbol_named("f").address
    addresses = np.arange(start - 4, start + 8, dtype=np.int64)
    data = image.symbol_named("outer").address
    addresses = np.concatenate([addresses, np.arange(data - 4, data + 200, dtype=np.int64)])
    want = [-1 if (r := image.row_at(int(a))) is None else r for a in addresses]
    assert _holders(image, addresses).tolist() == want

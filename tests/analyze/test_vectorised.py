"""The two symbol-table engines give the same report, byte for byte: the pure one (small
images, no numpy import) and numpy's (images of NUMPY_FROM symbols and more). Each image is
analysed twice, with the threshold moved so that each engine runs once."""
from __future__ import annotations

import json

import pytest

from weaklink import toolchain
from weaklink.analyze import analyze, demangling
from weaklink.analyze.render import render
from weaklink.read import image as image_mod
from weaklink.read.image import Image

LINKER_SCRIPT = """\
MEMORY {
  FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 64K
  RAM   (rw) : ORIGIN = 0x30000000, LENGTH = 64K
}
ENTRY(f0)
SECTIONS {
  .text   : { *(.text*) } > FLASH
  .rodata : { *(.rodata*) } > FLASH
  .data   : { *(.data*) } > RAM AT > FLASH
  .bss (NOLOAD) : { *(.bss*) } > RAM
  .far 0x50000000 : { *(.far*) }
}
"""

# Names the JSON must escape or the demangler must work for: a quote, UTF-8, an invalid
# byte, C++ names that are nested (decoded in process), templated and functions (the real
# demangler), an anonymous namespace, and operator"" (a quote in the demangled name).
ODD = ['"q\\"uote"', '"caf\xc3\xa9"', '"bad\xff"', "_ZN2ns1aE", "_ZN2ns5inner1bE",
       "_ZN2ns1fIiEEvT_", "_Z4gfuni", "_ZN12_GLOBAL__N_18anon_varE", "_Zli2_xPKc",
       "_ZN2ns4hookEv", "hook",
       # a weak C name and a namespaced strong one: a near miss; and a pair whose names have
       # the same length and the same first, second, middle and last bytes but differ
       "near_tail", "_ZN2ns9near_tailE", "abXcdYef", "_ZN2ns8abZcdWefE"]
WEAK_ODD = ("_ZN2ns4hookEv", "_ZN2ns1aE", "near_tail", "abXcdYef")


def _source(n: int) -> str:
    out = [".syntax unified", ".thumb"]
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out += [f'.section .text.f{i},"ax",%progbits', f".global f{i}", f".type f{i},%function",
                    ".thumb_func", f"f{i}:", " bx lr", f".size f{i}, .-f{i}"]
        elif kind == 1:
            out += [f'.section .data.d{i},"aw",%progbits', f".global d{i}", f".type d{i},%object",
                    ".balign 4", f"d{i}:", f" .word f{i - 1}", f".size d{i},4"]
        elif kind == 2:
            out += [f'.section .bss.b{i},"aw",%nobits', f".weak b{i}", f".type b{i},%object",
                    ".balign 4", f"b{i}:", " .space 8", f".size b{i},8"]
        else:
            out += [f'.section .far.r{i},"a",%progbits', f".global r{i}", f".type r{i},%object",
                    f"r{i}:", " .byte 1", f".size r{i},1"]
    for k, name in enumerate(ODD):
        weak = ".weak" if name in WEAK_ODD else ".global"
        out += [f'.section .rodata.odd{k},"a",%progbits', f"{weak} {name}",
                f".type {name},%object", f"{name}:", f" .word {k}", f".size {name},4"]
    out += [".global abs_sym", ".set abs_sym, 0x1234", ""]
    return "\n".join(out)


@pytest.fixture(scope="module")
def odd_image(cross_toolchain, tmp_path_factory):
    where = tmp_path_factory.mktemp("vectorised")
    (where / "t.s").write_bytes(_source(400).encode("latin-1"))
    (where / "t.ld").write_text(LINKER_SCRIPT)
    for tool, argv in (("gcc", [*toolchain.CPU_FLAGS, "-c", "t.s", "-o", "t.o"]),
                       ("ld", ["-T", "t.ld", "t.o", "-o", "t.elf", "-Map", "t.map"])):
        done = toolchain.run(tool, argv, cwd=where)
        assert done.returncode == 0, done.stderr
    return where / "t.elf", where / "t.map"


def _both(monkeypatch, path, **kw):
    out = []
    for threshold in (10**9, 0):                 # pure, then numpy
        monkeypatch.setattr(image_mod, "NUMPY_FROM", threshold)
        report = analyze(str(path), **kw)
        assert type(report.table).__name__ == ("SymbolTable" if threshold else "VectorisedTable")
        out.append((report.to_json(), render(report)))
    return out


QUERIES = ["d1", "ns::a", "_Zli2_xPKc", 'q"uote', "abs_sym", "no_such_symbol", "b2"]


@pytest.mark.parametrize("batch", [False, True], ids=["in-process", "c++filt"])
def test_odd_names_same_report(odd_image, monkeypatch, batch):
    if batch:           # every non-nested C++ name through one c++filt process
        monkeypatch.setattr(demangling, "BATCH_THRESHOLD", 1)
    elf, map_ = odd_image
    (pure, vec) = _both(monkeypatch, elf, map_path=str(map_), symbols=QUERIES)
    assert pure == vec
    assert b'"name":"q\\"uote"' in pure[0] and '"caf\u00e9"'.encode() in pure[0]
    assert b'operator\\"\\" _x(char const*)' in pure[0]
    assert b'"near-miss-override"' in pure[0]
    near = [f["symbol"] for f in json.loads(pure[0])["findings"]
            if f["rule"] == "near-miss-override"]
    assert "near_tail" in near and "abXcdYef" not in near


def test_a_newline_in_a_name_goes_to_the_pure_engine(odd_image, monkeypatch, tmp_path):
    """numpy's engine carries demangled names as lines; the demanglers keep a newline in the
    names they decode (`_Z4g\nuni` is `g\nun(int)`), so such an image is analysed by the
    pure engine, whatever its size, and reported as the pure engine reports it."""
    elf, _ = odd_image
    data = bytearray(elf.read_bytes())
    image = Image.from_path(elf)
    strtab = image.elf.shdrs[image.elf.shdrs[image.elf.symtab_index].sh_link]
    at = strtab.sh_offset + image.strtab.index(b"_Z4gfuni\0")
    data[at + 4] = ord("\n")                                       # _Z4g\nuni
    p = tmp_path / "newline.elf"
    p.write_bytes(bytes(data))
    monkeypatch.setattr(image_mod, "NUMPY_FROM", 10**9)
    pure = analyze(str(p)).to_json()
    monkeypatch.setattr(image_mod, "NUMPY_FROM", 0)
    report = analyze(str(p))
    assert type(report.table).__name__ == "SymbolTable" and report.to_json() == pure
    assert b'"name":"_Z4g\\nuni","demangled":"g\\nun(int)"' in pure


def test_fixture_firmware_same_report(firmware, monkeypatch):
    checked = 0
    for name, outcome in sorted(firmware.items()):
        if outcome.returncode != 0:
            continue
        elf = outcome.cwd / outcome.elf
        (pure, vec) = _both(monkeypatch, elf, map_path=str(outcome.cwd / outcome.map),
                            symbols=["vela_bin_stream", "ethosu_fast_scratch"])
        assert pure == vec, name
        checked += 1
    assert checked >= 10


def test_pointer_holders_agree(odd_image, monkeypatch):
    elf, _ = odd_image
    image = Image.from_path(elf)
    c = image.defined
    probes = sorted({a + d for a in c.address for d in (-1, 0, 1, 3, 4)} | {0, 0x1234})
    monkeypatch.setattr(image_mod, "NUMPY_FROM", 10**9)
    pure = [image.holder(a) for a in probes]
    monkeypatch.setattr(image_mod, "NUMPY_FROM", 0)
    assert [image.holder(a) for a in probes] == pure
    assert sum(h is not None for h in pure) > len(c)


def test_extended_section_numbering(cross_toolchain, tmp_path, monkeypatch):
    """66k sections (`ld --unique`): e_shnum is 0 and e_shstrndx SHN_XINDEX, the real values
    sit in section 0; symbols in sections past 0xff00 have SHN_XINDEX and their index in
    .symtab_shndx. Both engines read them, and agree."""
    n = 66_000
    lines = [".syntax unified", ".thumb"]
    for i in range(n):
        lines += [f'.section .data.s{i},"aw",%progbits', f".global v{i}", f".type v{i},%object",
                  f"v{i}:", f" .byte {i % 200 + 1}", f".size v{i},1"]
    lines += [".text", ".global f0", ".type f0,%function", ".thumb_func", "f0: bx lr", ""]
    (tmp_path / "x.s").write_text("\n".join(lines))
    (tmp_path / "x.ld").write_text("ENTRY(f0)\nSECTIONS { .text 0x10000000 : { *(.text*) } }\n")
    for tool, argv in (("gcc", [*toolchain.CPU_FLAGS, "-c", "x.s", "-o", "x.o"]),
                       ("ld", ["-T", "x.ld", "--unique", "x.o", "-o", "x.elf"])):
        done = toolchain.run(tool, argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    elf = tmp_path / "x.elf"
    image = Image.from_path(elf)
    assert image.elf.header["e_shnum"] == 0 and image.elf.shnum > 0xFF00
    (pure, vec) = _both(monkeypatch, elf, symbols=["v65999", "v5"])
    assert pure == vec
    report = analyze(str(elf), symbols=["v65999"])
    q = report.queried["v65999"]
    assert (q.section, q.value) == (".data.s65999", 65999 % 200 + 1)


def test_equal_strings_have_equal_signatures():
    """The near-miss prefilter may keep strings that differ, never drop two that are equal:
    equal strings anywhere in a buffer (empty ones at its very end too) share a signature."""
    import numpy as np

    from weaklink.analyze.vectorised import _signatures
    words = [b"", b"a", b"ab", b"abc", b"hook", b"near_tail", b"abXcdYef", b"x" * 300]
    buf = b"".join(words + words)
    u8 = np.frombuffer(buf, np.uint8)
    starts = np.cumsum([0] + [len(w) for w in words + words])
    lengths = np.array([len(w) for w in words + words])
    sig = _signatures(u8, starts[:-1], lengths)
    half = len(words)
    assert (sig[:half] == sig[half:]).all()
    assert len(set(sig[:half].tolist())) == half          # these differ in a sampled byte
    assert _signatures(u8, np.array([len(buf)]), np.array([0]))[0] == sig[0]

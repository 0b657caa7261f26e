"""Bad input: one InputError naming the file and the offset, exit 2, never a traceback.
Includes a hypothesis fuzz over mutated images (truncated, bytes flipped)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from weaklink.analyze import analyze
from weaklink.analyze.render import render
from weaklink.cli import main
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile


def _patched(src, tmp_path, name, patch):
    data = bytearray(src.read_bytes())
    patch(data)
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out


def _shdr(data, index):
    shoff = struct.unpack_from("<I", data, 32)[0]
    return shoff + index * S.SHDR_SIZE


def _index_of(elf_path, name):
    return ElfFile.from_path(elf_path).find_section(name)


def _error(path, **kw) -> InputError:
    with pytest.raises(InputError) as info:
        analyze(str(path), **kw)
    return info.value


def test_not_an_elf(tmp_path):
    p = tmp_path / "x.elf"
    p.write_bytes(b"\0" * 100)
    err = _error(p)
    assert err.path == str(p) and err.offset == 0 and "not an ELF" in err.what


def test_wrong_machine(small_image, tmp_path):
    p = _patched(small_image.elf, tmp_path, "x86.elf", lambda d: struct.pack_into("<H", d, 18, 62))
    err = _error(p)
    assert err.offset == 18 and "machine 62" in err.what


def test_relocatable_object_is_not_an_image(small_image):
    err = _error(small_image.obj)
    assert err.offset == 16 and "ET_EXEC" in err.what


def test_truncated(small_image, tmp_path):
    p = tmp_path / "cut.elf"
    p.write_bytes(small_image.elf.read_bytes()[:3000])
    err = _error(p)
    assert "past the end" in err.what and err.offset is not None


def test_section_past_the_end(small_image, tmp_path):
    i = _index_of(small_image.elf, ".data")
    p = _patched(small_image.elf, tmp_path, "big.elf",
                 lambda d: struct.pack_into("<I", d, _shdr(d, i) + 20, 0x7FFFFFF))
    err = _error(p)
    assert ".data" in err.what and err.offset == _shdr(bytearray(p.read_bytes()), i)


def test_symbol_name_out_of_range(small_image, tmp_path):
    elf = ElfFile.from_path(small_image.elf)
    symoff = int(elf.sections[elf.symtab_index]["sh_offset"])
    p = _patched(small_image.elf, tmp_path, "names.elf",
                 lambda d: struct.pack_into("<I", d, symoff + 5 * 16, 0xFFFFFF))
    err = _error(p)
    assert "name offset" in err.what and err.offset == symoff + 5 * 16


def test_symbol_section_index_out_of_range(small_image, tmp_path):
    elf = ElfFile.from_path(small_image.elf)
    symoff = int(elf.sections[elf.symtab_index]["sh_offset"])
    p = _patched(small_image.elf, tmp_path, "shndx.elf",
                 lambda d: struct.pack_into("<H", d, symoff + 5 * 16 + 14, 0x4000))
    assert "section index" in _error(p).what


@pytest.mark.parametrize("text", ["hello\nworld\n",
                                  "Memory Configuration\n\nName Origin Length\nFLASH zz 0x10\n"])
def test_map_that_does_not_parse(small_image, tmp_path, text):
    m = tmp_path / "bad.map"
    m.write_text(text)
    err = _error(small_image.elf, map_path=str(m))
    assert err.path == str(m)


def test_cli_bad_map_exit_2(small_image, tmp_path, capsys):
    m = tmp_path / "bad.map"
    m.write_text("not a map\n")
    assert main(["analyze", str(small_image.elf), "--map", str(m)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("weaklink: error: ") and str(m) in err and err.count("\n") == 1


def test_missing_file(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "nope.elf")]) == 2
    assert "no such file" in capsys.readouterr().err


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_images(small_image, tmp_path, data):
    _mutate_and_analyze(small_image, tmp_path, data)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_mapped_images(small_image, tmp_path, mapped, data):
    _mutate_and_analyze(small_image, tmp_path, data)


def _mutate_and_analyze(small_image, tmp_path, data):
    raw = bytearray(small_image.elf.read_bytes())
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[:data.draw(st.integers(0, len(raw)), label="cut")]
    flips = data.draw(st.lists(st.tuples(st.integers(0, max(len(raw) - 1, 0)),
                                         st.integers(0, 255)), max_size=8), label="flips")
    for pos, byte in flips:
        if pos < len(raw):
            raw[pos] = byte
    p = tmp_path / "fuzz.elf"
    p.write_bytes(bytes(raw))
    try:
        report = analyze(str(p), symbols=["table_ptr", "f", "weak_v"])
    except InputError as err:
        assert err.path == str(p)
        return
    report.to_json()
    render(report)


def _structural_offsets(path) -> list[int]:
    """Byte offsets of the ELF header, program and section headers and the symbol table:
    the bytes whose corruption reaches the parser rather than a payload."""
    elf = ElfFile.from_path(path)
    h = elf.header
    spans = [(0, S.EHDR_SIZE),
             (int(h["e_phoff"]), int(h["e_phnum"]) * S.PHDR_SIZE),
             (int(h["e_shoff"]), int(h["e_shnum"]) * S.SHDR_SIZE)]
    sym = elf.sections[elf.symtab_index]
    spans.append((int(sym["sh_offset"]), int(sym["sh_size"])))
    return [o for start, size in spans for o in range(start, start + size)]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_fuzz_structural_bytes(small_image, tmp_path, data):
    raw = bytearray(small_image.elf.read_bytes())
    where = _structural_offsets(small_image.elf)
    for _ in range(data.draw(st.integers(1, 6), label="count")):
        raw[data.draw(st.sampled_from(where))] = data.draw(st.integers(0, 255))
    p = tmp_path / "fuzz.elf"
    p.write_bytes(bytes(raw))
    try:
        report = analyze(str(p), symbols=["table_ptr", "fptr", "scratch_buf"])
    except InputError as err:
        assert err.path == str(p)
        return
    report.to_json()
    render(report)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_fuzz_fixture_image(firmware, tmp_path, data):
    """The same over a real fixture image (C++, DWARF 5, Corstone-320 map) with its map."""
    o = firmware["weak-near-miss-u85"]
    raw = bytearray(o.elf.read_bytes())
    where = _structural_offsets(o.elf)
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[:data.draw(st.integers(0, len(raw)), label="cut")]
    for _ in range(data.draw(st.integers(1, 6), label="count")):
        pos = data.draw(st.one_of(st.sampled_from(where), st.integers(0, len(raw))))
        if pos < len(raw):
            raw[pos] = data.draw(st.integers(0, 255))
    p = tmp_path / "fuzz.elf"
    p.write_bytes(bytes(raw))
    try:
        report = analyze(str(p), map_path=str(o.map),
                         symbols=["ethosu_fast_scratch", "dedicated_sram", "main"],
                         expect_region={"ethosu_fast_scratch": "SRAM"})
    except InputError as err:
        assert err.path == str(p)
        return
    report.to_json()
    render(report)


def _dwarf_offsets(path) -> list[int]:
    """Byte offsets of .debug_info, .debug_abbrev and .debug_aranges."""
    elf = ElfFile.from_path(path)
    out = []
    for name in (".debug_info", ".debug_abbrev", ".debug_aranges"):
        sh = elf.shdrs[elf.find_section(name)]
        out += range(sh.sh_offset, sh.sh_offset + sh.sh_size)
    return out


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_fuzz_dwarf_sections(firmware, tmp_path, data):
    """Damaged DWARF (unit lengths, abbreviation codes and forms, sibling references that
    point backwards, aranges) under the unit walks, the C++ facts and the attribution of
    every symbol: a report, never an exception or a loop."""
    o = firmware["weak-example-u85"]
    raw = bytearray(o.elf.read_bytes())
    where = _dwarf_offsets(o.elf)
    for _ in range(data.draw(st.integers(1, 12), label="count")):
        raw[data.draw(st.sampled_from(where))] = data.draw(st.integers(0, 255))
    p = tmp_path / "fuzz.elf"
    p.write_bytes(bytes(raw))
    report = analyze(str(p), symbols=["ethosu_fast_scratch", "main"])
    report.to_json()
    render(report)


@pytest.fixture
def mapped(monkeypatch):
    """Every ELF file, however small, mapped rather than read (weaklink.read.elf.MAP_FROM)."""
    from weaklink.read import elf as elf_module
    monkeypatch.setattr(elf_module, "MAP_FROM", 0)


def test_a_mapped_image_reports_as_a_read_one(small_image, monkeypatch):
    read = analyze(str(small_image.elf), symbols=["table_ptr", "f", "weak_v"]).to_json()
    from weaklink.read import elf as elf_module
    monkeypatch.setattr(elf_module, "MAP_FROM", 0)
    assert not isinstance(ElfFile.from_path(small_image.elf).data, bytes)     # it is mapped
    assert analyze(str(small_image.elf), symbols=["table_ptr", "f", "weak_v"]).to_json() == read


def test_mapped_bad_input_is_one_error(small_image, tmp_path, mapped):
    cut = tmp_path / "cut.elf"
    cut.write_bytes(small_image.elf.read_bytes()[:3000])
    assert "past the end" in _error(cut).what
    empty = tmp_path / "empty.elf"          # mmap refuses an empty file: read, then refused
    empty.write_bytes(b"")
    assert "not an ELF" in _error(empty).what
    assert "is a directory" in _error(tmp_path).what
    assert "no such file" in _error(tmp_path / "nope.elf").what


def test_mapped_input_is_never_written(small_image, tmp_path, mapped):
    p = tmp_path / "t.elf"
    p.write_bytes(small_image.elf.read_bytes())
    before = (p.read_bytes(), p.stat().st_mtime_ns)
    analyze(str(p), symbols=["table_ptr"]).to_json()
    assert (p.read_bytes(), p.stat().st_mtime_ns) == before

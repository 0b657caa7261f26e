"""Archive, object and map readers; bad input reported as InputError / exit 2."""
from __future__ import annotations

import json

import pytest
from snippets import comm, data, func, ref, start

import weaklink.resolve
import weaklink.cli as cli
from weaklink.errors import InputError, UsageError
from weaklink.read.archive import Archive
from weaklink.read.ldmap import parse_map, parse_map_text
from weaklink.read.objfile import K_COMMON, K_DEFINED, K_UNDEF, ObjectFile


@pytest.fixture
def lib(sc):
    sc.asm("m.o", start("q1"))
    sc.asm("q1.o", func("q1") + ref("q2"))
    sc.asm("a_member_with_a_long_name.o", data("q2") + comm("c", 8))
    sc.archive("libq.a", ["q1.o", "a_member_with_a_long_name.o"])
    return sc


def run_cli(monkeypatch, capsys, *argv):
    monkeypatch.setattr(cli, "COMMANDS", ("link",))   # only this subcommand is needed here
    code = cli.main(["link", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_armap_and_long_names_lazy_members(lib):
    ar = Archive.from_path(lib.root / "libq.a", "libq.a")
    assert ar.armap_names == ["q1", "q2", "c"]
    assert ar.member(ar.armap_offsets[1]).name == "a_member_with_a_long_name.o"
    assert ar._objects == {}                        # nothing parsed before it is needed
    obj = ar.object(ar.armap_offsets[0])
    assert obj.name == "libq.a(q1.o)" and list(ar._objects) == [ar.armap_offsets[0]]
    assert [m.name for m in ar.members()] == ["q1.o", "a_member_with_a_long_name.o"]


def test_object_view(lib):
    obj = ObjectFile.from_path(lib.root / "a_member_with_a_long_name.o")
    kinds = {r[0]: r[1] for r in obj.rows}
    assert kinds == {"q2": K_DEFINED, "c": K_COMMON}
    assert obj.is_global_data_definition("q2") and not obj.is_global_data_definition("c")
    q1 = ObjectFile.from_path(lib.root / "q1.o")
    assert {r[0]: r[1] for r in q1.rows}["q2"] == K_UNDEF
    assert q1.relocated_names() == {"q2"}


def test_map_parser_reads_every_table(lib):
    run = lib.ld(["-e", "_start", "m.o", "libq.a", "-u", "c"])
    m = parse_map(lib.root / "out.map")
    assert [(x.member, x.file, x.symbol) for x in m.archive_members] == [
        ("libq.a(q1.o)", "m.o", "q1"),
        ("libq.a(a_member_with_a_long_name.o)", "libq.a(q1.o)", "q2")]
    assert [(c.symbol, c.size) for c in m.commons] == [("c", 8)]
    assert m.memory[0].name == "*default*" and m.memory[0].length == 0xFFFFFFFF
    assert m.loads[:2] == ("m.o", "libq.a")
    assert m.cref["q2"][0] == "libq.a(a_member_with_a_long_name.o)"
    assert run.map == m


def test_map_parser_memory_regions_and_groups():
    text = ("Memory Configuration\n\nName             Origin             Length             "
            "Attributes\nFLASH            0x08000000         0x00010000         xr\n"
            "*default*        0x00000000         0xffffffff\n\nLinker script and memory map\n\n"
            "LOAD m.o\nSTART GROUP\nLOAD liba.a\nEND GROUP\n")
    m = parse_map_text(text)
    assert m.memory[0].name == "FLASH" and m.memory[0].origin == 0x08000000
    assert m.memory[0].attributes == "xr"
    assert m.load_lines == ("m.o", "START GROUP", "liba.a", "END GROUP")


def test_map_parser_rejects_garbage(tmp_path):
    bad = tmp_path / "bad.map"
    bad.write_text("Memory Configuration\n\nName Origin Length\nFLASH zz 0x10\n")
    with pytest.raises(InputError, match="line 4"):
        parse_map(bad)
    bad.write_text("hello\n")
    with pytest.raises(InputError, match="not a GNU ld map file"):
        parse_map(bad)


@pytest.mark.parametrize("mutate,what", [
    (lambda b: b[:30], "truncated ELF header"),
    (lambda b: b[:-8], "past the end of the file"),
    (lambda b: b"\x7fELF\x02" + b[5:], "ELF class 2"),
])
def test_corrupt_object(lib, mutate, what):
    (lib.root / "bad.o").write_bytes(mutate((lib.root / "q1.o").read_bytes()))
    with pytest.raises(InputError, match=what) as exc:
        weaklink.resolve.link(["bad.o"], cwd=lib.root)
    assert exc.value.path == "bad.o"


def _patch(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


@pytest.mark.parametrize("mutate,what", [
    (lambda b: b"!<arcX>\n" + b[8:], "not an archive"),
    (lambda b: _patch(b, 8 + 58, b"XX"), "bad member header"),
    (lambda b: _patch(b, 8 + 48, b"99999999  "), "runs past the end"),
    (lambda b: _patch(b, 8 + 48, b"12x4      "), "bad member size"),
])
def test_corrupt_archive(lib, mutate, what):
    (lib.root / "bad.a").write_bytes(mutate((lib.root / "libq.a").read_bytes()))
    with pytest.raises(InputError, match=what):
        weaklink.resolve.link(["-e", "_start", "m.o", "bad.a"], cwd=lib.root)


def test_symbol_name_offset_out_of_range(lib):
    obj = ObjectFile.from_path(lib.root / "q1.o")
    sh = obj.elf.shdrs[obj.elf.symtab_index]
    data = bytearray((lib.root / "q1.o").read_bytes())
    last = sh.sh_offset + sh.sh_size - 16
    data[last:last + 4] = (0x7FFFFFF0).to_bytes(4, "little")
    (lib.root / "bad.o").write_bytes(bytes(data))
    with pytest.raises(InputError, match="name offset .* out of range") as exc:
        weaklink.resolve.link(["bad.o"], cwd=lib.root)
    assert exc.value.offset == last


def test_cli_bad_input_exit_2_no_traceback(lib, monkeypatch, capsys):
    (lib.root / "bad.o").write_bytes((lib.root / "q1.o").read_bytes()[:40])
    monkeypatch.chdir(lib.root)
    code, out, err = run_cli(monkeypatch, capsys, "bad.o")
    assert code == 2 and out == ""
    assert err == "weaklink: error: bad.o: truncated ELF header: 40 bytes, expected 52 (at offset 0)\n"
    code, _, err = run_cli(monkeypatch, capsys, "missing.o")
    assert code == 2 and err == "weaklink: error: missing.o: No such file or directory\n"


def test_cli_unknown_option_exit_2(monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "--frobnicate", "m.o")
    assert code == 2 and "unrecognized ld option '--frobnicate'" in err
    with pytest.raises(UsageError):
        weaklink.resolve.link(["-shared", "m.o"])


def test_cli_json_contract_and_exit_codes(lib, monkeypatch, capsys):
    monkeypatch.chdir(lib.root)
    code, out, _ = run_cli(monkeypatch, capsys, "--json", "-e", "_start", "-o", "x.elf",
                           "-Map=x.map", "--gc-sections", "--cref", "m.o", "libq.a")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["schema_version"] == 1
    assert list(doc)[:8] == ["schema_version", "flavor", "ok", "errors", "warnings", "loaded",
                             "extracted", "symbols"]
    assert doc["extracted"][0] == {"member": "libq.a(q1.o)", "file": "m.o", "symbol": "q1"}
    assert doc["symbols"]["c"] == {"binding": "common", "file": "libq.a(a_member_with_a_long_name.o)",
                                   "size": 8, "section": "COMMON", "value": None, "kept": False}
    code, out, _ = run_cli(monkeypatch, capsys, "--json", "-e", "_start", "libq.a", "m.o")
    doc = json.loads(out)
    assert code == 1 and doc["errors"] == [{
        "kind": "undefined-reference", "symbol": "q1", "file": "m.o",
        "message": "undefined reference to `q1'"}]


def test_cli_human_output(lib, monkeypatch, capsys):
    monkeypatch.chdir(lib.root)
    code, out, _ = run_cli(monkeypatch, capsys, "--why-extract", "--trace-symbol", "q2",
                           "-e", "_start", "m.o", "libq.a")
    assert code == 0
    assert "libq.a(q1.o)                  m.o (q1)" in out
    assert "ld: libq.a(q1.o): reference to q2" in out


def test_cref_long_names_and_ld_stderr_forms():
    long = "a_very_long_symbol_name_that_is_longer_than_fifty_characters_xx"
    text = ("Cross Reference Table\n\nSymbol                                            File\n"
            f"{long} ld2.o\n{' ' * 50}lm.o\n")
    assert parse_map_text(text).cref == {long: ("ld2.o", "lm.o")}
    from weaklink.scenario import parse_ld_stderr
    errors, trace, more = parse_ld_stderr(
        "arm-none-eabi-ld: r.o: in function `_start':\n"
        "(.text+0x0): undefined reference to `y'\n"
        "arm-none-eabi-ld: (.text+0x4): undefined reference to `z'\n"
        "arm-none-eabi-ld: libd.a(d2.o):(.data+0x0): multiple definition of `x'; "
        "libd.a(d1.o):(.data+0x0): first defined here\n"
        "arm-none-eabi-ld: o0.o:(.text+0x10): more undefined references to `u9' follow\n"
        "arm-none-eabi-ld: m.o: reference to y\n")
    assert errors == {("undefined-reference", "y", "r.o"), ("undefined-reference", "z", "r.o"),
                      ("multiple-definition", "x", "libd.a(d2.o)")}
    assert trace == ("m.o: reference to y",) and more == {("u9", "o0.o")}


def test_response_file_arguments(lib, monkeypatch):
    monkeypatch.chdir(lib.root)
    (lib.root / "args.rsp").write_text("-e _start\nm.o 'libq.a'\n")
    res = weaklink.resolve.link(["@args.rsp"])
    assert res.ok and [x.member for x in res.extracted][0] == "libq.a(q1.o)"

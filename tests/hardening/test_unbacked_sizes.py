"""Sizes the file does not back fail at once with one line, and damaged npz files are named."""
from __future__ import annotations

import io
import struct
import zipfile

import numpy as np
import pytest

from npu.cli import main as npu_main
from npu.errors import InputError
from npu.read.npz import read_npz
from weaklink.read.elf import ElfFile
from weaklink.read import elfstructs as S


def _tiny_elf(sh_type: int, sh_size: int) -> bytes:
    """A 1 KB ELF32 ARM file with a null section, one section of the given type and size,
    and a section-name table."""
    names = b"\0.big\0.shstrtab\0"
    shoff = 52
    body = bytearray(1024)
    hdr = struct.pack("<16sHHIIIIIHHHHHH", b"\x7fELF\x01\x01\x01" + bytes(9), S.ET_EXEC, S.EM_ARM,
                      1, 0, 0, shoff, 0, 52, 0, 0, 40, 3, 2)
    body[:52] = hdr
    strtab_off = shoff + 3 * 40
    sections = [bytes(40),
                struct.pack("<10I", 1, sh_type, S.SHF_ALLOC, 0x30000000, 200, sh_size, 0, 0, 4, 0),
                struct.pack("<10I", 6, S.SHT_STRTAB, 0, 0, strtab_off, len(names), 0, 0, 1, 0)]
    body[shoff:shoff + 120] = b"".join(sections)
    body[strtab_off:strtab_off + len(names)] = names
    return bytes(body)


def test_4gib_section_in_1kb_file_fails_at_once():
    with pytest.raises(InputError) as e:
        ElfFile(_tiny_elf(S.SHT_PROGBITS, 0xFFFFFFF0), "big.elf")
    assert "runs past the end of the file (1024 bytes)" in str(e.value)


def test_4gib_nobits_section_is_never_materialised():
    elf = ElfFile(_tiny_elf(S.SHT_NOBITS, 0xFFFFFFF0), "big.elf")
    assert elf.section_bytes(1, 16, 8) == bytes(8)      # a bounded read: zeros
    with pytest.raises(InputError, match="NOBITS of 4294967280 bytes"):
        elf.section_bytes(1)


def _npz(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in members.items():
            z.writestr(name, body)
    return out.getvalue()


def _header(text: bytes) -> bytes:
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def _npy(array) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


GOOD = {"cmd_data.npy": _npy(np.array(b"COP1" + bytes(28))),
        "weight_data.npy": _npy(np.array(b"\1" * 64)),
        "scratch_shape.npy": _npy(np.array([256])),
        "scratch_fast_shape.npy": _npy(np.array([0]))}


def test_a_good_synthetic_npz_reads():
    cmd, sizes, ios, weights = read_npz(_npz(GOOD), "m.npz")
    assert cmd[:4] == b"COP1" and sizes == {0: 64, 1: 256}
    assert ios == ((), ()) and weights == b"\1" * 64


@pytest.mark.parametrize("change, message", [
    ({"weight_data.npy": _npy(np.array([1.5]))}, "dtype '<f8', expected kind S"),
    ({"scratch_shape.npy": _npy(np.array([-4]))}, "negative dimension -4"),
    ({"scratch_shape.npy": _npy(np.array([1 << 30, 1 << 30]))}, "more than an NPU region can address"),
    ({"cmd_data.npy": _header(b"{'descr': '|S8', 'fortran_order': False, 'shape': (99999999999,), }")},
     "needs 799999999992 bytes, the member holds 0"),
    ({"cmd_data.npy": _header(b"{'descr': oops}")}, "bad .npy header"),
    ({"cmd_data.npy": b"\x93NUMPY\x01\x00\xff\xff{"}, "runs past the member"),
    ({"cmd_data.npy": b"NOTNPY"}, "expected the .npy magic"),
    ({"scratch_fast_shape.npy": None}, "npz is missing keys: scratch_fast_shape"),
    ({"scratch_fast_shape.npy": _npy(np.array([64])),
      "scratch_fast_region.npy": _npy(np.array(9))}, "expected one region number 0-7"),
])
def test_malformed_npz_members(change, message):
    members = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(InputError) as e:
        read_npz(_npz(members), "m.npz")
    assert message in str(e.value) and str(e.value).startswith("m.npz: ")


def test_bad_crc_and_truncated_zip_are_one_line(tmp_path, capsys):
    data = bytearray(_npz(GOOD))
    at = data.index(b"\1" * 64)
    data[at] ^= 0xFF                                    # CRC no longer matches
    for name, body in (("crc.npz", bytes(data)), ("cut.npz", bytes(data[:len(data) // 2]))):
        path = tmp_path / name
        path.write_bytes(body)
        assert npu_main(["decode", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"npu: error: {path}: "), err
        assert path.read_bytes() == body


def test_duplicate_member_is_named():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z, pytest.warns(UserWarning, match="Duplicate name"):
        for name, body in [*GOOD.items(), ("cmd_data.npy", GOOD["cmd_data.npy"])]:
            z.writestr(name, body)
    with pytest.raises(InputError, match="member cmd_data.npy appears twice"):
        read_npz(out.getvalue(), "m.npz")

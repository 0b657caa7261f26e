"""What the full fuzz run found, pinned: each case is the mutant the fuzz script reported."""
from __future__ import annotations

import pytest

import weaklink.cli as cli
from npu.errors import InputError, one_line
from weaklink import toolchain
from weaklink.builders import firmware as fixtures
from weaklink.read.elf import ElfFile

NPU_U85 = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
           "--memory-mode", "Dedicated_Sram_384KB"]


def test_error_lines_escape_what_a_file_put_in_them():
    # a section name with a vertical tab (a line break for str.splitlines) and U+2028
    err = InputError("x.o", "section 17 (\x02\x0bS\u2028) runs past the end\nof the file", 3488)
    text = one_line(err)
    assert text.splitlines() == [text]
    assert text == "x.o: section 17 (\\x02\\x0bS\\u2028) runs past the end\\nof the file (at offset 3488)"


@pytest.mark.skipif(not toolchain.available(), reason="needs the arm-none-eabi toolchain")
def test_corrupt_dwarf_string_in_check_is_one_line(tmp_path, capsys):
    """fuzz #9778 (seed 1): one byte of .debug_str set to 0xff, inside the name of another
    call origin than the fast-memory rule's callee; a reader that walked every DIE decoded it
    as UTF-8 and raised UnicodeDecodeError. The call-site question reads only the units that
    name its callee: the damaged name is not read, and the verdict is the undamaged image's."""
    outcome = next(o for o in fixtures.build() if o.variant.name == "weak-custom-u55")
    elf_path = outcome.cwd / outcome.elf
    elf = ElfFile.from_path(elf_path)
    data = bytearray(elf.data)
    i = elf.find_section(".debug_str")
    start = elf.shdrs[i].sh_offset
    strings = bytes(data[start:start + elf.shdrs[i].sh_size])
    # The fuzz run's byte fell inside a call origin's name; where that name sits in .debug_str
    # depends on the build's paths, so the test finds it rather than using the run's offset.
    at = start + strings.index(b"\0ethosu_invoke_v3\0") + 1
    data[at] = 0xFF
    bad = tmp_path / "bad.elf"
    bad.write_bytes(bytes(data))
    other = next(o for o in fixtures.build() if o.variant.name == "weak-example-u85")
    good = tmp_path / "good.elf"
    good.write_bytes(bytes(elf.data))
    outputs = []
    for path in (good, bad):
        status = cli.main(["check", str(path), *NPU_U85, "--map", str(other.cwd / other.map),
                           "--json"])
        out, err = capsys.readouterr()
        assert status == 1 and err == ""
        outputs.append(out.replace(path.name, "image.elf"))
    assert outputs[0] == outputs[1]


def test_short_scale_stream_is_an_input_error():
    """fuzz #9959 (seed 1): a blob whose scale stream is shorter than 10 bytes per channel."""
    from npu.functional.scale import decode_scales
    with pytest.raises(InputError, match="scale stream of 32 bytes: 16 OFM channels need 160"):
        decode_scales(bytes(32), 16)


def test_output_element_size_without_a_dtype_is_an_input_error():
    """fuzz #1994 (seed 1): an npz whose output_elem_size member was rewritten to 0."""
    from types import SimpleNamespace

    from npu.functional import _read_outputs
    from npu.read.blob import VelaIO
    model = SimpleNamespace(path="m.npz", outputs=(VelaIO((1, 4, 4, 8), 0, 0, 1),))
    with pytest.raises(InputError, match="output 0: element size 0, expected 1, 2, 4"):
        _read_outputs(None, model)


def test_functional_engine_errors_name_the_model_file():
    """The memory, weight and scale decoders raise without a file name; the error line of a
    functional run names the model it was running."""
    from types import SimpleNamespace

    import numpy as np

    from npu.functional import run_functional
    from npu.hw import accelerator
    from npu.read.blob import VelaIO
    # the output lies past the end of region 1: the address space reports it, without a path
    model = SimpleNamespace(path="m.npz", weight_data=b"\0" * 16, commands=(),
                            inputs=(VelaIO((1, 1, 1, 4), 1, 0, 1),),
                            outputs=(VelaIO((1, 4, 4, 8), 1, 0, 1),), container="npz")
    with pytest.raises(InputError) as info:
        run_functional(model, accelerator("ethos-u55-128"), {0: (0, 16), 1: (0x1000, 64)},
                       [np.zeros((1, 1, 1, 4), np.int8)])
    assert info.value.path == "m.npz"
    assert one_line(info.value) == "m.npz: output 0: bytes 0..128 of region 1 are outside its 64 bytes"

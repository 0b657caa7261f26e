"""Zero false warnings: the noise fixture (weaklink.builders.noise) carries each trait that
made `analyze` warn falsely on Zephyr's, Himax's and Alif's real images, beside the genuine case
that must stay, built with the real arm-none-eabi-gcc/g++ and ld."""
from __future__ import annotations

import re
import shutil

import pytest

from weaklink import toolchain
from weaklink.analyze import analyze, extraction
from weaklink.builders.noise import build_noise
from weaklink.read.ldmap import parse_map

OVERRIDES = "override-not-extracted"


@pytest.fixture(scope="module")
def noise():
    if not toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed")
    return build_noise()


def _not_extracted(report) -> dict[str, str]:
    return {f.symbol: f.message for f in report.findings if f.rule == OVERRIDES}


def test_only_the_lost_override_is_reported(noise):
    found = _not_extracted(analyze(str(noise.elf), map_path=str(noise.map)))
    # NPU_IRQHandler: the member exists for it, and the vector table (kept) names it.
    # UART0/1_IRQHandler: their member is a driver whose API nothing calls.
    # read: only random_seed names it, and --gc-sections removes it; close: nothing names it.
    # __errno: the platform's weak one stands ahead of the C library's (libc.a).
    assert set(found) == {"NPU_IRQHandler"}
    assert "libirq.a(npu_irq.o)" in found["NPU_IRQHandler"]
    assert "blocked-by-weak" in found["NPU_IRQHandler"]


def test_the_same_from_the_link_inputs(noise):
    inputs = [a for a in noise.args if a.endswith((".o", ".a")) or "whole-archive" in a]
    report = analyze(str(noise.elf), map_path=str(noise.map), link_dir=str(noise.cwd),
                     link_inputs=["-T", noise.args[1], "--gc-sections", *inputs])
    assert set(_not_extracted(report)) == {"NPU_IRQHandler"}


def test_map_rebuilds_whole_archive(noise):
    args = extraction.args_from_map(parse_map(str(noise.map)))
    k = args.index("libplat.a")
    assert args[k - 1:k + 2] == ["--whole-archive", "libplat.a", "--no-whole-archive"]
    assert "libuart.a" in args and args[args.index("libuart.a") - 1] != "--whole-archive"


def _weak_defaults(report) -> set[str]:
    return set(report.table.names(report.weak_rows))


def test_inline_functions_are_not_weak_defaults(noise):
    report = analyze(str(noise.elf), map_path=str(noise.map))
    vague = dict(zip(report.table.names(list(report.vague)), report.vague.values()))
    assert {"_ZN3dsp6clamp8Ei", "_ZN3dsp9magnitudeEf"} <= set(vague)
    assert "COMDAT group" in vague["_ZN3dsp6clamp8Ei"]          # the input object says so
    # the genuine weak defaults stay: C++ and C alike
    assert {"_ZN3app7on_idleEv", "NPU_IRQHandler", "__errno", "read"} <= _weak_defaults(report)


def test_inline_functions_without_the_objects(noise, tmp_path):
    """The map moved where its LOAD inputs are not found: the map's discarded copies and DWARF
    still tell."""
    shutil.copy(noise.map, tmp_path / "noise.map")
    report = analyze(str(noise.elf), map_path=str(tmp_path / "noise.map"))
    vague = dict(zip(report.table.names(list(report.vague)), report.vague.values()))
    assert "discards another unit's copy" in vague["_ZN3dsp6clamp8Ei"]
    assert "defined in a header (DWARF" in vague["_ZN3dsp9magnitudeEf"]
    assert "_ZN3app7on_idleEv" in _weak_defaults(report)


def _ld_usage(text: str) -> dict[str, int]:
    units = {"B": 1, "KB": 1024, "MB": 1 << 20, "GB": 1 << 30}
    return {m[1]: int(m[2]) * units[m[3]]
            for m in re.finditer(r"^\s*(\w+):\s+(\d+) (B|KB|MB|GB)", text, re.M)}


def test_region_use_is_lds_print_memory_usage(noise):
    ld = _ld_usage(noise.memory_usage)
    assert ld["FLASH"] > 0 and ld["RAM"] > 0 and ld["ITCM"] == ld["DTCM"] == 0
    report = analyze(str(noise.elf), map_path=str(noise.map))
    got = {name: (report.usage[name].used if name in report.usage else 0) for name in ld}
    assert got == ld
    assert report.regions.name_at(0x10000000) == "FLASH"          # symbols too
    assert any("FLASH and ITCM" in n for n in report.notes)

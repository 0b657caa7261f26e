"""The driver's fast-memory rule on ExecuTorch firmware: the weak-custom-u85 fixture (weak
default 0/0, hang) relinked with a platform object that passes fast memory to ethosu_init."""
from __future__ import annotations

import pytest

from weaklink import toolchain
from weaklink.check import check

PLATFORM = r"""
#include <stdint.h>
#include "ethosu_driver.h"
static uint8_t npu_fast[FAST_BYTES] __attribute__((section(".bss.ethosu_scratch"), aligned(16)));
void platform_npu_init(void)
{
    ethosu_init(ethosu_reserve_driver(), (void *)0x40004000, npu_fast, sizeof(npu_fast), 0, 1);
}
"""


def _relink(outcome, tmp_path, fast_bytes):
    from weaklink.builders import firmware as fixtures

    src = tmp_path / "platform.c"
    src.write_text(PLATFORM)
    obj = tmp_path / "platform.o"
    done = toolchain.run("gcc", [*toolchain.CPU_FLAGS, "-O2", "-g", "-ffreestanding",
                                 f"-I{fixtures.FIRMWARE / 'include'}",
                                 f"-DFAST_BYTES={fast_bytes}", "-c", src, "-o", obj])
    assert done.returncode == 0, done.stderr
    args = list(outcome.ld_args)
    out = tmp_path / "fw.elf"
    args[args.index("-o") + 1] = str(out)
    args[args.index("-Map") + 1] = str(tmp_path / "fw.map")
    done = toolchain.run("ld", [*args[:-1], str(obj), args[-1]], cwd=outcome.cwd)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("fast_bytes, verdict, rules", [
    (0x60000, "ok", set()),
    # the weak default's size 0 passes the driver's check; the stream then runs past 16 KB
    (0x4000, "error", {"fast-scratch-too-small"}),
])
def test_fast_memory_replaces_the_weak_default(firmware, tmp_path, fast_bytes, verdict, rules):
    elf = _relink(firmware["weak-custom-u85"], tmp_path, fast_bytes)
    report = check(elf, accelerator="ethos-u85-256", system_config="Ethos_U85_SYS_DRAM_Mid",
                   memory_mode="Dedicated_Sram_384KB")
    fast = report.table.fast_memory
    assert report.table.binding == "executorch-arm"
    assert (fast.symbol, fast.size) == ("npu_fast", fast_bytes)
    assert fast.source.startswith("DWARF call site")
    base = report.table.base(2)
    assert base.address == fast.address and base.note.startswith("ethosu_init's fast memory")
    assert {f.rule for f in report.findings} == rules
    assert report.verdict == verdict
    if verdict == "error":
        assert "out of bounds" in report.run.diagnosis

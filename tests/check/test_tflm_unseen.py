"""`weaklink check` on a TFLM-shaped firmware that is not among the fixtures: its own source,
other symbol names, the model array in .rodata, the arena a plain static (no section
attribute), fast memory passed from a helper function, built at -Os. Nothing in weaklink knows
these names; the bases and the verdict must still come out right."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from weaklink import toolchain
from weaklink.builders import firmware as fixtures, tflm as fixtures_tflm
from weaklink.check import check

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflm_oracle import buffer_offsets, nm  # noqa: E402

SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
#include "ethosu_driver.h"

extern const uint8_t npu_model_blob[];
static uint8_t npu_work_arena[96 * 1024] __attribute__((aligned(16)));
#ifdef WITH_FAST
static uint8_t sram_pool[256 * 1024] __attribute__((section(".bss.ethosu_scratch"), aligned(16)));
#define POOL sram_pool
#define POOL_SIZE sizeof(sram_pool)
#else
#define POOL 0
#define POOL_SIZE 0
#endif
volatile uint32_t offsets[8], sizes[8];
/* A decoy: the identifier at a 4-byte boundary with a root offset, but no flatbuffer. */
__attribute__((aligned(4), used)) const char decoy[] = "\x08\0\0\0TFL3 not a model at all";

__attribute__((noinline)) static struct ethosu_driver *platform_npu_init(void)
{
    struct ethosu_driver *drv = ethosu_reserve_driver();
    ethosu_init(drv, (void *)0x40004000, POOL, POOL_SIZE, 1, 1);
    return drv;
}

int main(void)
{
    struct ethosu_driver *drv = platform_npu_init();
    uint64_t base[4];
    size_t size[4];
    base[0] = (uintptr_t)(npu_model_blob + offsets[0]);
    size[0] = sizes[0];
    for (int i = 1; i < 4; ++i) {
        base[i] = (uintptr_t)(npu_work_arena + offsets[i]);
        size[i] = sizes[i];
    }
    return ethosu_invoke_v3(drv, npu_model_blob + offsets[4], (int)sizes[4], base, size, 4, 0);
}
"""


def _build(tmp_path: Path, with_fast: bool) -> tuple[Path, Path]:
    tflite = fixtures.vela_tflite("u85")
    model_c = fixtures_tflm.model_source(tflite, "npu_model_blob", ".rodata.npu_model",
                                         tmp_path / "npu_model.c")
    (tmp_path / "board.c").write_text(SOURCE)
    flags = [*toolchain.CPU_FLAGS, "-Os", "-g", "-ffunction-sections", "-fdata-sections",
             "-ffreestanding", f"-I{fixtures.FIRMWARE / 'include'}",
             *(["-DWITH_FAST"] if with_fast else [])]
    objs = []
    for src in (tmp_path / "board.c", model_c, fixtures.FIRMWARE / "driver/ethosu_driver.c",
                fixtures.FIRMWARE / "startup/startup.c"):
        obj = tmp_path / (src.stem + ".o")
        done = toolchain.run("gcc", [*flags, "-c", src, "-o", obj])
        assert done.returncode == 0, done.stderr
        objs.append(obj)
    script = fixtures._script(fixtures.TARGETS["u85"], fixtures.cache_dir())
    elf = tmp_path / "board.elf"
    done = toolchain.run("ld", ["-T", script, "-o", elf, *objs, toolchain.libgcc_path()])
    assert done.returncode == 0, done.stderr
    return elf, tflite


@pytest.mark.parametrize("with_fast, verdict", [(True, "ok"), (False, "ok")])
def test_unseen_tflm_firmware(cross_toolchain, tmp_path, with_fast, verdict):
    elf, tflite = _build(tmp_path, with_fast)
    syms = nm(elf)
    assert b"\x08\0\0\0TFL3 not a model" in elf.read_bytes() and syms["decoy"][0] % 4 == 0
    model = syms["npu_model_blob"][0]
    arena, arena_size = syms["npu_work_arena"]
    oracle = buffer_offsets(tflite.read_bytes())[0]
    report = check(elf, accelerator="ethos-u85-256", system_config="Ethos_U85_SYS_DRAM_Mid",
                   memory_mode="Dedicated_Sram_384KB")        # no map, no binding: detected
    t = report.table
    assert len(report.operators) == 1          # the decoy is read, rejected, skipped
    assert t.binding == "tflm-ethosu" and t.model_symbol == "npu_model_blob"
    assert t.base(0).address == model + oracle["weights"]
    assert t.stream_address == model + oracle["stream"]
    assert (t.arena.name, t.arena.address, t.arena.size) == ("npu_work_arena", arena, arena_size)
    assert t.base(1).arena == (arena, arena + arena_size)
    fast = t.fast_memory
    if with_fast:
        assert fast.source.startswith("DWARF call site")
        assert (fast.address, fast.size, fast.symbol) == (*syms["sram_pool"], "sram_pool")
        assert t.base(2).address == syms["sram_pool"][0]
    else:
        assert (fast.address, fast.size) == (0, 0)
        # no fast memory: region 2 stays on the arena, in BRAM (plain .bss on Corstone-320),
        # which the NPU reaches: not the SRAM Vela planned for, so a placement finding
        assert t.base(2).arena == (arena, arena + arena_size)
        assert {f.rule for f in report.findings} == {"region-not-in-assumed-memory"}
    assert report.verdict == verdict

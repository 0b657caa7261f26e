"""Build the TensorFlow Lite Micro-shaped fixture firmware (fixtures/firmware/tflm/).

Each variant embeds Vela's default .tflite of the fixture network as a 16-byte-aligned C array
(generated into the cache from the model generator's output), has a tensor arena, and passes
fast memory (or none) to `ethosu_init`. Same cache, same incremental steps as
weaklink.demo.build.firmware.

The `network-tester-*` variants reproduce what TFLM's own CI builds (network_tester with the
ethos-u operator on Corstone-300, Shared_Sram): every file at -Os, the image without DWARF
by default and with it for BUILD_TYPE=debug; ethosu_init(drv, base, fast, 384 KB, 1, 1), which gcc -Os
compiles to `ldr r2, [pc, #..]; strd r3, r3, [sp]; mov.w r3, #393216; bl ethosu_init`; Vela's
offline memory plan in the .tflite; the tensor arena in DDR and the fast memory in SRAM.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from weaklink import toolchain
from weaklink.cachedir import cache_dir
from weaklink.demo.build import firmware as fixtures
from weaklink.demo.build import firmware as fx
from weaklink.demo.build.firmware import TARGETS, _step
from weaklink.errors import InputError


def _tflm():
    """Read at call time: `weaklink demo --fixtures DIR` moves the sources (fixtures.use_fixtures)."""
    return fx.FIRMWARE / "tflm"
ARENA_BYTES = 0x20000


@dataclass(frozen=True)
class TflmVariant:
    name: str
    target: str                          # fixtures.TARGETS key
    fast_memory: int | None = None       # bytes passed to ethosu_init (None: NULL/0)
    fast_in_sram: bool = True            # section .bss.ethosu_scratch, else plain .bss
    opt: str = "-O2"
    model_array: str = "g_model"
    model_section: str = "network_model_sec"
    arena_name: str = "tensor_arena"
    arena_section: bool = True           # in .bss.tensor_arena
    fast_name: str = "ethosu_fast_memory"
    network: str = fixtures.FIXTURE_NETWORK   # the fixture network whose .tflite is embedded
    script: str | None = None            # a linker script path instead of the board's
    arena_in_ddr: bool | None = None     # the tensor arena's memory, when not the target's
    expected: str = ""                   # the verdict the tests assert
    extra: tuple[str, ...] = field(default=())
    debug: bool = True                   # DWARF in the image (TFLM's default build has none)
    secure: int = 0                      # ethosu_init's secure_enable (TFLM passes 1, 1)
    fast_via_pointer: bool = False       # ethosu_init gets the fast memory through a pointer variable
    offline_plan: bool = True            # False: the .tflite's OfflineMemoryAllocation is renamed away

    def defines(self) -> list[str]:
        flags = [f"-DMODEL_ARRAY={self.model_array}", f"-DARENA_NAME={self.arena_name}",
                 f"-DARENA_BYTES={ARENA_BYTES:#x}", f"-DFAST_MEMORY_NAME={self.fast_name}"]
        if not self.arena_section:
            flags.append("-DARENA_NO_SECTION")
        if self.fast_memory is not None:
            flags.append(f"-DFAST_MEMORY_BYTES={self.fast_memory:#x}")
            if self.fast_in_sram:
                flags.append("-DFAST_MEMORY_IN_SRAM")
        if self.fast_via_pointer:
            flags.append("-DFAST_MEMORY_VIA_POINTER")
        if self.secure:
            flags.append(f"-DNPU_SECURE={self.secure}")
        return flags


VARIANTS = (
    TflmVariant("fast-sram-u85", "u85", 0x60000, expected="ok"),
    TflmVariant("fast-sram-O0-u85", "u85", 0x60000, opt="-O0", expected="ok"),
    # no fast memory: region 2 stays on an arena tensor in DDR, which the NPU reaches through
    # its SRAM port (an assumption, printed): it completes, slower than Vela planned (a warning)
    TflmVariant("no-fast-u85", "u85", expected="ok"),
    TflmVariant("fast-too-small-u85", "u85", 0x4000, expected="error"),
    # fast memory without its section: plain .bss, which is DTCM on Corstone-300 (private to the
    # Cortex-M55: the NPU never gets an answer) and BRAM on Corstone-320 (reachable: an info)
    TflmVariant("fast-wrong-memory-u65", "u65", 0x60000, fast_in_sram=False, expected="hang"),
    TflmVariant("fast-bram-u85", "u85", 0x60000, fast_in_sram=False, expected="ok"),
    TflmVariant("shared-sram-u55", "u55", expected="ok"),
    # the arena in DDR under Shared_Sram, as TFLM's own CI runs network_tester on the FVP
    TflmVariant("arena-ddr-u55", "u55", arena_in_ddr=True, expected="ok"),
    # three ethos-u operators (two CPU ops in between): each one's table is checked
    TflmVariant("split-fast-sram-u85", "u85", 0x60000, network="split", expected="ok"),
    # TFLM's CI configuration (network_tester on the Corstone-300 FVP): -Os, the STRD before
    # the call, the offline plan, the arena in DDR (the NPU reaches DDR on the FVP)
    TflmVariant("network-tester-Os-u55", "u55", 0x60000, opt="-Os", debug=False, secure=1,
                arena_in_ddr=True, expected="ok", extra=("-DNPU_BASE_ADDRESS=0x48102000",)),
    TflmVariant("network-tester-debug-u55", "u55", 0x60000, opt="-Os", secure=1,
                arena_in_ddr=True, expected="ok", extra=("-DNPU_BASE_ADDRESS=0x48102000",)),
    # the fast memory reaches ethosu_init through a pointer variable: the check cannot tell
    TflmVariant("fast-via-pointer-u85", "u85", 0x60000, fast_via_pointer=True, expected="unknown"),
    # a .tflite without the offline plan: TFLM's planner places the arena tensors at run time
    TflmVariant("no-offline-plan-u55", "u55", offline_plan=False, expected="ok"),
)


@dataclass(frozen=True)
class TflmImage:
    variant: TflmVariant
    elf: Path
    map: Path
    tflite: Path                         # the Vela .tflite embedded as the model array

    @property
    def target(self):
        return TARGETS[self.variant.target]


def model_source(tflite: Path, array: str, section: str, out: Path) -> Path:
    """The .tflite as a C array, 16-byte aligned so the weights can be used in place."""
    data = tflite.read_bytes()
    rows = ",\n".join("  " + ", ".join(f"0x{b:02x}" for b in data[i:i + 16])
                      for i in range(0, len(data), 16))
    text = (f"/* Generated from {tflite.name} by weaklink.demo.build.tflm. */\n"
            f"const unsigned char {array}[] __attribute__((aligned(16), section(\"{section}\"))) = {{\n"
            f"{rows}\n}};\nconst unsigned int {array}_len = {len(data)};\n")
    if not out.exists() or out.read_text() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return out


# Renaming the metadata entry (same length, so the flatbuffer stays valid) hides the plan from
# TFLM, which looks it up by this exact name.
OFFLINE_PLAN, NO_OFFLINE_PLAN = b"OfflineMemoryAllocation", b"OfflineMemoryPlanRemove"


def without_offline_plan(tflite: Path, out: Path) -> Path:
    data = tflite.read_bytes()
    if data.count(OFFLINE_PLAN) != 1:
        raise InputError(tflite, f"expected one {OFFLINE_PLAN.decode()} metadata name")
    text = data.replace(OFFLINE_PLAN, NO_OFFLINE_PLAN)
    if not out.exists() or out.read_bytes() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(text)
    return out


def _compile(source: Path, out: Path, flags: list[str], opt: str, root: Path) -> Path:
    argv = [*toolchain.CPU_FLAGS, opt, "-g", "-ffunction-sections", "-fdata-sections",
            "-ffreestanding", "-Wall", "-Werror", f"-I{fx.FIRMWARE / 'include'}", f"-I{_tflm()}",
            *flags, "-c", source, "-o", out.relative_to(root)]
    _step("gcc", argv, out, [source, *_tflm().glob("*.h"), *(fx.FIRMWARE / "include").glob("*.h")], root)
    return out


def build_variant(v: TflmVariant, cache: str | Path | None = None) -> TflmImage:
    """Compile and link one variant; a failed step raises InputError with the tool's message."""
    root = cache_dir(cache)
    t = TARGETS[v.target]
    tflite = fixtures.vela_tflite(v.target, v.network, cache=cache)
    out = root / "tflm" / v.name
    if not v.offline_plan:
        tflite = without_offline_plan(tflite, out / tflite.name)
    src = model_source(tflite, v.model_array, v.model_section, out / "model_data.c")
    objs = [_compile(src, out / "model_data.o", [], "-O2", root),
            _compile(_tflm() / "app.c", out / "app.o", [*v.defines(), *v.extra], v.opt, root),
            _compile(_tflm() / "ethosu_kernel.c", out / "ethosu_kernel.o", [], v.opt, root),
            _compile(fx.FIRMWARE / "driver/ethosu_driver.c", out / "ethosu_driver.o", [], v.opt, root),
            _compile(fx.FIRMWARE / "startup/startup.c", out / "startup.o", [], "-O2", root)]
    if v.arena_in_ddr is not None and v.arena_in_ddr != t.arena_in_ddr:
        t = replace(t, name=f"{t.name}-arena-{'ddr' if v.arena_in_ddr else 'sram'}", arena_in_ddr=v.arena_in_ddr)
    script = Path(v.script) if v.script else fixtures._script(t, root)
    elf, map_ = out / f"{v.name}.elf", out / f"{v.name}.map"
    # no -g: gcc's code does not depend on -g, so linking the -g objects with --strip-debug
    # gives the image a build without -g would
    args = ["-T", script, "-Map", map_.relative_to(root), "-o", elf.relative_to(root),
            *([] if v.debug else ["--strip-debug"]),
            *(o.relative_to(root) for o in objs), toolchain.libgcc_path()]
    _step("ld", args, elf, [script, *objs], root)
    return TflmImage(v, elf, map_, tflite)


def build(variants=VARIANTS, cache: str | Path | None = None) -> list[TflmImage]:
    return [build_variant(v, cache) for v in variants]


__all__ = ["TflmVariant", "TflmImage", "VARIANTS", "build", "build_variant", "model_source"]

"""Build the Release-shaped C++ runner fixtures (fixtures/firmware/release/).

They reproduce the traits of a framework's own NPU runner built the way its release flow does:
C++ at -O3 without -g (the only DWARF such an image would carry is its C library's), -fPIC so
the backend reads the fast-scratch pointer and size through the GOT, a class hierarchy with
virtual methods defined in class bodies (vague linkage), the Vela blob written in the layout
of ExecuTorch >= 1.0 (six-entry shapes) inside a program container in `network_model_sec`,
DWARF only in the C parts standing for the prebuilt libraries (startup code and driver),
a loadable DDR section holding the pools so that the image file is several MiB, plain .bss in
the CPU's DTCM and the fast-scratch override in SRAM.

Same cache and incremental steps as weaklink.demo.build.firmware; links are run by the real
arm-none-eabi-ld with a -Map file, and also with --emit-relocs for the relocation evidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from weaklink import toolchain
from weaklink.cachedir import cache_dir
from weaklink.demo.build import firmware as fx
from weaklink.demo.build.firmware import TARGETS, _step

FLAGS = ("-O3", "-fPIC", "-ffunction-sections", "-fdata-sections", "-ffreestanding",
         "-Wall", "-Werror")
CXX_FLAGS = ("-std=c++17", "-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics",
             "-fno-use-cxa-atexit")
METHOD_POOL = 0x200000         # 2 MiB of initialised pool in DDR: the image is over 1 MiB
BLOB_SHAPE_DIMS = 6            # ExecuTorch >= 1.0 descriptor layout
SOURCES = ("EthosUBackend.cpp", "EthosUBackend_Cortex_M.cpp", "blob_reader.cpp", "runner.cpp",
           "platform.c")


def _release() -> Path:
    """Read at call time: use_fixtures() may move the sources."""
    return fx.FIRMWARE / "release"


@dataclass(frozen=True)
class ReleaseVariant:
    name: str
    target: str                          # fixtures.TARGETS key: the Vela config and network
    corstone: int                        # 300 or 320: the memory map
    fast_scratch: int | None             # bytes of the strong override (None: weak default)
    arena_in_ddr: bool                   # temp pool (region 1) in the loadable DDR section
    scratch_pool: int = 0x100000
    expected: str = ""                   # the verdict the tests assert
    backend_reads: bool = True           # False: the backend passes 0/0 and never reads them

    def defines(self) -> list[str]:
        flags = [f"-DSCRATCH_POOL_SIZE={self.scratch_pool:#x}",
                 f"-DMETHOD_POOL_SIZE={METHOD_POOL:#x}"]
        if self.fast_scratch is not None:
            flags.append(f"-DFAST_SCRATCH_POOL_SIZE={self.fast_scratch:#x}")
        return flags


VARIANTS = (
    # Shared_Sram: the stream never uses region 2, so the weak nullptr/0 is right
    ReleaseVariant("release-u55", "u55", 300, None, False, expected="ok"),
    # Dedicated_Sram with the 384 KB override in SRAM
    ReleaseVariant("release-u85", "u85", 320, 0x60000, True, expected="ok"),
    # the same runner built without the override: the weak default 0/0 reaches the NPU
    ReleaseVariant("release-u85-weak", "u85", 320, None, True, expected="hang"),
    # the override is linked, but the backend passes 0/0 without reading it: only relocations
    # can tell (the image alone gives no evidence either way, and the verdict is assumed)
    ReleaseVariant("release-u85-unread", "u85", 320, 0x60000, True, expected="hang",
                   backend_reads=False),
)


@dataclass(frozen=True)
class ReleaseImage:
    variant: ReleaseVariant
    elf: Path
    map: Path
    relocs_elf: Path                     # the same link with --emit-relocs
    objects: tuple[Path, ...]            # the link inputs, in command-line order
    blob: Path
    script: Path                         # the preprocessed linker script

    @property
    def target(self):
        return TARGETS[self.variant.target]


def blob(target: str, cache: str | Path | None = None) -> Path:
    """The target's fixture network as a >= 1.0 vela_bin_stream blob (six-entry shapes), built
    from the same Vela output as the older-layout blob of weaklink.demo.build.firmware."""
    import numpy as np

    from npu.read.blob import blob_from_npz, write_blob

    t = TARGETS[target]
    root = cache_dir(cache) / "models"
    gen = fx._model_generator()
    vdir = Path(gen.compile_network(t.network, t.accelerator, t.system_config, t.memory_mode, root))
    tag = gen.config_tag(t.network, t.accelerator, t.system_config, t.memory_mode)
    out = root / f"{tag}.v1.bin"
    with np.load(vdir / f"{t.network}_vela.npz", allow_pickle=True) as npz:
        data = write_blob(blob_from_npz(npz, BLOB_SHAPE_DIMS))
    if not out.exists() or out.read_bytes() != data:
        out.write_bytes(data)
    return out


def compile_source(source: Path, out: Path, flags: list[str], root: Path) -> Path:
    """One fixture source compiled with the Release flags (plus `flags`) into `out`, a path
    under `root`; incremental like every fixture step."""
    cxx = source.suffix == ".cpp"
    argv = [*toolchain.CPU_FLAGS, *FLAGS, *(CXX_FLAGS if cxx else ()),
            f"-I{_release()}", f"-I{fx.FIRMWARE / 'include'}", *flags,
            "-c", source, "-o", out.relative_to(root)]
    inputs = [source, *_release().glob("*.h"), *(fx.FIRMWARE / "include").glob("*.h")]
    if source.suffix == ".S":
        inputs += [Path(f.split("=", 1)[1].strip('"')) for f in flags if "PTE_BLOB" in f]
    _step("g++" if cxx else "gcc", argv, out, inputs, root)
    return out


def _script(v: ReleaseVariant, root: Path) -> Path:
    out = root / "release" / f"release-{v.corstone}-arena{int(v.arena_in_ddr)}.ld"
    source = _release() / "release.ld"
    _step("gcc", ["-E", "-P", "-x", "c", f"-DCORSTONE={v.corstone}",
                  f"-DETHOSU_ARENA={int(v.arena_in_ddr)}", source, "-o", out.relative_to(root)],
          out, [source], root)
    return out


def build_variant(v: ReleaseVariant, cache: str | Path | None = None) -> ReleaseImage:
    """Compile and link one variant; a failed step raises InputError with the tool's message."""
    root = cache_dir(cache)
    out = root / "release" / v.name
    pte = blob(v.target, cache)
    # the C library's and the driver's prebuilt objects carry DWARF; the C++ runtime does not
    objs = [compile_source(fx.FIRMWARE / "startup/startup.c", out / "startup.o", ["-g"], root)]
    flags = {"runner.cpp": v.defines(),
             "EthosUBackend_Cortex_M.cpp": [] if v.backend_reads else ["-DFAST_SCRATCH_UNUSED"]}
    for src in SOURCES:
        objs.append(compile_source(_release() / src, out / (Path(src).stem + ".o"),
                                   flags.get(src, []), root))
    objs.append(compile_source(fx.FIRMWARE / "driver/ethosu_driver.c", out / "ethosu_driver.o",
                               ["-g"], root))
    objs.append(compile_source(_release() / "model.S", out / "model.o",
                               [f'-DPTE_BLOB="{pte}"'], root))
    script = _script(v, root)
    elf, map_, relocs = (out / f"{v.name}{ext}" for ext in (".elf", ".map", ".relocs.elf"))
    rel = [o.relative_to(root) for o in objs]
    common = ["-T", script.relative_to(root), *rel, toolchain.libgcc_path()]
    _step("ld", ["-Map", map_.relative_to(root), "-o", elf.relative_to(root), *common], elf,
          [script, *objs], root)
    _step("ld", ["--emit-relocs", "-o", relocs.relative_to(root), *common], relocs,
          [script, *objs], root)
    return ReleaseImage(v, elf, map_, relocs, tuple(objs), pte, script)


def build(variants=VARIANTS, cache: str | Path | None = None) -> list[ReleaseImage]:
    return [build_variant(v, cache) for v in variants]


__all__ = ["ReleaseVariant", "ReleaseImage", "VARIANTS", "build", "build_variant", "blob",
           "compile_source"]

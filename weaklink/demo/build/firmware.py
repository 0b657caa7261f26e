"""Build the bundled fixture firmware with the real cross toolchain.

The fixtures reproduce the ExecuTorch fast-scratch story (shared/research/executorch_ethosu.md):
three states of the NPU backend (extern, removed, weak) linked with two runners (example,
custom) for two targets (U55 on Corstone-300, U85 on Corstone-320), plus four pitfall variants
of the weak backend (on U85; the wrong-memory one on U65 on Corstone-300, whose plain .bss is
the CPU's DTCM). Each variant gets objects, archives, a linked ELF (-g) and a GNU ld
map (-Map --cref); each link's exit status and stderr are recorded, failed links included.

Everything goes into a cache directory outside git ($WEAKLINK_CACHE, default <repo>/.cache).
Steps are keyed by a digest of their command line, their inputs and the toolchain version, so a
rebuild redoes only what changed. `build()` is the one entry point, for the CLI and for tests.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from weaklink import toolchain
from weaklink.cachedir import REPO, cache_dir
from weaklink.errors import InputError

# The fixture sources: $WEAKLINK_FIXTURES, else the checkout's fixtures/, else the copy an
# installed wheel carries as package data (weaklink/_fixtures, see setup.py).
PACKAGED = Path(__file__).resolve().parents[2] / "_fixtures"
FIXTURES = Path(os.environ.get("WEAKLINK_FIXTURES")
                or (REPO / "fixtures" if (REPO / "fixtures" / "firmware").is_dir() else PACKAGED))
FIRMWARE = FIXTURES / "firmware"


def use_fixtures(directory: str | Path | None = None) -> Path:
    """Point the build at a fixture source directory (``--fixtures DIR``), checking that it
    holds firmware/ and models/generate.py; InputError in one line when it does not."""
    global FIXTURES, FIRMWARE
    where = Path(directory) if directory else FIXTURES
    if not (where / "firmware").is_dir() or not (where / "models" / "generate.py").is_file():
        raise InputError(where, "no fixture sources here (expected firmware/ and "
                         "models/generate.py): give --fixtures DIR, a weaklink checkout's fixtures/")
    FIXTURES, FIRMWARE = where, where / "firmware"
    _model_generator.cache_clear()
    return where

C_FLAGS = (*toolchain.CPU_FLAGS, "-O2", "-g", "-ffunction-sections", "-fdata-sections",
           "-ffreestanding", "-Wall", "-Werror")
CXX_FLAGS = ("-std=c++17", "-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics",
             "-fno-use-cxa-atexit")

BACKENDS = ("extern", "removed", "weak")
RUNNERS = ("example", "custom")
PITFALLS = ("override-in-archive", "near-miss", "too-small", "wrong-memory")
FIXTURE_NETWORK = "tiny"


@dataclass(frozen=True)
class Target:
    """A board, the NPU config Vela compiles for, and the runner's pool sizes for that mode."""

    name: str
    board: str
    accelerator: str
    system_config: str
    memory_mode: str
    arena_in_ddr: bool              # Dedicated_Sram: .bss.tensor_arena in DDR, else SRAM
    scratch_pool: int               # bytes of temp_allocation_pool (region 1)
    fast_scratch_pool: int | None   # bytes of the runner's fast scratch (region 2), U85 only
    network: str = FIXTURE_NETWORK  # the fixture network embedded in the image


TARGETS = {
    "u55": Target("u55", "corstone-300", "ethos-u55-128", "Ethos_U55_High_End_Embedded",
                  "Shared_Sram", False, 0x100000, None),
    "u85": Target("u85", "corstone-320", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid",
                  "Dedicated_Sram_384KB", True, 0x4000000, 0x60000),
    # U65 on Corstone-300 in Dedicated_Sram (Arm's CMSIS-Ethos-U FVP setup has this column): the
    # wrong-memory pitfall and the corruption image. The deep network: its region 1 holds data
    # that later operations read back.
    "u65": Target("u65", "corstone-300", "ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram",
                  True, 0x100000, 0x60000, "deep"),
    # The corruption runner on U85 Dedicated_Sram_384KB, checked on its own Corstone-320 map.
    "u85deep": Target("u85deep", "corstone-320", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid",
                      "Dedicated_Sram_384KB", True, 0x4000000, 0x60000, "deep"),
}


@dataclass(frozen=True)
class Override:
    """The runner-side strong override object a pitfall variant links (overrides/fast_scratch.cpp)."""

    size: int
    in_sram: bool
    namespaced: bool
    in_archive: bool

    def defines(self) -> list[str]:
        flags = [f"-DFAST_SCRATCH_BYTES={self.size:#x}"]
        if self.in_sram:
            flags.append("-DFAST_SCRATCH_IN_SRAM")
        if self.namespaced:
            flags.append("-DFAST_SCRATCH_NAMESPACED")
        return flags


OVERRIDES = {
    # A correct 384 KB SRAM override, but in a static library nothing else pulls: the backend's
    # weak default already satisfies the reference, so ld never extracts the member.
    "override-in-archive": Override(0x60000, True, False, True),
    # C++ linkage in the backend's namespace: mangled names, no match for the extern "C" default.
    "near-miss": Override(0x60000, True, True, False),
    # Strong and in SRAM, but 16 KB: smaller than the model's fast-scratch need.
    "too-small": Override(0x4000, True, False, False),
    # 384 KB and strong, but without section(".bss.ethosu_scratch"): plain .bss, which the
    # Corstone-300 script (like ExecuTorch's Corstone-300.ld) puts in DTCM, the Cortex-M55's
    # private data TCM that the NPU cannot reach. (On Corstone-320 plain .bss is BRAM, which the
    # NPU does reach: there the same mistake only costs speed.)
    "wrong-memory": Override(0x60000, False, False, False),
}
# The story's two targets: every backend state with every runner.
STORY_TARGETS = ("u55", "u85")
# The target each pitfall is built for: the story's U85, except where the pitfall needs the
# Corstone-300 map (a 384 KB array in DTCM; Corstone-320's DTCM is 32 KB).
PITFALL_TARGETS = {"wrong-memory": "u65"}


@dataclass(frozen=True)
class Variant:
    backend: str
    runner: str
    target: str

    @property
    def name(self) -> str:
        return f"{self.backend}-{self.runner}-{self.target}"


VARIANTS = tuple(
    [Variant(b, r, t) for b in BACKENDS for r in RUNNERS for t in STORY_TARGETS]
    + [Variant("weak", p, PITFALL_TARGETS.get(p, "u85")) for p in PITFALLS])

# Silent corruption, outside the 16-row story: a U65 Dedicated_Sram image whose runner points
# the fast scratch (region 2) into its own tensor arena (region 1). Checked on the "shared-bus"
# SoC preset, where both NPU ports are documented to reach the arena; on corstone-300 the
# verdict is the same, resting on the assumption that AXI0 reaches DDR there.
CORRUPTION_VARIANTS = (Variant("weak", "aliasing", "u65"), Variant("weak", "aliasing", "u85deep"))
CORRUPTION_SOC = "shared-bus"


@dataclass(frozen=True)
class LinkOutcome:
    """One variant's real link: the exact ld command line (relative to `cwd`) and what ld did."""

    variant: Variant
    cwd: Path
    ld_args: tuple[str, ...]
    returncode: int
    stderr: str
    elf: Path
    map: Path
    linker: str = "gnu"             # "gnu" (arm-none-eabi-ld) or "lld" (ld.lld-16)
    why_extract: Path | None = None     # lld's --why-extract file

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def target(self) -> Target:
        return TARGETS[self.variant.target]


# -- incremental steps -------------------------------------------------------------------------
def _digest(argv, inputs) -> str:
    h = hashlib.sha256(toolchain.version().encode())
    h.update("\0".join(map(str, argv)).encode())
    for path in inputs:
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def _headers() -> list[Path]:
    return sorted((FIRMWARE / "include").glob("*.h")) + sorted((FIRMWARE / "runners").glob("*.h"))


def _step(tool: str, argv: list, out: Path, inputs: list[Path], cwd: Path) -> None:
    """Run `tool argv` unless `out` exists and was made from the same command and inputs."""
    key = _digest([tool, *argv], inputs)
    stamp = out.with_name(out.name + ".key")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)  # `ar rcs` would append to a stale archive
    done = toolchain.run(tool, argv, cwd=cwd)
    if done.returncode != 0:
        raise InputError(out, f"{tool} failed: {done.stderr.strip()}")
    stamp.write_text(key)


@dataclass(frozen=True)
class _Compile:
    source: Path
    out: Path
    flags: tuple[str, ...]

    def run(self, root: Path) -> None:
        cxx = self.source.suffix == ".cpp"
        tool = "g++" if cxx else "gcc"
        argv = [*C_FLAGS, *(CXX_FLAGS if cxx else ()), f"-I{FIRMWARE / 'include'}", *self.flags,
                "-c", self.source, "-o", self.out.relative_to(root)]
        inputs = [self.source, *_headers()]
        if self.source.suffix == ".S":
            inputs += [Path(f.split("=", 1)[1].strip('"')) for f in self.flags if "VELA_BLOB" in f]
        _step(tool, argv, self.out, inputs, root)


# -- the build plan ----------------------------------------------------------------------------
@functools.cache
def _model_generator():
    """fixtures/models/generate.py, loaded by path (it is a fixture source, not a package)."""
    name = "weaklink_fixture_models"
    spec = importlib.util.spec_from_file_location(name, FIXTURES / "models" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


def _model_blob(target: Target, root: Path) -> Path:
    return Path(_model_generator().build_blob(target.network, target.accelerator,
                                              target.system_config, target.memory_mode,
                                              root / "models"))


def _target_defines(target: Target) -> list[str]:
    flags = [f"-DET_ARM_SCRATCH_POOL_SIZE={target.scratch_pool:#x}"]
    if target.fast_scratch_pool is not None:
        flags.append(f"-DET_ARM_FAST_SCRATCH_POOL_SIZE={target.fast_scratch_pool:#x}")
    return flags


def _compiles(target: Target, root: Path, blob: Path) -> dict[str, _Compile]:
    """Every object a target's variants need, by a short name."""
    obj = root / target.name / "obj"
    src = FIRMWARE
    units = {
        "startup": _Compile(src / "startup/startup.c", obj / "startup.o", ()),
        "driver": _Compile(src / "driver/ethosu_driver.c", obj / "ethosu_driver.o", ()),
        "velabin": _Compile(src / "backend/VelaBinStream.cpp", obj / "VelaBinStream.o", ()),
        "model": _Compile(src / "model/model.S", obj / "model.o", (f'-DVELA_BLOB="{blob}"',)),
        "runner-custom": _Compile(src / "runners/custom.cpp", obj / "runner-custom.o",
                                  tuple(_target_defines(target))),
    }
    if target.name in {v.target for v in CORRUPTION_VARIANTS}:
        units["runner-aliasing"] = _Compile(src / "runners/aliasing.cpp", obj / "runner-aliasing.o",
                                            tuple(_target_defines(target)))
    for backend in BACKENDS:
        state = f"-DFAST_SCRATCH_{backend.upper()}"
        units[f"backend-{backend}"] = _Compile(src / "backend/EthosUBackend.cpp",
                                               obj / f"EthosUBackend-{backend}.o", (state,))
        units[f"runner-example-{backend}"] = _Compile(
            src / "runners/example.cpp", obj / f"runner-example-{backend}.o",
            (state, *_target_defines(target)))
    if target.fast_scratch_pool is not None:
        for pitfall, override in OVERRIDES.items():
            units[f"override-{pitfall}"] = _Compile(
                src / "overrides/fast_scratch.cpp", obj / f"override-{pitfall}.o",
                tuple(override.defines()))
    return units


def _script(target: Target, root: Path) -> Path:
    out = root / target.name / f"{target.board}.ld"
    source = FIRMWARE / "ld" / f"{target.board}.ld"
    argv = ["-E", "-P", "-x", "c", f"-DETHOSU_ARENA={int(target.arena_in_ddr)}", source,
            "-o", out.relative_to(root)]
    _step("gcc", argv, out, [source], root)
    return out


def _archive(out: Path, members: list[Path], root: Path) -> Path:
    _step("ar", ["rcs", out.relative_to(root), *(m.relative_to(root) for m in members)],
          out, members, root)
    return out


def _inputs(variant: Variant, units: dict[str, _Compile], root: Path) -> list[Path]:
    """The variant's link inputs in command-line order."""
    o = {k: u.out for k, u in units.items()}
    tail = [o["velabin"], o["driver"], o["model"]]
    if variant.runner == "aliasing":
        return [o["startup"], o["runner-aliasing"], o["backend-weak"], *tail]
    if variant.runner in RUNNERS:
        return [o["startup"], o[f"runner-{variant.runner}" + ("-" + variant.backend
                                                               if variant.runner == "example" else "")],
                o[f"backend-{variant.backend}"], *tail]
    override = OVERRIDES[variant.runner]
    lib = root / variant.target / "lib"
    if override.in_archive:
        backend = _archive(lib / "libethosu_backend.a", [o["backend-weak"], o["velabin"]], root)
        overrides = _archive(lib / "librunner_overrides.a",
                             [o[f"override-{variant.runner}"]], root)
        return [o["startup"], o["runner-custom"], backend, overrides, o["driver"], o["model"]]
    return [o["startup"], o["runner-custom"], o[f"override-{variant.runner}"],
            o["backend-weak"], *tail]


def _link(variant: Variant, script: Path, inputs: list[Path], root: Path) -> LinkOutcome:
    out = root / variant.target / "elf"
    elf, map_ = out / f"{variant.name}.elf", out / f"{variant.name}.map"
    rel = lambda p: str(p.relative_to(root)) if p.is_relative_to(root) else str(p)  # noqa: E731
    args = ("-T", rel(script), "-Map", rel(map_), "--cref", "-o", rel(elf),
            *map(rel, inputs), str(toolchain.libgcc_path()))
    record = out / f"{variant.name}.link.json"
    key = _digest(args, [script, *inputs])
    if record.exists():
        saved = json.loads(record.read_text())
        if saved["key"] == key:
            return LinkOutcome(variant, root, args, saved["returncode"], saved["stderr"], elf, map_)
    out.mkdir(parents=True, exist_ok=True)
    elf.unlink(missing_ok=True)
    done = toolchain.run("ld", list(args), cwd=root)
    record.write_text(json.dumps({"key": key, "returncode": done.returncode,
                                  "stderr": done.stderr, "args": args}, indent=1))
    return LinkOutcome(variant, root, args, done.returncode, done.stderr, elf, map_)


def _link_lld(variant: Variant, script: Path, inputs: list[Path], root: Path) -> LinkOutcome:
    """The same link with ld.lld-16: the same script and inputs, lld's -Map, --cref and
    --why-extract (written next to the ELF as <variant>.lld.*)."""
    from weaklink.resolve.lld.oracle import lld_path

    out = root / variant.target / "elf"
    elf, map_, why = (out / f"{variant.name}.lld{ext}" for ext in (".elf", ".map", ".why"))
    rel = lambda p: str(p.relative_to(root)) if p.is_relative_to(root) else str(p)  # noqa: E731
    args = ("-T", rel(script), f"-Map={rel(map_)}", "--cref", f"--why-extract={rel(why)}",
            "-o", rel(elf), *map(rel, inputs), str(toolchain.libgcc_path()))
    record = out / f"{variant.name}.lld.link.json"
    key = _digest(["ld.lld", *args], [script, *inputs])
    if record.exists():
        saved = json.loads(record.read_text())
        if saved["key"] == key:
            return LinkOutcome(variant, root, args, saved["returncode"], saved["stderr"], elf,
                               map_, "lld", why)
    out.mkdir(parents=True, exist_ok=True)
    for p in (elf, why):
        p.unlink(missing_ok=True)
    import subprocess
    done = subprocess.run([lld_path(), *args], cwd=root, capture_output=True, text=True)
    record.write_text(json.dumps({"key": key, "returncode": done.returncode,
                                  "stderr": done.stderr, "args": args}, indent=1))
    return LinkOutcome(variant, root, args, done.returncode, done.stderr, elf, map_, "lld", why)


def build(variants=VARIANTS, cache: str | Path | None = None, jobs: int | None = None,
          linker: str = "gnu") -> list[LinkOutcome]:
    """Build every variant (objects, archives, ELF, map) and return the real link outcomes;
    `linker="lld"` links them with ld.lld-16 instead of arm-none-eabi-ld."""
    root = cache_dir(cache)
    root.mkdir(parents=True, exist_ok=True)
    jobs = jobs or os.cpu_count() or 2
    targets = sorted({v.target for v in variants})
    # Vela runs one after the other: targets share the network's .tflite in models/.
    blobs = {t: _model_blob(TARGETS[t], root) for t in targets}
    with ThreadPoolExecutor(jobs) as pool:
        units = {t: _compiles(TARGETS[t], root, blobs[t]) for t in targets}
        scripts = dict(zip(targets, pool.map(lambda t: _script(TARGETS[t], root), targets)))
        list(pool.map(lambda u: u.run(root), [u for t in targets for u in units[t].values()]))
        plans = [(v, _inputs(v, units[v.target], root)) for v in variants]
        step = _link_lld if linker == "lld" else _link
        return list(pool.map(lambda p: step(p[0], scripts[p[0].target], p[1], root), plans))


def model_blob(target: str, cache: str | Path | None = None) -> Path:
    """The vela_bin_stream blob embedded in a target's firmware (built on demand)."""
    return _model_blob(TARGETS[target], cache_dir(cache))


def vela_tflite(target: str, network: str = FIXTURE_NETWORK, cache: str | Path | None = None) -> Path:
    """Vela's default .tflite output of a fixture network for a target (built on demand): what
    TensorFlow Lite Micro firmware embeds."""
    t = TARGETS[target]
    return Path(_model_generator().build_tflite(network, t.accelerator, t.system_config,
                                                t.memory_mode, cache_dir(cache) / "models"))


# -- npuapp: an application linked by the gcc driver with newlib (issue 9) ------------------------

def _npuapp() -> Path:
    """Read at call time: use_fixtures() may move the sources."""
    return FIRMWARE / "npuapp"


@dataclass(frozen=True)
class DriverLink:
    """A link run through arm-none-eabi-gcc: the driver's argv (relative to `cwd`), outcome."""

    cwd: Path
    argv: tuple[str, ...]
    returncode: int
    stderr: str
    elf: Path
    map: Path


def build_npuapp(cache: str | Path | None = None) -> DriverLink:
    """fixtures/firmware/npuapp: a driver archive with weak NPU hooks, a board archive whose
    cache-hook overrides are never extracted, newlib (nosys), --gc-sections and the
    Corstone-300 script (INCLUDEd by npuapp.ld through -L)."""
    root = cache_dir(cache)
    out = root / "npuapp"
    flags = (*toolchain.CPU_FLAGS, "-O2", "-g", "-ffunction-sections", "-fdata-sections",
             "-Wall", "-Werror", f"-I{_npuapp() / 'driver'}")
    objs = {}
    for src in ("driver/hooks.c", "driver/run.c", "board/cache.c", "board/init.c",
                "app/main.c", "app/startup.c"):
        obj = out / (Path(src).stem + ".o")
        _step("gcc", [*flags, "-c", _npuapp() / src, "-o", obj.relative_to(root)], obj,
              [_npuapp() / src, _npuapp() / "driver/npu_hooks.h"], root)
        objs[Path(src).stem] = obj
    _archive(out / "libnpudrv.a", [objs["hooks"], objs["run"]], root)
    _archive(out / "libboard.a", [objs["init"], objs["cache"]], root)
    script = out / "corstone-300.ld"
    source = FIRMWARE / "ld" / "corstone-300.ld"
    _step("gcc", ["-E", "-P", "-x", "c", "-DETHOSU_ARENA=0", source, "-o",
                  script.relative_to(root)], script, [source], root)
    argv = (toolchain.tool("gcc"), *toolchain.CPU_FLAGS, "-specs=nosys.specs",
            "-Wl,--gc-sections", "-L.", "-T", str(_npuapp() / "npuapp.ld"), "startup.o", "main.o",
            "libnpudrv.a", "libboard.a", "-o", "npuapp.elf")
    elf, map_ = out / "npuapp.elf", out / "npuapp.map"
    record = out / "npuapp.link.json"
    key = _digest(argv, [_npuapp() / "npuapp.ld", script, *objs.values()])
    if record.exists() and (saved := json.loads(record.read_text()))["key"] == key:
        return DriverLink(out, argv, saved["returncode"], saved["stderr"], elf, map_)
    elf.unlink(missing_ok=True)
    proc = subprocess.run([*argv, f"-Wl,-Map,{map_.name},--cref"], cwd=out,
                          capture_output=True, text=True)
    record.write_text(json.dumps({"key": key, "returncode": proc.returncode,
                                  "stderr": proc.stderr}, indent=1))
    return DriverLink(out, argv, proc.returncode, proc.stderr, elf, map_)

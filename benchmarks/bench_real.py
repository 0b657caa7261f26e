"""Benchmark `weaklink check` and `weaklink analyze --json` on images shaped like real firmware.

Run: python benchmarks/bench_real.py [--repeat K] [--here] [--real DIR] [--no-synthetic]

Real Ethos-U firmware is small in symbols and large in bytes: an ExecuTorch runner has about
1,000 symbols in a 66-138 MB image (its DDR pools are loadable PROGBITS full of zeros), a TFLM
network tester 556 symbols in 1-6 MB, and both carry newlib's and libstdc++'s DWARF. The images
here are built with the real toolchain to match: the fixture Release runner (weaklink's
fixtures/firmware/release, its Vela blob in `network_model_sec`, the fast-scratch override in
SRAM) with its DDR scratch pool grown to 60 and 130 MB, linked by arm-none-eabi-g++ over newlib
and libstdc++ (libstdc++-arm-none-eabi-newlib must be installed: it is not in CI) with a
generated unit of ~600 functions, once at -O2 without -g and once with -g on every unit we
compile. Each is cached under .cache/bench_real, keyed by the toolchain and the sources.

Goals, as whole processes (wall time and peak RSS of the process, from wait4):
- `weaklink check`: <= 0.5 s and <= 150 MB on every image, -g included;
- `weaklink analyze --json` / `arm-none-eabi-nm -S -C`: <= 3.0x at 1k, 10k and 200k symbols (the
  10k and 200k images are benchmarks/bench_analyze.py's; a 2.0x goal sat at the interpreter's
  floor and was withdrawn).

Real builds are included when present: --real DIR (or $WEAKLINK_REAL_FW) names a directory of
build directories, each with one *.elf; the NPU configuration of `check` is read from a file
`check.args` beside it (one line: --accelerator A --system-config S --memory-mode M), else
guessed from the directory's name (u85: ethos-u85-256 Dedicated_Sram_384KB, else ethos-u55-128
Shared_Sram).

`weaklink` is measured as a user runs it (bench_analyze.installed_weaklink: a wheel of this
checkout in its own venv), or with --here from this checkout's interpreter. The commands take
turns in each round; the best round of each is reported.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_analyze  # noqa: E402  (the installed tool, the 10k and 200k images)

from weaklink.builders import firmware as fx  # noqa: E402
from weaklink.builders import release as rel  # noqa: E402
from weaklink import toolchain  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_real"
CHECK_WALL, CHECK_RSS_MB = 0.5, 150
NM_RATIO = {1_000: 3.0, 10_000: 3.0, 200_000: 3.0}
EXTRA_FUNCTIONS = 600
GNU_TIME = "/usr/bin/time"

# A unit of the application: newlib's formatted I/O, allocation and strings, libstdc++'s
# operator new and its throw helpers (std::string), and many small functions, so that the
# image's symbol count is that of a real runner (about 1,000).
APP = """\
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
extern "C" int app_main(int argc);
namespace app {
%(functions)s
}
extern "C" int app_main(int argc) {
  std::string s(static_cast<size_t>(argc), 'x');
  char buf[64];
  snprintf(buf, sizeof buf, "%%d %%f %%s", argc, strtod(s.c_str(), nullptr), s.c_str());
  int *p = new int[argc + 1];
  p[0] = static_cast<int>(strlen(buf));
  int r = p[0] + static_cast<int>(atoi(buf))%(calls)s;
  delete[] p;
  void *m = malloc(static_cast<size_t>(r & 0xff) + 1);
  free(m);
  return r;
}
"""

NEWLIB_SCRIPT = """\
SECTIONS {
  .ARM.exidx : { __exidx_start = .; *(.ARM.exidx*) __exidx_end = .; } > BRAM
}
PROVIDE(end = __bss_end);
"""


@dataclass(frozen=True)
class Shape:
    name: str
    pool: int          # bytes of the runner's DDR scratch pool (loadable PROGBITS)
    debug: bool        # -g on every unit compiled here


SHAPES = (Shape("et-like-60M", 60 << 20, False), Shape("et-like-60M-g", 60 << 20, True),
          Shape("et-like-130M", 130 << 20, False), Shape("et-like-130M-g", 130 << 20, True))


def _app_source() -> str:
    fns = "\n".join(f"__attribute__((noinline)) int f{i}(int x) {{ return x * {i + 3} ^ {i}; }}"
                    for i in range(EXTRA_FUNCTIONS))
    calls = "".join(f" + app::f{i}(argc)" for i in range(EXTRA_FUNCTIONS))
    return APP % {"functions": fns, "calls": calls}


def build(shape: Shape) -> Path:
    """Compile the Release runner's sources and the application unit, and link them with
    arm-none-eabi-g++ over newlib and libstdc++."""
    variant = rel.ReleaseVariant(f"bench-{shape.name}", "u85", 320, 0x60000, True,
                                 scratch_pool=shape.pool)
    root = fx.cache_dir(None)
    g = ["-g"] if shape.debug else []
    app = _app_source()
    key = hashlib.sha256(f"{toolchain.version()}|{shape}|{app}".encode()).hexdigest()[:12]
    out = CACHE / f"{shape.name}_{key}"
    elf = out / "image.elf"
    if elf.exists():
        return elf
    out.mkdir(parents=True, exist_ok=True)
    objdir = root / "release" / variant.name / ("g" if shape.debug else "nog")
    pte = rel.blob(variant.target)
    objs = [rel.compile_source(fx.FIRMWARE / "startup/startup.c", objdir / "startup.o", ["-g"],
                               root)]
    flags = {"runner.cpp": variant.defines()}
    for src in rel.SOURCES:
        objs.append(rel.compile_source(rel._release() / src, objdir / (Path(src).stem + ".o"),
                                       [*flags.get(src, []), *g], root))
    objs.append(rel.compile_source(fx.FIRMWARE / "driver/ethosu_driver.c",
                                   objdir / "ethosu_driver.o", ["-g"], root))
    objs.append(rel.compile_source(rel._release() / "model.S", objdir / "model.o",
                                   [f'-DPTE_BLOB="{pte}"'], root))
    (out / "app.cpp").write_text(app)
    cc = [*toolchain.CPU_FLAGS, "-O2", *g, "-ffunction-sections", "-fdata-sections",
          *rel.CXX_FLAGS]
    _run("g++", [*cc, "-c", "app.cpp", "-o", "app.o"], out)
    script = rel._script(variant, root)
    # what newlib and libgcc's unwinder need beyond the fixture's script: the exception index
    # bounds and `end`, where _sbrk's heap starts
    (out / "newlib.ld").write_text(NEWLIB_SCRIPT)
    _run("g++", [*toolchain.CPU_FLAGS, "--specs=nosys.specs", "-nostartfiles", "-T", str(script),
                 *map(str, objs), "app.o", "newlib.ld", "-Wl,--gc-sections", "-Wl,-u,app_main",
                 "-Wl,-Map,image.map", "-lstdc++", "-lc", "-lnosys", "-lgcc", "-o",
                 "image.elf.tmp"], out)
    (out / "image.elf.tmp").rename(elf)
    return elf


def _run(tool: str, argv: list[str], cwd: Path) -> None:
    done = toolchain.run(tool, argv, cwd=cwd)
    if done.returncode:
        sys.exit(f"{tool} failed:\n{done.stderr[-3000:]}")


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one process; stdout to /dev/null. The RSS from wait4
    is an upper bound: on Linux a child started by vfork (as subprocess starts it) has the
    parent's memory counted in its ru_maxrss when it execs, and this script's parent holds
    the fixture builders and numpy (see peak_rss)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=bench_analyze._user_env())
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({status}): {err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def peak_rss(argv: list[str], fallback: float) -> float:
    """The command's own peak RSS in MB: GNU time's report of its child (a grandchild of this
    script, so none of this process's memory is counted), or `fallback` without GNU time."""
    if not os.path.exists(GNU_TIME):
        return fallback
    timed = subprocess.run([GNU_TIME, "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=bench_analyze._user_env(), text=True)
    return int(timed.stderr.strip().splitlines()[-1]) / 1024


def best(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall time per command (the commands taking turns), and its peak RSS."""
    out = {k: (float("inf"), 0.0) for k in commands}
    for _ in range(repeat):
        for key, argv in commands.items():
            wall, rss = measure(argv)
            if wall < out[key][0]:
                out[key] = (wall, rss)
    return {k: (wall, peak_rss(commands[k], rss)) for k, (wall, rss) in out.items()}


def global_count(elf: Path) -> int:
    """Defined non-local symbols, as nm counts them."""
    done = subprocess.run([toolchain.tool("nm"), "-g", "--defined-only", str(elf)],
                          capture_output=True, text=True)
    return len(done.stdout.splitlines())


def real_images(where: str | None) -> list[tuple[str, Path, list[str]]]:
    if not where:
        return []
    out = []
    for d in sorted(Path(where).iterdir()):
        elves = sorted(d.glob("*.elf")) if d.is_dir() else []
        if not elves:
            continue
        args_file = d / "check.args"
        if args_file.exists():
            npu = args_file.read_text().split()
        elif "u85" in d.name:
            npu = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
                   "--memory-mode", "Dedicated_Sram_384KB"]
        else:
            npu = ["--accelerator", "ethos-u55-128", "--system-config",
                   "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram"]
        out.append((d.name, elves[0], npu))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--here", action="store_true",
                    help="run this checkout's interpreter instead of the installed wheel")
    ap.add_argument("--real", default=os.environ.get("WEAKLINK_REAL_FW"),
                    help="directory of real build directories (default $WEAKLINK_REAL_FW)")
    ap.add_argument("--no-synthetic", action="store_true",
                    help="skip the 10k and 200k symbol images of bench_analyze")
    args = ap.parse_args()
    tool = [sys.executable, "-m", "weaklink.cli"] if args.here \
        else [str(bench_analyze.installed_weaklink())]
    t = fx.TARGETS["u85"]
    u85 = ["--accelerator", t.accelerator, "--system-config", t.system_config,
           "--memory-mode", t.memory_mode]
    images = [(s.name, build(s), u85) for s in SHAPES]
    images += real_images(args.real)
    if not args.no_synthetic:
        images += [(f"synthetic-{n // 1000}k", bench_analyze.build_image(n), None)
                   for n in (10_000, 200_000)]
    nm = toolchain.tool("nm")
    print(f"{'image':24} {'MB':>6} {'globals':>8}  {'check s':>8} {'check MB':>8}  "
          f"{'analyze s':>9} {'nm -S -C s':>10} {'ratio':>6} {'goal':>5}")
    missed = 0
    for name, elf, npu in images:
        n = global_count(elf)
        cmds = {"analyze": [*tool, "analyze", "--json", str(elf)],
                "nm": [nm, "-S", "-C", str(elf)]}
        if npu is not None:
            cmds["check"] = [*tool, "check", str(elf), *npu]
        r = best(cmds, args.repeat)
        ratio = r["analyze"][0] / r["nm"][0]
        goal = NM_RATIO[min(NM_RATIO, key=lambda k: abs(k - n))]
        line = f"{name:24} {elf.stat().st_size / 1e6:6.1f} {n:8d}  "
        if npu is not None:
            wall, rss = r["check"]
            ok = wall <= CHECK_WALL and rss <= CHECK_RSS_MB
            missed += not ok
            line += f"{wall:8.3f} {rss:8.0f}{'' if ok else '!'} "
        else:
            line += f"{'-':>8} {'-':>8}  "
        missed += ratio > goal
        line += (f"{r['analyze'][0]:9.3f} {r['nm'][0]:10.3f} {ratio:6.2f} {goal:5.1f}"
                 f"{'' if ratio <= goal else '!'}")
        print(line, flush=True)
    print(f"\ngoals: check <= {CHECK_WALL} s and <= {CHECK_RSS_MB} MB; analyze --json / nm -S -C "
          f"as in the goal column. '!' marks a goal missed ({missed} missed).")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

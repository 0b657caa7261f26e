"""Benchmark `weaklink analyze` on a large image with newlib and libstdc++ DWARF, without a map.

Run: python benchmarks/bench_analyze_dwarf.py [--pool-mb N] [--repeat K] [--app-debug]
     [--iostream] [--elf FIRMWARE.elf]

What is measured: the time and peak memory of `analyze` on an image like the real ExecuTorch
runner (tens of megabytes of PROGBITS pools in DDR, about a thousand symbols, C++ with vtables
and inline methods, newlib and libstdc++ linked in with their DWARF). With --app-debug the
application is built with -g too (a debug build); without it only the libraries carry DWARF
(a Release build). defined_in is attributed from DWARF for every symbol, so the phases that
read DWARF (.debug_aranges, the DW_OP_addr index, the unit walks, the line-table headers of
the C++ header evidence) are what this watches. `arm-none-eabi-nm -S -C` runs on the same
image in the same run, and the ratio is printed (the issue's yardstick for analyze).

Building the image needs libstdc++-arm-none-eabi-newlib (the C++ library and headers for
arm-none-eabi), which CI does not install: this is a benchmark, not a test. The image is
cached under .cache/. --elf measures a -g image of your own instead (a real build).
Each run is a fresh Python process running `weaklink analyze --json` (start-up included);
peak memory is that process's ru_maxrss.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from weaklink import toolchain

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_analyze_dwarf"

APP = r"""
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>
#include <map>
#include <algorithm>
#include <functional>
#ifdef WITH_IOSTREAM
#include <iostream>
#include <sstream>
#endif

namespace runtime {
class MemoryAllocator {
 public:
  MemoryAllocator(unsigned char* b, size_t n) : base_(b), size_(n), cur_(b) {}
  virtual ~MemoryAllocator() = default;
  virtual void* allocate(size_t n) { void* p = cur_; cur_ += n; return p; }
  virtual void reset() { cur_ = base_; }
 protected:
  unsigned char* base_; size_t size_; unsigned char* cur_;
};
}
class ArmMemoryAllocator : public runtime::MemoryAllocator {
 public:
  using MemoryAllocator::MemoryAllocator;
  void* allocate(size_t n) override { return MemoryAllocator::allocate(n + 16); }
  void reset() override;
};
void ArmMemoryAllocator::reset() { MemoryAllocator::reset(); }

extern "C" { __attribute__((weak)) unsigned char* ethosu_fast_scratch = nullptr; }
__attribute__((section("ddr_pool"), aligned(16))) unsigned char pool[POOL_BYTES] = {1};
static unsigned char small_pool[4096];

int run(int argc) {
  ArmMemoryAllocator alloc(small_pool, sizeof small_pool);
  std::vector<std::string> names;
  std::map<std::string, int> counts;
  for (int i = 0; i < argc + 8; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "op%d", i);
    names.emplace_back(buf);
    counts[names.back()] += i;
  }
  std::sort(names.begin(), names.end());
  std::function<int(int)> f = [&](int x) { return x + int(counts.size()); };
  alloc.reset();
  printf("%s %d %p %d\n", names.front().c_str(), f(argc), alloc.allocate(8), pool[argc]);
#ifdef WITH_IOSTREAM
  std::ostringstream out;
  out << names.size() << " " << 3.5 * argc;
  std::cout << out.str() << std::endl;
#endif
  return int(strlen(names.back().c_str())) + (ethosu_fast_scratch != nullptr);
}
int main(int argc, char**) { return run(argc); }
"""

SCRIPT = """
MEMORY {
  ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 0x80000
  DTCM (rw) : ORIGIN = 0x30000000, LENGTH = 0x80000
  DDR (rwx) : ORIGIN = 0x70000000, LENGTH = 0x10000000
}
PHDRS { rom_exec PT_LOAD; rom_dram PT_LOAD; null PT_NULL; }
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) KEEP(*(.init)) KEEP(*(.fini))
            *(.ARM.extab* .gnu.linkonce.armextab.*) } > ITCM :rom_exec
  .ARM.exidx : { __exidx_start = .; *(.ARM.exidx*) __exidx_end = .; } > ITCM :rom_exec
  .data : AT(ALIGN(LOADADDR(.ARM.exidx) + SIZEOF(.ARM.exidx), 4)) {
    *(.data*) . = ALIGN(4);
    __init_array_start = .; KEEP(*(.init_array*)) __init_array_end = .;
    __preinit_array_start = .; KEEP(*(.preinit_array*)) __preinit_array_end = .;
    __fini_array_start = .; KEEP(*(.fini_array*)) __fini_array_end = .;
  } > DTCM :rom_exec
  .ddr : { *(ddr_pool) } > DDR :rom_dram
  .bss : { __bss_start__ = .; *(.bss*) *(COMMON) __bss_end__ = .; } > DTCM :null
  .heap (NOLOAD) : { end = .; . += 0x8000; } > DTCM :null
}
"""

STARTUP = r"""
extern int main(int, char **);
void *__dso_handle = 0;
void Reset_Handler(void) { main(1, 0); for (;;) {} }
"""


def build(pool_mb: int, app_debug: bool, iostream: bool) -> Path:
    where = CACHE / f"pool{pool_mb}{'-g' if app_debug else ''}{'-iostream' if iostream else ''}"
    elf = where / "big.elf"
    if elf.exists():
        return elf
    where.mkdir(parents=True, exist_ok=True)
    (where / "app.cpp").write_text(APP)
    (where / "startup.c").write_text(STARTUP)
    (where / "big.ld").write_text(SCRIPT)
    g = ["-g"] if app_debug else []
    cpu = list(toolchain.CPU_FLAGS)
    steps = [
        ("g++", [*cpu, "-O3", *g, "-fno-exceptions", "-fno-rtti", "-ffunction-sections",
                 "-fdata-sections", f"-DPOOL_BYTES={pool_mb << 20}",
                 *(["-DWITH_IOSTREAM"] if iostream else []), "-c", "app.cpp"]),
        ("gcc", [*cpu, "-O2", *g, "-c", "startup.c"]),
        ("g++", [*cpu, "-specs=nosys.specs", "-nostartfiles", "-T", "big.ld",
                 "-Wl,--gc-sections", "app.o", "startup.o", "-o", "big.elf"]),
    ]
    for tool, argv in steps:
        done = toolchain.run(tool, argv, cwd=where)
        if done.returncode != 0:
            sys.exit(f"{tool} failed (is libstdc++-arm-none-eabi-newlib installed?):\n"
                     f"{done.stderr}")
    return elf


# The child reports its own peak resident set (ru_maxrss, kB on Linux) on stderr.
CHILD = ("import resource, sys\n"
         "from weaklink.cli import main\n"
         "code = main(['analyze', '--json', sys.argv[1]])\n"
         "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n")


def run_once(elf: Path) -> tuple[float, int]:
    """(seconds, peak resident kB) of one `analyze --json` process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(elf)], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=True)
    took = time.perf_counter() - start
    return took, int(done.stderr.strip().splitlines()[-1])


def nm_time(elf: Path, repeat: int) -> float:
    """Best wall time of `nm -S -C` on the image."""
    argv = [toolchain.tool("nm"), "-S", "-C", str(elf)]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool-mb", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--app-debug", action="store_true", help="build the application with -g")
    ap.add_argument("--iostream", action="store_true",
                    help="use <iostream>: libstdc++'s locale machinery and its DWARF come along")
    ap.add_argument("--elf", type=Path, help="a -g image of your own instead of the built one")
    args = ap.parse_args()
    elf = args.elf or build(args.pool_mb, args.app_debug, args.iostream)
    from weaklink.read.image import Image
    image = Image.from_path(elf)
    info = image.elf.find_section(".debug_info")
    debug = image.elf.shdrs[info].sh_size / 2**20 if info is not None else 0
    print(f"{elf}: {elf.stat().st_size / 2**20:.1f} MiB, {len(image.defined_globals)} global "
          f"symbols, .debug_info {debug:.1f} MiB")
    runs = [run_once(elf) for _ in range(args.repeat)]
    best = min(t for t, _ in runs)
    nm = nm_time(elf, args.repeat)
    print(f"analyze --json: best {best:.3f} s of {args.repeat}, "
          f"peak RSS {max(m for _, m in runs) / 1024:.0f} MiB; nm -S -C {nm:.3f} s; "
          f"ratio {best / nm:.2f}x")


if __name__ == "__main__":
    main()

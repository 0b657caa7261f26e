"""Benchmark `weaklink check` on a -g image with a large zero PROGBITS pool, as whole processes.

Run: python benchmarks/bench_check_dwarf.py [--elf FIRMWARE.elf] [--pool-mb N] [--repeat K]
     [--accelerator A --system-config S --memory-mode M]

What is measured: the wall time, CPU time and peak RSS of `weaklink check` (start-up
included), on a firmware image with DWARF to which objcopy adds a zero-filled allocated
PROGBITS section of --pool-mb MiB (the shape of the ExecuTorch runner's method and scratch
pools: 60-140 MB images with about a thousand symbols). Without --elf the image is the -g
TFLM fixture (weaklink.builders.tflm, network-tester-debug-u55); give a real -g build with
--elf (its newlib and libstdc++ units are then in .debug_info too). check reads only the
DWARF units that mention the symbols it asks about, and searches the pool in the image's
map, so neither time nor memory should grow with the pool or the libraries' DWARF.
The images go under .cache/bench_check_dwarf/.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from weaklink import toolchain

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_check_dwarf"
U55 = ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram")


def fixture_elf() -> Path:
    from weaklink.builders import tflm as fixtures_tflm

    variant = next(v for v in fixtures_tflm.VARIANTS if v.name == "network-tester-debug-u55")
    return Path(fixtures_tflm.build_variant(variant).elf)


def with_pool(elf: Path, pool_mb: int) -> Path:
    """`elf` with a zero-filled allocated PROGBITS section `.pool` of `pool_mb` MiB."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"{elf.stem}-pool{pool_mb}.elf"
    if out.exists() and out.stat().st_mtime >= elf.stat().st_mtime:
        return out
    zeros = CACHE / "zeros.bin"
    zeros.write_bytes(bytes(pool_mb << 20))
    done = subprocess.run([toolchain.tool("objcopy"), "--add-section", f".pool={zeros}",
                           "--set-section-flags", ".pool=alloc,load,data,contents",
                           "--change-section-address", ".pool=0x80000000", str(elf), str(out)],
                          capture_output=True, text=True)
    zeros.unlink()
    if done.returncode != 0:
        sys.exit(done.stderr)
    return out


def run_once(argv: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS KiB) of one process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"check failed: {' '.join(argv)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elf", type=Path, help="a -g firmware image (default: the TFLM fixture)")
    ap.add_argument("--pool-mb", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--accelerator", default=U55[0])
    ap.add_argument("--system-config", default=U55[1])
    ap.add_argument("--memory-mode", default=U55[2])
    args = ap.parse_args()
    elf = with_pool(args.elf or fixture_elf(), args.pool_mb)
    argv = [sys.executable, "-m", "weaklink.cli", "check", str(elf), "--accelerator",
            args.accelerator, "--system-config", args.system_config, "--memory-mode",
            args.memory_mode, "--json"]
    runs = [run_once(argv) for _ in range(args.repeat)]
    wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    print(f"{elf.name}: {elf.stat().st_size / 2**20:.1f} MiB")
    print(f"check --json: wall {wall:.2f} s (median of {len(runs)}), CPU {cpu:.2f} s, "
          f"peak RSS {max(r[2] for r in runs) / 1024:.0f} MiB")


if __name__ == "__main__":
    main()

"""Benchmark: `weaklink run` against QEMU's bare boot-to-exit of the same image.

    python benchmarks/bench_run.py [--repeat N] [--image ELF ACCELERATOR SYSTEM_CONFIG MEMORY_MODE [SOC]]...

The bare run is `qemu-system-arm -M mps3-an547 ... -kernel IMAGE` with semihosting and no
debugger, as a process, to its exit (the process reaped, as `run()` reaps its QEMU): the fixture
firmware then finds no NPU (its registers read 0), its driver's soft reset fails and it exits at
once; a core_platform image prints its exit line and spins (timed to that line). `weaklink run` is the whole
`run()` call in this process: QEMU started halted, the GDB stub attached, every NPU register
access served, each job emulated (timing and bytes), its completion interrupt raised when the
firmware waits for it (weaklink.run.irq; the outcome column says what delivered it).

Prints, per image, the best of N (the two interleaved within each round, on a shared machine):
the bare wall, the run's wall, the NPU emulation's own time inside the run (the regions' bytes
read from guest memory and the outputs written back included), and (run - NPU) / bare, whose
goal is at most 2. Exits 1 when an image misses it. An image that never exits without its NPU
(a real driver waits for it) has no bare figure.
By default: the U55 fixture runners and the U65 runner with its override in SRAM.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from weaklink.builders import firmware as fixtures  # noqa: E402
from weaklink.run import run  # noqa: E402
from weaklink.run.qemu import command, qemu_path  # noqa: E402

GOAL = 2.0
SPINS = 0.5             # seconds after its exit line without a process exit: the image spins
EXIT_LINE = b"Application exit code: "


def bare(elf: Path, limit: float = 10.0) -> float | None:
    """Wall seconds of QEMU booting the image to its exit (semihosting, or the exit line);
    None when it does not exit within `limit` (a driver that waits for an NPU that is not there)
    or QEMU dies of a signal (a lockup: a Corstone-320 image, whose vectors QEMU does not read
    without the debugger that points VTOR at them)."""
    with tempfile.TemporaryDirectory() as tmp:
        uart = Path(tmp) / "uart.txt"
        argv = command(qemu_path(), "mps3-an547", str(elf), uart, None)
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        line = None                 # when the UART showed the exit line
        while proc.poll() is None:
            now = time.perf_counter()
            if line is None and uart.exists() and EXIT_LINE in uart.read_bytes() \
                    and uart.read_bytes().endswith(b"\n"):
                line = now
            if line is not None and now - line > SPINS:
                break
            if now - start > limit:
                proc.kill()
                proc.wait()
                return None
            time.sleep(0.002)
        # to the process's exit, QEMU's teardown included as in run(); an image that spins
        # after its exit line: to that line
        wall = (time.perf_counter() if proc.poll() is not None else line) - start
        died = proc.poll() is not None and proc.returncode < 0
        proc.kill()
        proc.wait()
        return None if died else wall


def default_images():
    from weaklink.demo.runs import RUN_VARIANTS

    variants = [v for v in fixtures.VARIANTS if v.target == "u55"] + \
        [v for v in RUN_VARIANTS if v.backend == "weak" and v.runner == "example" and v.target == "u65"]
    for o in fixtures.build(variants):
        if o.ok:
            t = o.target
            yield o.variant.name, o.elf, (t.accelerator, t.system_config, t.memory_mode, t.board)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--image", nargs="+", action="append", metavar="ARG",
                    help="ELF ACCELERATOR SYSTEM_CONFIG MEMORY_MODE [SOC]")
    args = ap.parse_args(argv)
    if args.image and any(len(i) not in (4, 5) for i in args.image):
        ap.error("--image takes ELF ACCELERATOR SYSTEM_CONFIG MEMORY_MODE [SOC]")
    images = [(Path(i[0]).name, Path(i[0]), (*i[1:4], i[4] if len(i) > 4 else None))
              for i in args.image] if args.image else list(default_images())
    print(f"{'image':<28} {'bare':>8} {'run':>8} {'NPU':>8} {'(run-NPU)/bare':>15}  outcome")
    failed = 0
    for name, elf, (acc, sysconf, mode, soc) in images:
        best_bare = best_run = float("inf")
        npu = 0.0
        outcome = ""
        for k in range(args.repeat):
            b = bare(elf) if best_bare is not None else None
            best_bare = None if b is None else min(best_bare, b)
            t = time.perf_counter()
            report = run(elf, accelerator=acc, system_config=sysconf, memory_mode=mode, soc=soc, timeout=60)
            wall = time.perf_counter() - t
            if wall < best_run:
                best_run, npu = wall, report.seconds["npu"]
            delivered = sorted({str(j.interrupt_at) for j in report.invocations})
            outcome = f"{report.outcome} {report.exit_code}, {len(report.invocations)} job(s)" + \
                (f", interrupt at {'/'.join(delivered)}" if delivered else "")
        if best_bare is None:     # the bare image never exits: no ratio, the run's own wall
            print(f"{name:<28} {'never':>8} {best_run:>7.3f}s {npu:>7.3f}s {'-':>15}  {outcome} "
                  "(bare: no exit within 10 s without the NPU, or a lockup)")
            continue
        ratio = (best_run - npu) / best_bare
        failed += ratio > GOAL
        print(f"{name:<28} {best_bare:>7.3f}s {best_run:>7.3f}s {npu:>7.3f}s {ratio:>14.2f}x  {outcome}")
    print(f"goal: (run - NPU emulation) <= {GOAL:g} x bare boot-to-exit; {failed} image(s) missed it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

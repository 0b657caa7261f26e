"""Benchmark: the lld-flavor model vs ld.lld-16 and vs GNU ld on the P2 inputs of
bench_link.py (same generator, same cache).

    python benchmarks/bench_link_lld.py [--objects 2000] [--archives 40] [--members 500]
        [--cache DIR] [--repeat 3]

Prints the model's wall time for weaklink.resolve.lld.link(args) (best of --repeat,
in-process), ld.lld-16's and arm-none-eabi-ld's (best of --repeat, each a fresh process,
--threads=1 and the default thread count for lld), and the ratios. The goal in the issue:
the lld model at most 1.0x GNU ld's wall.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_link import p2_inputs, run_measured  # noqa: E402

from weaklink import toolchain  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--archives", type=int, default=40)
    ap.add_argument("--members", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "weaklink-bench"))
    opts = ap.parse_args()
    from weaklink.resolve.lld.oracle import available, lld_path
    if not toolchain.available() or not available():
        print("arm-none-eabi toolchain or ld.lld-16 not installed; nothing to compare with",
              file=sys.stderr)
        return 2
    root, ld_args = p2_inputs(opts)

    import weaklink.resolve.lld
    times, result = [], None
    for _ in range(opts.repeat):
        result = None
        gc.collect()
        t = time.perf_counter()
        result = weaklink.resolve.lld.link(ld_args, cwd=root)
        times.append(time.perf_counter() - t)
    lld = lld_path()
    lld_1 = [run_measured([lld, "--threads=1", *ld_args], root) for _ in range(opts.repeat)]
    lld_n = [run_measured([lld, *ld_args], root) for _ in range(opts.repeat)]
    gnu = [run_measured([toolchain.tool("ld"), *ld_args], root) for _ in range(opts.repeat)]
    model_s = min(times)
    lld1_s, lldn_s = min(w for w, _, _ in lld_1), min(w for w, _, _ in lld_n)
    gnu_s = min(w for w, _, _ in gnu)
    print(f"model: ok={result.ok} loaded={len(result.loaded)} extracted={len(result.extracted)}")
    print(f"ld.lld exit={lld_n[0][2]}, GNU ld exit={gnu[0][2]}")
    print(f"lld model {model_s:.3f} s (best of {opts.repeat}, in-process)")
    print(f"ld.lld    {lldn_s:.3f} s default threads, {lld1_s:.3f} s --threads=1")
    print(f"GNU ld    {gnu_s:.3f} s")
    print(f"ratio     {model_s / lldn_s:.2f}x ld.lld's wall ({model_s / lld1_s:.2f}x with "
          f"--threads=1); {model_s / gnu_s:.2f}x GNU ld's wall (goal <= 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

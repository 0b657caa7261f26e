"""Benchmark: emulate a command stream of >= 200 operations in <= 0.2 s, and compare with
the time Vela takes to compile the same model.

    python benchmarks/bench_npu.py [--cache DIR] [--repeat N]

Prints one line per config: operations, decode+emulate time (best of N), Vela compile time,
and the ratio. Exits 1 when the emulation of a >= 200-operation stream takes over 0.2 s.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT_S, MIN_OPS = 0.2, 200


def _generator():
    spec = importlib.util.spec_from_file_location("fixture_models_generate", REPO / "fixtures/models/generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("WEAKLINK_CACHE", REPO / ".cache")) / "npu-models")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--network", default="deep")
    args = ap.parse_args(argv)

    import npu.api
    gen = _generator()
    failed = False
    print(f"{'config':62} {'ops':>5} {'emulate s':>10} {'vela s':>8} {'ratio':>7}")
    for cfg in gen.CONFIGS:
        blob = gen.build_blob(args.network, *cfg, args.cache)
        config = dict(zip(("accelerator", "system_config", "memory_mode"), cfg))
        result = npu.api.run(blob, **config)
        ops = len(result.operations)
        emulate = _best(lambda: npu.api.run(npu.api.load_model(blob), **config), args.repeat)
        with tempfile.TemporaryDirectory() as tmp:
            cmd = gen.vela_command(args.cache / f"{args.network}.tflite", *cfg, Path(tmp))
            vela = _best(lambda: subprocess.run(cmd, check=True, capture_output=True), 1)
        print(f"{' / '.join(cfg):62} {ops:>5} {emulate:>10.4f} {vela:>8.3f} {emulate / vela:>7.3f}")
        if ops >= MIN_OPS and emulate > LIMIT_S:
            failed = True
    print(f"limit: {MIN_OPS}+ operations in <= {LIMIT_S} s (decode + emulate, best of {args.repeat})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

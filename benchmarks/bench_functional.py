"""Benchmark: a functional NPU inference against LiteRT's for the same network and input.

    python benchmarks/bench_functional.py [--cache DIR] [--repeat N] [--network NAME ...]

For each network and config (ethos-u55-128, ethos-u65-256, and ethos-u85-256 / ethos-u85-512 in
Dedicated_Sram_384KB and Sram_Only) it prints: operations (kernels and DMAs) and kernel operations,
the functional run's wall (first run, which decodes the weight streams, and best of N),
LiteRT's invoke with its reference kernels (the kernels the outputs are bit-exact with)
and with its default optimised kernels, and the ratio of the functional run (best) to the
reference invoke. Exits 1 when a functional run takes over 1 s or the ratio exceeds 2.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
LIMIT_S, LIMIT_RATIO = 1.0, 2.0
CONFIGS = (("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
           ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram"),
           *((acc, "Ethos_U85_SYS_DRAM_Mid", mode) for acc in ("ethos-u85-256", "ethos-u85-512")
             for mode in ("Dedicated_Sram_384KB", "Sram_Only")))
OPERATIONS = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE", "NPU_OP_DMA_START")


def _generator():
    spec = importlib.util.spec_from_file_location("fixture_models_generate", REPO / "fixtures/models/generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _best(fns, repeat: int) -> list[float]:
    """Best wall of each function over `repeat` rounds, the functions interleaved within a
    round so that a load change on a shared machine affects them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def _litert(tflite: Path, x, reference: bool):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = OpResolverType.BUILTIN_REF if reference else OpResolverType.AUTO
    it = Interpreter(model_path=str(tflite), experimental_op_resolver_type=kind)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("WEAKLINK_CACHE", REPO / ".cache")) / "npu-models")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--network", action="append")
    args = ap.parse_args(argv)

    from npu.functional import run_functional
    from npu.hw import accelerator
    from npu.read.model import load_model
    gen = _generator()
    failed = False
    print(f"{'network / config':66} {'ops':>4} {'kernels':>7} {'first s':>8} {'best s':>8} {'litert-ref s':>12} "
          f"{'litert-opt s':>12} {'ratio':>6} {'equal':>5}")
    for network in args.network or ["deep", "residual"]:
        for acc, sysconf, mode in CONFIGS:
            vdir = gen.compile_network(network, acc, sysconf, mode, args.cache)
            model = load_model(vdir / f"{network}_vela.npz")
            tflite = args.cache / f"{network}.tflite"
            from ai_edge_litert.interpreter import Interpreter
            shape = tuple(Interpreter(model_path=str(tflite)).get_input_details()[0]["shape"])
            x = np.random.default_rng(0).integers(-128, 128, size=shape, dtype=np.int8)
            place = {0: (0x1000_0000, 0), 1: (0x2000_0000, model.region_sizes[1]),
                     2: (0x3000_0000, model.region_sizes.get(2, 0))}
            run = lambda: run_functional(model, accelerator(acc), place, [x])  # noqa: E731
            t = time.perf_counter()
            result = run()
            first = time.perf_counter() - t
            ref = _litert(tflite, x, True)
            opt = _litert(tflite, x, False)
            best, t_ref, t_opt = _best([run, ref.invoke, opt.invoke], args.repeat)
            want = ref.get_tensor(ref.get_output_details()[0]["index"])
            equal = result.outputs[0].tobytes() == want.tobytes()
            ratio = best / t_ref
            ops = sum(c.command in OPERATIONS for c in model.commands)
            label = f"{network} / {acc}" + (f" / {mode}" if acc.startswith("ethos-u85") else "")
            print(f"{label:66} {ops:>4} {result.kernels:>7} {first:>8.3f} {best:>8.3f} {t_ref:>12.4f} "
                  f"{t_opt:>12.4f} {ratio:>6.2f} {'yes' if equal else 'NO':>5}")
            failed |= first > LIMIT_S or ratio > LIMIT_RATIO or not equal
    print(f"limits: a functional run <= {LIMIT_S} s, <= {LIMIT_RATIO}x LiteRT's reference-kernel invoke "
          f"(best of {args.repeat}), outputs byte-equal")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the resolution model vs arm-none-eabi-ld on one synthetic large link (P2), and
on a gcc-driver link with newlib (the npuapp fixture).

    /tmp/venv/bin/python benchmarks/bench_link.py [--objects 2000] [--archives 40]
        [--members 500] [--cache DIR] [--repeat 3] [--skip-p2] [--skip-driver] [--skip-small]

Inputs (generated once as assembly, assembled in batches, cached under --cache): OBJECTS
objects and ARCHIVES archives of MEMBERS members each. Every unit defines a few functions and
data symbols and references symbols of later archives, so extraction chains across archives
and a fifth of the members are pulled. Prints both wall times (best of --repeat), the ratio
and peak memory (RSS of a fresh process for each side). The model's time is given for link()
(every decision) in this process, with the lazily built per-symbol table as well, and for a
fresh `weaklink link LD-ARGS` process (what a user runs: the summary line), taking turns with
ld.

`weaklink` is run as a user runs it: a wheel of this checkout in its own venv
(bench_analyze.installed_weaklink; an editable install adds an import hook to every start).

The small link: a newlib hello-world (printf, strcpy; --specs=nosys.specs), linked by
`arm-none-eabi-gcc` and modelled by `weaklink link -- arm-none-eabi-gcc …`, both as whole
processes taken in turn; the ratio of their medians, wall and CPU (goal <= 5.0).

The driver link: `weaklink link -- arm-none-eabi-gcc …` as a fresh process (interpreter start,
imports, `gcc -###`, ld's default-script cache, --gc-sections included) against the real
`arm-none-eabi-gcc …` link of the same line (best of --repeat each).
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bench_analyze  # noqa: E402  (the installed tool: a wheel of this checkout, as users run it)
from weaklink import toolchain

SYMS_PER_MEMBER = 3
SYMS_PER_OBJECT = 10


def member_source(a: int, m: int, n_ar: int, n_mem: int, rng: random.Random) -> str:
    names = [f"f_{a}_{m}_{k}" for k in range(SYMS_PER_MEMBER - 1)]
    lines = [".text"] + [f".global {n}\n.type {n},%function\n{n}: bx lr" for n in names]
    lines += [".data", f".global d_{a}_{m}", f"d_{a}_{m}: .word 0"]
    if a + 1 < n_ar and rng.random() < 0.7:           # pull a member of a later archive
        lines += [".text", f".word f_{rng.randrange(a + 1, n_ar)}_{rng.randrange(n_mem)}_0"]
    if rng.random() < 0.3:                             # a weak reference never pulls
        b, k = rng.randrange(n_ar), rng.randrange(n_mem)
        lines += [f".weak d_{b}_{k}", ".text", f".word d_{b}_{k}"]
    return "\n".join(lines) + "\n"


def object_source(o: int, n_obj: int, n_ar: int, n_mem: int, rng: random.Random) -> str:
    lines = [".text"]
    if o == 0:
        lines += [".global _start", "_start: bx lr"]
    for k in range(SYMS_PER_OBJECT):
        lines += [f".global g_{o}_{k}", f".type g_{o}_{k},%function", f"g_{o}_{k}: bx lr"]
    for _ in range(4):                                 # references into the archives
        lines.append(f".word f_{rng.randrange(min(3, n_ar))}_{rng.randrange(n_mem)}_1")
    lines.append(f".word g_{rng.randrange(n_obj)}_{rng.randrange(SYMS_PER_OBJECT)}")
    return "\n".join(lines) + "\n"


def generate(root: Path, n_obj: int, n_ar: int, n_mem: int) -> list[str]:
    """Write, assemble and archive the inputs (skipped when the cache is complete)."""
    args = [f"obj/o{o}.o" for o in range(n_obj)] + [f"lib/lib{a}.a" for a in range(n_ar)]
    if (root / "done").exists():
        return args
    rng = random.Random(1)
    (root / "obj").mkdir(parents=True, exist_ok=True)
    (root / "lib").mkdir(exist_ok=True)
    (root / "mem").mkdir(exist_ok=True)
    jobs = [(root / "obj" / f"o{o}", object_source(o, n_obj, n_ar, n_mem, rng))
            for o in range(n_obj)]
    jobs += [(root / "mem" / f"m{a}_{m}", member_source(a, m, n_ar, n_mem, rng))
             for a in range(n_ar) for m in range(n_mem)]

    def assemble(batch):
        # one shell per batch of files: far fewer process start-ups from Python
        script = []
        for stem, text in batch:
            stem.with_suffix(".s").write_text(text)
            script.append(f"{toolchain.tool('as')} {stem}.s -o {stem}.o || exit 1")
        subprocess.run(["sh", "-c", "\n".join(script)], check=True)

    batches = [jobs[i:i + 200] for i in range(0, len(jobs), 200)]
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        list(pool.map(assemble, batches))

    def archive(a):
        members = [f"mem/m{a}_{m}.o" for m in range(n_mem)]
        subprocess.run([toolchain.tool("ar"), "rcs", f"lib/lib{a}.a", *members], cwd=root,
                       check=True)

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        list(pool.map(archive, range(n_ar)))
    (root / "done").write_text("ok\n")
    return args


def median(values):
    return sorted(values)[len(values) // 2]


def run_measured(argv: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS KiB, exit status) of one child process."""
    wall, rss, status, _ = run_timed(argv, cwd)
    return wall, rss, status


def run_timed(argv: list[str], cwd: Path) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS KiB, exit status, CPU seconds of it and its children)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--archives", type=int, default=40)
    ap.add_argument("--members", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "weaklink-bench"))
    ap.add_argument("--skip-p2", action="store_true")
    ap.add_argument("--skip-driver", action="store_true")
    ap.add_argument("--skip-small", action="store_true")
    opts = ap.parse_args()
    if not toolchain.available():
        print("arm-none-eabi toolchain not installed; nothing to compare with", file=sys.stderr)
        return 2
    if not opts.skip_p2:
        bench_p2(opts)
    if not opts.skip_small:
        bench_small(opts)
    if not opts.skip_driver:
        bench_driver(opts)
    return 0


HELLO = """#include <stdio.h>
#include <string.h>
int main(void) { char b[32]; strcpy(b, "hi"); printf("%s\\n", b); return 0; }
"""


def bench_small(opts) -> None:
    """A small newlib program: the real gcc link and `weaklink link -- gcc …`, in turn."""
    root = Path(opts.cache) / "small"
    root.mkdir(parents=True, exist_ok=True)
    (root / "hello.c").write_text(HELLO)
    flags = ["-mcpu=cortex-m4", "-mthumb"]
    subprocess.run([toolchain.tool("gcc"), *flags, "-O2", "-c", "hello.c", "-o", "hello.o"],
                   cwd=root, check=True)
    real = [toolchain.tool("gcc"), *flags, "--specs=nosys.specs", "hello.o", "-o", "hello.elf"]
    model = [str(bench_analyze.installed_weaklink()), "link", "--", *real]
    env_model = run_timed(model, root)                # warm: the default-script cache, pages
    if env_model[2]:
        print(f"small link: the model exited {env_model[2]}", file=sys.stderr)
    runs = max(opts.repeat, 9)
    pairs = [(run_timed(real, root), run_timed(model, root)) for _ in range(runs)]
    wall_r, wall_m = median([r[0] for r, _ in pairs]), median([m[0] for _, m in pairs])
    cpu_r, cpu_m = median([r[3] for r, _ in pairs]), median([m[3] for _, m in pairs])
    print(f"small link (newlib hello, --specs=nosys.specs), medians of {runs} runs in turn:")
    print(f"model  {wall_m * 1e3:.0f} ms wall, {cpu_m * 1e3:.0f} ms CPU "
          "(`weaklink link -- arm-none-eabi-gcc …`, a whole process)")
    print(f"gcc    {wall_r * 1e3:.0f} ms wall, {cpu_r * 1e3:.0f} ms CPU (the real link)")
    print(f"ratio  {wall_m / wall_r:.1f}x wall, {cpu_m / cpu_r:.1f}x CPU (goal <= 5.0)")


def bench_driver(opts) -> None:
    """A gcc-driver link with newlib, modelled by a fresh `weaklink link -- gcc …` process."""
    from weaklink.builders import firmware as fixtures
    app = fixtures.build_npuapp()
    out = Path(tempfile.mkdtemp()) / "bench.elf"
    real = [*app.argv[:-2], "-o", str(out)]
    model = [str(bench_analyze.installed_weaklink()), "link", "--", *app.argv]
    run_measured(model, app.cwd)                      # warm ld's default-script cache, page cache
    ld_runs = [run_measured(real, app.cwd) for _ in range(opts.repeat)]
    model_runs = [run_measured(model, app.cwd) for _ in range(opts.repeat)]
    ld_s, model_s = min(w for w, _, _ in ld_runs), min(w for w, _, _ in model_runs)
    print(f"driver link (npuapp: newlib nosys, --gc-sections, Corstone-300 script): "
          f"exit model {model_runs[0][2]}, gcc {ld_runs[0][2]}")
    print(f"model  {model_s:.3f} s as a fresh `weaklink link -- gcc …` process (start-up, "
          f"gcc -###, reading newlib included; best of {opts.repeat})")
    print(f"gcc    {ld_s:.3f} s for the real link through the driver (best of {opts.repeat})")
    print(f"ratio  {model_s / ld_s:.2f}x the real link's wall time (goal <= 5.0)")


def p2_inputs(opts) -> tuple[Path, list[str]]:
    """The P2 inputs (generated once per size and toolchain, cached) and the ld line over them."""
    key = hashlib.sha1(f"{opts.objects}/{opts.archives}/{opts.members}/{toolchain.version()}"
                       .encode()).hexdigest()[:12]
    root = Path(opts.cache) / key
    t = time.perf_counter()
    inputs = generate(root, opts.objects, opts.archives, opts.members)
    print(f"inputs: {opts.objects} objects, {opts.archives} archives x {opts.members} members "
          f"in {root} ({time.perf_counter() - t:.1f} s to generate or load)")
    ld_args = ["-e", "_start", "-o", "/dev/null", *inputs]
    return root, ld_args


def bench_p2(opts) -> None:
    root, ld_args = p2_inputs(opts)

    import weaklink.resolve                           # warm imports before timing
    model_times, full_times, result = [], [], None
    for _ in range(opts.repeat):
        result = None                                 # free the last result outside the timing
        gc.collect()
        t = time.perf_counter()
        result = weaklink.resolve.link(ld_args, cwd=root)     # every decision: ok, errors, extraction
        model_times.append(time.perf_counter() - t)
        len(result.symbols)                           # + the per-symbol table (built lazily)
        full_times.append(time.perf_counter() - t)
    # whole processes, taking turns: `weaklink link LD-ARGS` as a user runs it (the installed
    # wheel; it prints the summary line) and ld
    ld_cmd = [toolchain.tool("ld"), *ld_args]
    model_cmd = [str(bench_analyze.installed_weaklink()), "link", *ld_args]
    run_measured(model_cmd, root)                     # warm the page cache and the bytecode
    ld_runs, model_runs = [], []
    for _ in range(opts.repeat):
        ld_runs.append(run_measured(ld_cmd, root))
        model_runs.append(run_measured(model_cmd, root))
    from weaklink.read.archive import Archive
    armap = sum(len(Archive.from_path(root / a).armap_names) for a in ld_args if a.endswith(".a"))
    n_syms = len(result.symbols)
    print(f"input symbols: {armap} archive-index entries + {opts.objects * (SYMS_PER_OBJECT + 5)}"
          f" in objects")
    model_s, full_s, ld_s = min(model_times), min(full_times), min(w for w, _, _ in ld_runs)
    proc_s = min(w for w, _, _ in model_runs)
    print(f"model: ok={result.ok} loaded={len(result.loaded)} extracted={len(result.extracted)} "
          f"symbols={n_syms}; as a process: exit={model_runs[0][2]}")
    print(f"ld:    exit={ld_runs[0][2]}")
    print(f"model  {model_s:.3f} s link() (best of {opts.repeat}, in-process); "
          f"{full_s:.3f} s with the symbol table built")
    print(f"model  {proc_s:.3f} s as a fresh `weaklink link` process (interpreter, imports and "
          f"the summary line included; best of {opts.repeat}, median "
          f"{median([w for w, _, _ in model_runs]):.3f} s)")
    print(f"ld     {ld_s:.3f} s (best of {opts.repeat}, median "
          f"{median([w for w, _, _ in ld_runs]):.3f} s)")
    print(f"ratio  {model_s / ld_s:.2f}x ld's wall time for link(), {full_s / ld_s:.2f}x with the "
          f"symbol table; {proc_s / ld_s:.2f}x as whole processes (goal <= 1.0)")
    ld_rss = max(r for _, r, _ in ld_runs) / 1024
    here = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model_rss = max(r for _, r, _ in model_runs) / 1024
    print(f"peak RSS: model process {model_rss:.0f} MiB, ld {ld_rss:.0f} MiB"
          f" (this process: {here:.0f} MiB)")


if __name__ == "__main__":
    sys.exit(main())

"""Mutate every kind of input weaklink and npu read, and run every CLI on each mutant.

Run: python benchmarks/fuzz.py [--inputs N] [--seed S] [--timeout SEC] [--jobs J] [--save DIR]

Seeds are the fixture outputs (linked images, objects, GNU and thin archives, a BSD archive,
ld map files, Vela npz / tflite / vela_bin_stream blobs in both descriptor layouts, a linker
script) and the bundled binding TOML and vela.ini. Images of 1 MiB or more (the Release-shaped
runners, and any ELF mutant the grow-past-map mutation pads) are read through a memory map. Input i of seed S is fully determined by (S, i): which input kind,
which command line, which mutations. Each input runs in a child forked from this warm process
(everything already imported), under a wall-clock limit (SIGALRM) and an address-space limit
(an allocation sized by a field the file does not back fails at once, as a MemoryError).

A crash is a traceback, an exit status other than 0/1/2, death by a signal, an exit-2 error
that is not exactly one line, or a write (the input changed, or a file appeared in the
child's working directory). A hang is a run killed by the time limit. The last line is
``fuzz N inputs: C crashes, H hangs, max RSS M MiB``; exit status 1 when C or H > 0.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_mutate import MUTATORS, interesting_ints  # noqa: E402
from fuzz_seeds import Seeds, build_seeds  # noqa: E402

HANG_SIGNAL = signal.SIGALRM
ADDRESS_SPACE_HEADROOM = 1 << 30     # a child may map 1 GiB beyond the warm parent


@dataclass(frozen=True)
class Case:
    index: int
    kind: str
    seed_file: Path
    argv: tuple[str, ...]       # "{}" stands for the mutated file
    mutations: tuple[str, ...]


@dataclass
class Outcome:
    case: Case
    status: int | None
    signal: int | None
    stderr: str
    rss_kib: int
    problem: str | None         # "crash: why" / "hang" / None


def plan(seeds: Seeds, n: int, seed: int) -> list[Case]:
    """N cases, a round-robin over (kind, command) so every pair gets its share."""
    pairs = [(kind, argv) for kind, entry in seeds.kinds.items() for argv in entry.commands]
    cases = []
    for i in range(n):
        rng = random.Random(f"{seed}:{i}")
        kind, argv = pairs[i % len(pairs)]
        files = seeds.kinds[kind].files
        cases.append(Case(i, kind, files[rng.randrange(len(files))], argv, ()))
    return cases


def _mutant(case: Case, seed: int) -> tuple[bytes, tuple[str, ...]]:
    rng = random.Random(f"{seed}:{case.index}:mutate")
    data = case.seed_file.read_bytes()
    names = []
    rounds = 0 if case.index < 0 else rng.choice((1, 1, 1, 2, 2, 3, 4))   # < 0: the seed itself
    for _ in range(rounds):
        name, mutate = rng.choice(MUTATORS[case.kind])
        data = mutate(data, rng, interesting_ints(len(data)))
        names.append(name)
    return data, tuple(names)


def _child(argv: list[str], sandbox: Path, out: Path, timeout: float, as_limit: int) -> None:
    """Runs in the forked child; never returns."""
    status = 70
    try:
        os.chdir(sandbox)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(fd, 2)
        resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
        signal.setitimer(signal.ITIMER_REAL, timeout)
        from npu.cli import main as npu_main
        from weaklink.cli import main as weaklink_main
        main = npu_main if argv[0] == "npu" else weaklink_main
        try:
            rc = main(argv[1:])
            status = rc if isinstance(rc, int) else 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            status = 70
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
    finally:
        os._exit(status & 0xFF)


def _judge(case: Case, status, sig, stderr: str, wrote: str | None) -> str | None:
    if sig == HANG_SIGNAL:
        return "hang"
    if sig is not None:
        return f"crash: killed by signal {sig}"
    if "Traceback (most recent call last)" in stderr:
        return "crash: traceback: " + stderr.strip().splitlines()[-1][:200]
    if status not in (0, 1, 2):
        return f"crash: exit status {status}"
    if status == 2 and len(stderr.strip("\n").splitlines()) != 1:
        return f"crash: exit 2 with {len(stderr.splitlines())} lines of stderr"
    if wrote:
        return f"crash: {wrote}"
    return None


def run_cases(cases: list[Case], seed: int, timeout: float, jobs: int, work: Path,
              as_limit: int, on_done) -> None:
    running: dict[int, tuple[Case, Path, bytes]] = {}
    pending = iter(cases)
    while True:
        while len(running) < jobs:
            case = next(pending, None)
            if case is None:
                break
            data, names = _mutant(case, seed)
            case = Case(case.index, case.kind, case.seed_file, case.argv, names)
            slot = work / f"c{case.index}"
            shutil.rmtree(slot, ignore_errors=True)
            sandbox = slot / "cwd"
            sandbox.mkdir(parents=True)
            target = slot / f"input{case.seed_file.suffix}"
            target.write_bytes(data)
            # "{out}": a directory the command may write (npu run --functional --outputs)
            argv = [a.replace("{}", str(target)).replace("{out}", str(slot / "out")) for a in case.argv]
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(argv, sandbox, slot / "stderr", timeout, as_limit)
            running[pid] = (case, slot, data)
        if not running:
            return
        pid, wstatus, usage = os.wait4(-1, 0)
        case, slot, data = running.pop(pid)
        sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
        status = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
        stderr = (slot / "stderr").read_text(errors="replace")
        target = slot / f"input{case.seed_file.suffix}"
        wrote = None
        if target.read_bytes() != data:
            wrote = "the input file was changed"
        elif any((slot / "cwd").iterdir()):
            wrote = "wrote " + ", ".join(p.name for p in (slot / "cwd").iterdir())
        problem = _judge(case, status, sig, stderr, wrote)
        on_done(Outcome(case, status, sig, stderr, usage.ru_maxrss, problem), slot, target)
        shutil.rmtree(slot, ignore_errors=True)


def warm_up() -> None:
    """Import every module a command needs, once, before the first fork."""
    import npu.api  # noqa: F401
    import npu.cli  # noqa: F401
    import weaklink.analyze  # noqa: F401
    import weaklink.check  # noqa: F401
    import weaklink.cli
    import weaklink.resolve  # noqa: F401
    weaklink.cli.build_parser()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per input")
    ap.add_argument("--jobs", type=int, default=1, help="children at once")
    ap.add_argument("--save", type=Path, help="keep each crashing or hanging input here")
    ap.add_argument("--cache", help="fixture build directory (default $WEAKLINK_CACHE or .cache)")
    ap.add_argument("--kinds", help="comma-separated input kinds (default: all)")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="weaklink-fuzz-"))
    try:
        seeds = build_seeds(work / "seeds", args.cache)
        if args.kinds:
            seeds.kinds = {k: v for k, v in seeds.kinds.items() if k in args.kinds.split(",")}
        warm_up()
        as_limit = _address_space() + ADDRESS_SPACE_HEADROOM
        cases = plan(seeds, args.inputs, args.seed)
        if not _seeds_pass(seeds, args.seed, args.timeout, work, as_limit):
            return 2
        counts = {"crash": 0, "hang": 0}
        per_kind: dict[str, list[int]] = {}
        max_rss = [0]
        t0 = time.monotonic()

        def done(o: Outcome, slot: Path, target: Path) -> None:
            max_rss[0] = max(max_rss[0], o.rss_kib)
            stats = per_kind.setdefault(o.case.kind, [0, 0, 0, 0])
            stats[{0: 0, 1: 1, 2: 2}.get(o.status, 3)] += 1
            if o.problem:
                counts["hang" if o.problem == "hang" else "crash"] += 1
                args_shown = " ".join(o.case.argv)
                print(f"#{o.case.index} {o.case.kind} [{'+'.join(o.case.mutations)}] {args_shown}: "
                      f"{o.problem}", file=sys.stderr)
                if args.save:
                    args.save.mkdir(parents=True, exist_ok=True)
                    keep = args.save / f"{o.case.index}-{o.case.kind}{target.suffix}"
                    shutil.copyfile(target, keep)
                    keep.with_suffix(keep.suffix + ".txt").write_text(
                        f"{args_shown}\n{o.problem}\n{o.stderr}")

        run_cases(cases, args.seed, args.timeout, args.jobs, work, as_limit, done)
        for kind, (ok, fail, bad, other) in sorted(per_kind.items()):
            print(f"  {kind:10} exit 0: {ok:5}  exit 1: {fail:5}  exit 2: {bad:5}  other: {other}")
        print(f"  ({time.monotonic() - t0:.0f} s, seed {args.seed}, {args.jobs} job(s), "
              f"limit {args.timeout:g} s per input)")
        print(f"fuzz {len(cases)} inputs: {counts['crash']} crashes, {counts['hang']} hangs, "
              f"max RSS {max_rss[0] / 1024:.0f} MiB")
        return 1 if counts["crash"] or counts["hang"] else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _seeds_pass(seeds: Seeds, seed: int, timeout: float, work: Path, as_limit: int) -> bool:
    """Every command must accept its unmutated seeds (exit 0 or 1): else mutants test nothing."""
    cases = [Case(-1 - k, kind, f, argv, ()) for k, (kind, f, argv) in enumerate(
        (kind, f, argv) for kind, e in seeds.kinds.items() for f in e.files for argv in e.commands)]
    bad = []

    def done(o: Outcome, slot, target) -> None:
        expected = (0, 1, 2) if o.case.seed_file in seeds.kinds[o.case.kind].rejected else (0, 1)
        if o.status not in expected or o.problem:
            bad.append(f"seed {o.case.seed_file} ({o.case.kind}): {' '.join(o.case.argv)}: "
                       f"exit {o.status}: {o.stderr.strip()[-300:]}")

    run_cases(cases, seed, timeout, 2, work, as_limit, done)
    for line in bad:
        print(f"fuzz: bad seed: {line}", file=sys.stderr)
    return not bad


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


if __name__ == "__main__":
    sys.exit(main())

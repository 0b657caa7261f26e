"""A larger differential sweep of the link model against the real arm-none-eabi-ld.

    python benchmarks/sweep_link.py [--real 1000] [--asm 2000] [--start 100000] [--jobs 2]

--real: real-world links (tests/link/realgen.py: compiled C/C++, newlib through the gcc
driver, -T or ld's default script, --gc-sections, --wrap, --defsym, -u, groups);
--asm: assembly scenarios (tests/link/linkgen.py: weak/strong/common/absolute, COMDAT,
archives, groups, --whole-archive, -u, --defsym, -T scripts, muldefs). Seeds start at
--start (the CI tests use 0..349 and 0..319). Prints the agreement and every disagreement.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "link"))

import linkgen  # noqa: E402
import realgen  # noqa: E402

from weaklink.scenario import Scenario  # noqa: E402


def sweep_real(seeds, root: Path, jobs: int) -> list[tuple[int, list[str]]]:
    pool = realgen.unit_pool()
    gens = [realgen.generate(s, root / f"r{s}", pool) for s in seeds]

    def one(sc):
        realgen.build(sc)
        return sc.seed, realgen.compare(sc)
    with ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(one, gens))


def sweep_asm(seeds, root: Path, jobs: int) -> list[tuple[int, list[str]]]:
    gens = [(s, linkgen.generate(s, root / f"a{s}")) for s in seeds]
    linkgen.build_all([g for _, g in gens], workers=jobs)

    def one(item):
        seed, gen = item
        try:
            return seed, linkgen.compare(Scenario(gen.root), gen.args)
        except linkgen.LdCrashed:
            return seed, None
    with ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(one, gens))


def report(name: str, results, elapsed: float) -> int:
    done = [(s, d) for s, d in results if d is not None]
    bad = [(s, d) for s, d in done if d]
    for seed, diffs in bad:
        print(f"  {name} seed {seed}: " + "; ".join(x[:300] for x in diffs))
    crashed = len(results) - len(done)
    extra = f" ({crashed} where ld itself aborted)" if crashed else ""
    print(f"{name}: model = ld on {len(done) - len(bad)}/{len(done)} links{extra}, "
          f"{elapsed:.0f} s")
    return len(bad)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", type=int, default=1000)
    ap.add_argument("--asm", type=int, default=2000)
    ap.add_argument("--start", type=int, default=100000)
    ap.add_argument("--jobs", type=int, default=2)
    opts = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if opts.real:
            t = time.perf_counter()
            res = sweep_real(range(opts.start, opts.start + opts.real), root, opts.jobs)
            bad += report("real-world (gcc driver, newlib)", res, time.perf_counter() - t)
        if opts.asm:
            t = time.perf_counter()
            res = sweep_asm(range(opts.start, opts.start + opts.asm), root, opts.jobs)
            bad += report("assembly scenarios", res, time.perf_counter() - t)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

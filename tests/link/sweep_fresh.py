"""Fresh-seed sweeps of the GNU differential tests, run by hand (CI runs fixed seeds only):

    python tests/link/sweep_fresh.py [--generator gnu|real] [--seeds 40] [--first N] [--dir DIR]

gnu:  linkgen.py scenarios, the model against arm-none-eabi-ld (as test_differential.py);
real: realgen.py links through arm-none-eabi-gcc and newlib (as test_realworld.py).
Without --first the seeds start at a random number, printed so a failure can be replayed;
a failing seed belongs in the fixed range of the test once it is fixed.
The lld flavor has its own sweep: tests/link/sweep_lld.py --first N.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import linkgen  # noqa: E402
import realgen  # noqa: E402

from weaklink.scenario import Scenario  # noqa: E402


def sweep_gnu(seeds: range, root: Path) -> list[str]:
    gens = [(s, linkgen.generate(s, root / f"s{s}")) for s in seeds]
    linkgen.build_all([g for _, g in gens])
    failures = []
    for seed, gen in gens:
        try:
            diffs = linkgen.compare(Scenario(gen.root), gen.args)
        except linkgen.LdCrashed:       # ld 2.40 aborts on a few scenarios: nothing to compare
            continue
        if diffs:
            failures.append(f"seed {seed}: ld {' '.join(gen.args)}\n  " + "\n  ".join(diffs))
    return failures


def sweep_real(seeds: range, root: Path) -> list[str]:
    pool = realgen.unit_pool()
    gens = [realgen.generate(s, root / f"s{s}", pool) for s in seeds]
    for g in gens:
        realgen.build(g)
    return [f"seed {g.seed}: {' '.join(g.argv[1:])}\n  " + "\n  ".join(d[:600] for d in diffs)
            for g in gens if (diffs := realgen.compare(g))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generator", choices=("gnu", "real"), default="gnu")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--first", type=int, default=random.SystemRandom().randrange(10**6, 10**9))
    ap.add_argument("--dir", default=tempfile.mkdtemp(prefix="weaklink-fresh-"))
    opts = ap.parse_args()
    seeds = range(opts.first, opts.first + opts.seeds)
    t = time.time()
    sweep = sweep_gnu if opts.generator == "gnu" else sweep_real
    failures = sweep(seeds, Path(opts.dir))
    print(f"{opts.generator}: seeds {seeds.start}..{seeds.stop - 1}: "
          f"{len(seeds) - len(failures)}/{len(seeds)} agree ({time.time() - t:.0f} s)")
    print("\n".join(failures[:5]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

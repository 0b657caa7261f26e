"""A larger sweep than the CI test, run by hand:

    python tests/link/sweep_lld.py [--seeds 3000] [--first 0] [--plot sweep.png] [--dir DIR]

1. lld model vs ld.lld-16 on lldgen.py scenarios: the agreement figure (as in
   test_lld_differential.py: exit status, errors with messages, --why-extract, backrefs,
   defining files read from the image).
2. GNU ld vs ld.lld on linkgen.py scenarios (the GNU differential generator): how often the
   real linkers decide differently (outcome, errors, extracted members), and how often
   `weaklink link --compare gnu,lld` predicts exactly those differences.
--plot draws both as one bar chart (matplotlib).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import linkgen  # noqa: E402
import lldgen  # noqa: E402

from weaklink.resolve import link, lld  # noqa: E402
from weaklink.resolve.compare import compare  # noqa: E402
from weaklink.resolve.lld.oracle import run_lld  # noqa: E402
from weaklink.scenario import Scenario  # noqa: E402

KINDS = ("outcome", "error", "extracted")


def _member(name: str) -> str:
    """lib.a(m.o) and GNU's thin-archive path m.o name the same member."""
    return name[name.index("(") + 1:-1] if name.endswith(")") else name.rsplit("/", 1)[-1]


def real_differences(sc: Scenario, args: list[str]) -> set[str]:
    gnu, lld = sc.ld(args), run_lld(args, sc.root)
    kinds = set()
    if gnu.ok != lld.ok:
        kinds.add("outcome")
    if {(k, s) for k, s, _ in gnu.errors} != {(e.kind, e.symbol) for e in lld.errors}:
        kinds.add("error")
    if lld.why_extract is not None and (
            {_member(x.member) for x in gnu.map.archive_members if x.symbol != "--whole-archive"}
            != {_member(m) for _, m, _ in lld.why_extract}):
        kinds.add("extracted")
    return kinds


def predicted_differences(sc: Scenario, args: list[str]) -> set[str]:
    cwd = str(sc.root)
    result = compare(link(args, cwd=cwd), lld.link(args, cwd=cwd), args)
    got = {d.kind for d in result.differences} & set(KINDS)
    if any(e.kind == "multiple-definition" for e in result.lld.errors):
        got.discard("extracted")        # lld writes no --why-extract then: nothing to compare
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--plot", metavar="FILE.png")
    ap.add_argument("--dir", default=tempfile.mkdtemp(prefix="weaklink-sweep-"))
    opts = ap.parse_args()
    root, seeds = Path(opts.dir), range(opts.first, opts.first + opts.seeds)
    t = time.time()

    gens = [(s, lldgen.generate(s, root / "lld" / f"s{s}")) for s in seeds]
    linkgen.build_all([g for _, g in gens])
    bad = [s for s, g in gens if lldgen.compare(g.root, g.args)]
    agree = len(gens) - len(bad)
    print(f"lld model vs ld.lld-16: {agree}/{len(gens)} agree ({100 * agree / len(gens):.2f}%)"
          + (f"; failing seeds {bad[:20]}" if bad else ""))

    gens = [(s, linkgen.generate(s, root / "gnu" / f"s{s}")) for s in seeds]
    linkgen.build_all([g for _, g in gens])
    real, predicted, exact, n = Counter(), Counter(), 0, 0
    for _, g in gens:
        sc = Scenario(g.root)
        r = real_differences(sc, g.args)
        if "internal error" in sc.ld(g.args).stderr:
            continue
        p = predicted_differences(sc, g.args)
        n += 1
        real.update(r)
        real["any"] += bool(r)
        predicted.update(p)
        predicted["any"] += bool(p)
        exact += r == p
    print(f"GNU ld vs ld.lld on {n} GNU-generator scenarios: the real linkers differ in "
          f"{real['any']} ({100 * real['any'] / n:.1f}%): " +
          ", ".join(f"{k} {real[k]}" for k in KINDS))
    print(f"--compare predicted {predicted['any']}: " +
          ", ".join(f"{k} {predicted[k]}" for k in KINDS) +
          f"; exactly the real kinds in {exact}/{n} scenarios ({100 * exact / n:.1f}%)")
    print(f"({time.time() - t:.0f} s, scenarios in {root})")
    if opts.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        labels = ["any", *KINDS]
        fig, ax = plt.subplots(figsize=(7, 4))
        x = range(len(labels))
        ax.bar([i - 0.2 for i in x], [100 * real[k] / n for k in labels], 0.4,
               label="real GNU ld 2.40 vs ld.lld 16")
        ax.bar([i + 0.2 for i in x], [100 * predicted[k] / n for k in labels], 0.4,
               label="weaklink link --compare gnu,lld")
        ax.set_xticks(list(x), labels)
        ax.set_ylabel("% of scenarios that differ")
        ax.set_title(f"{n} random links; lld model = ld.lld on {agree}/{len(gens)}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(opts.plot, dpi=120)
        print(f"figure: {opts.plot}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())

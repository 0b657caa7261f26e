"""Differential test: random scenarios linked by the real ld.lld-16 and by the lld model.

350 fixed seeds (new seeds are swept by hand: tests/link/sweep_lld.py --first N), and 100
scenarios of the GNU differential generator (linkgen.py: -T scripts with ENTRY/PROVIDE/
assignments, -y, thin archives), whose definitions are not all distinct. Agreement must be
100%: exit status, errors (kind, symbol, and the whole message in lld's wording), the
--why-extract list in order, --warn-backrefs warnings, and the defining file of every global symbol read back
from the linked image (lldgen.py gives every definition distinct contents).
"""
from __future__ import annotations

import pytest
import linkgen
from lldgen import compare, generate
from linkgen import build_all
from snippets import needs_toolchain

from weaklink.resolve.lld import oracle

SEEDS = range(350)

needs_lld = pytest.mark.skipif(not oracle.available(), reason="ld.lld-16 not installed "
                               "(apt-get install lld-16)")


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    root = tmp_path_factory.mktemp("lld")
    gens = [(seed, generate(seed, root / f"s{seed}")) for seed in SEEDS]
    build_all([g for _, g in gens])
    return gens


@needs_toolchain
@needs_lld
def test_lld_model_agrees_with_ld_lld(scenarios):
    failures = []
    for seed, gen in scenarios:
        diffs = compare(gen.root, gen.args)
        if diffs:
            failures.append(f"seed {seed}: ld.lld {' '.join(gen.args)}\n  " + "\n  ".join(diffs))
    agree = len(scenarios) - len(failures)
    print(f"lld differential agreement: {agree}/{len(scenarios)} scenarios")
    assert len(scenarios) >= 300
    assert not failures, f"{agree}/{len(scenarios)} agree\n" + "\n".join(failures[:5])


@needs_toolchain
def test_lld_generator_covers_the_features(scenarios):
    joined = [" ".join(g.args) for _, g in scenarios]
    for feature in ("--start-lib", "--start-group", "--whole-archive", "-u ", "--defsym",
                    " -l", "--warn-backrefs", "--wrap", "--gc-sections"):
        assert sum(feature in a for a in joined) >= 10, feature
    assert sum("muldefs" in a or "multiple-definition" in a for a in joined) >= 10
    comdat = sum("comdat" in src for _, g in scenarios for src in g.sources.values())
    assert comdat >= 50


@pytest.fixture(scope="module")
def gnu_scenarios(tmp_path_factory):
    root = tmp_path_factory.mktemp("lld-gnu")
    gens = [(seed, linkgen.generate(seed, root / f"s{seed}")) for seed in range(100)]
    build_all([g for _, g in gens])
    return gens


@needs_toolchain
@needs_lld
def test_lld_model_agrees_on_the_gnu_generators_scenarios(gnu_scenarios):
    failures = [f"seed {seed}: ld.lld {' '.join(g.args)}\n  " + "\n  ".join(d)
                for seed, g in gnu_scenarios if (d := compare(g.root, g.args))]
    assert not failures, "\n".join(failures[:5])

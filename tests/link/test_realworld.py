"""Differential test on real-world links: compiled C and C++ objects (COMDAT, -ffunction-sections)
linked through arm-none-eabi-gcc with newlib (nosys, nano, rdimon; -lm), with and without -T,
--gc-sections, --wrap, --defsym, -u and groups (realgen.py). The real link is the oracle;
agreement must be 100% on exit status, errors, extracted members in order, commons, -y lines,
the --cref table, every symbol's defining file and the collected sections.

320 fixed seeds, the same in every run; new seeds are swept by hand with
benchmarks/sweep_link.py --real N --start S."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import realgen
from snippets import needs_toolchain

SEEDS = range(320)


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    pool = realgen.unit_pool()
    gens = [realgen.generate(seed, root / f"s{seed}", pool) for seed in SEEDS]
    for u in pool:                                 # compile (or fetch) each unit once
        realgen.compile_unit(u, root / "warm.o")
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(realgen.build, gens))
    return gens


@needs_toolchain
def test_model_agrees_with_ld_on_real_links(scenarios):
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(realgen.compare, scenarios))
    failures = [f"seed {sc.seed}: {' '.join(sc.argv[1:])}\n  " + "\n  ".join(d[:600] for d in diffs)
                for sc, diffs in zip(scenarios, results) if diffs]
    agree = len(scenarios) - len(failures)
    print(f"real-world differential agreement: {agree}/{len(scenarios)} links")
    assert len(scenarios) >= 300
    assert not failures, f"{agree}/{len(scenarios)} agree\n" + "\n".join(failures[:5])


@needs_toolchain
def test_real_generator_covers_the_features(scenarios):
    lines = [" ".join(sc.argv) for sc in scenarios]
    for feature in ("--gc-sections", "--wrap=malloc", "--wrap=h1", "--defsym", "-T,gen.ld",
                    "nano.specs", "rdimon.specs", "nosys.specs", "-lm", "--start-group", "-u,"):
        assert sum(feature in a for a in lines) >= 10, feature
    assert sum("-T" not in a for a in lines) >= 150            # ld's default script
    cxx = sum(any(u.cxx for u in sc.units) for sc in scenarios)
    assert cxx >= 100                                          # COMDAT from compiled C++

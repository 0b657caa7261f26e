"""weaklink.arraysets against numpy's own np.unique and np.isin, on random arrays."""
from __future__ import annotations

import numpy as np
import pytest

from weaklink import arraysets


@pytest.mark.parametrize("seed", range(8))
def test_same_answers_as_numpy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    high = [3, 50, 1 << 30, 1 << 40][seed % 4]           # small keys are counted, big sorted
    values = rng.integers(0, high, n)
    pool = rng.integers(0, high, int(rng.integers(0, 50)))
    assert np.array_equal(arraysets.unique(values), np.unique(values))
    for ours, theirs in zip(arraysets.first_occurrences(values),
                            np.unique(values, return_index=True)):
        assert np.array_equal(ours, theirs)
    for ours, theirs in zip(arraysets.counts(values), np.unique(values, return_counts=True)):
        assert np.array_equal(ours, theirs)
    assert np.array_equal(arraysets.member(values, pool), np.isin(values, pool))
    uniq, inverse = arraysets.categories(values)
    want_uniq, want_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(uniq, want_uniq) and np.array_equal(inverse, want_inverse.reshape(-1))


def test_numpy_ma_is_not_imported():
    import subprocess
    import sys
    code = ("import sys, numpy as np\n"
            "from weaklink import arraysets as a\n"
            "v = np.array([3, 1, 3, 2])\n"
            "a.unique(v); a.first_occurrences(v); a.counts(v); a.member(v, v); a.categories(v)\n"
            "print('numpy.ma' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("n", [0, 1, 100, arraysets.RADIX_FROM, 50_000])
def test_stable_order_is_numpys_stable_argsort(dtype, n):
    rng = np.random.default_rng(n)
    top = np.iinfo(dtype).max
    cases = [rng.integers(0, top, n, dtype=dtype, endpoint=True),              # every digit
             rng.integers(0, 40, n).astype(dtype) * dtype(1 << 17),            # ties, one digit
             np.full(n, 7, dtype),                                             # no digit moves
             np.array(sorted(rng.integers(0, top, n, dtype=dtype)), dtype)[::-1].copy()]
    for keys in cases:
        assert np.array_equal(arraysets.stable_order(keys), np.argsort(keys, kind="stable"))

"""weaklink.threads.run_all: results in argument order, the first failure (in argument order)
raised in the caller's thread, the functions really running at once."""
from __future__ import annotations

import itertools
import threading

import pytest

from weaklink.threads import run_all


def test_results_in_argument_order_and_at_once():
    both = threading.Barrier(2, timeout=30)       # each waits for the other: both must run

    def one():
        both.wait()
        return "one"

    def two():
        both.wait()
        return 2

    assert run_all(one, two) == ["one", 2]


def test_the_first_failure_in_argument_order_is_raised():
    def bad(kind):
        def f():
            raise kind("boom")
        return f

    with pytest.raises(KeyError):
        run_all(lambda: 1, bad(KeyError), bad(ValueError))
    with pytest.raises(ValueError):
        run_all(bad(ValueError), bad(KeyError))


def test_in_order_yields_every_result_in_order():
    from weaklink.threads import in_order
    states = itertools.count(1)
    out = list(in_order(lambda k, state: (k, state), 11, state=states.__next__))
    assert [k for k, _ in out] == list(range(11))
    assert {k % 2: s for k, s in out} == {0: out[0][1], 1: out[1][1]}   # one state per lane
    assert sorted({s for _, s in out}) == [1, 2]


def test_in_order_raises_in_turn_and_stops_when_abandoned():
    from weaklink.threads import in_order

    def f(k, _):
        if k == 5:
            raise ValueError(k)
        return k

    got = []
    with pytest.raises(ValueError):
        for x in in_order(f, 100):
            got.append(x)
    assert got == [0, 1, 2, 3, 4]
    before = threading.active_count()
    stream = in_order(lambda k, _: k, 1000)
    assert next(stream) == 0
    stream.close()                      # the threads stop (joined in close)
    assert threading.active_count() == before

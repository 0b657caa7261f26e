"""weaklink.threads.run_all: results in argument order, the first failure (in argument order)
raised in the caller's thread, the functions really running at once."""
from __future__ import annotations

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

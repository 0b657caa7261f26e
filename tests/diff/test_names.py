"""weaklink.diff.names.match against a dictionary of Python byte strings: short names (hashed
as words), long ones (byte by byte), names sharing prefixes, empty and repeated names."""
from __future__ import annotations

import numpy as np
import pytest

from weaklink.diff import names


def _table(words: list[bytes]):
    strtab = b"\0" + b"".join(w + b"\0" for w in words)
    off = np.cumsum([1] + [len(w) + 1 for w in words])[:-1]
    return (np.frombuffer(strtab, np.uint8), off.astype(np.int64),
            np.array([len(w) for w in words], np.int64))


def _reference(old: list[bytes], new: list[bytes]):
    first = {}
    for i, w in enumerate(old):
        first.setdefault(w, i)
    pairs, seen = [], set()
    for j, w in enumerate(new):
        i = first.get(w)
        if i is not None and i not in seen:        # a name repeated in NEW is paired once
            pairs.append((i, j))
            seen.add(i)
    return pairs


@pytest.mark.parametrize("seed", range(10))
def test_match_equals_a_dictionary(seed):
    rng = np.random.default_rng(seed)
    alphabet = np.frombuffer(b"ab_Z09", np.uint8)

    def word():
        n = int(rng.choice([0, 1, 7, 8, 9, 31, 32, 33, 40, 200]))
        return bytes(alphabet[rng.integers(0, len(alphabet), n)])

    pool = [word() for _ in range(60)] + [b"x" * 32 + b"a", b"x" * 32 + b"b", b"x" * 32]
    old = [pool[k] for k in rng.integers(0, len(pool), 80)]
    new = [pool[k] for k in rng.integers(0, len(pool), 80)]
    io, jn, added, removed = names.match(names.keys(*_table(old)), names.keys(*_table(new)))
    got = sorted(zip(io.tolist(), jn.tolist()))
    want = _reference(old, new)
    assert list(zip(io.tolist(), jn.tolist())) == want     # the same pairs, in NEW row order
    assert {old[i] for i, _ in got} == {old[i] for i, _ in want}
    assert all(old[i] == new[j] for i, j in got)
    assert sorted(set(range(len(new))) - {j for _, j in got}) == added.tolist()
    assert sorted(set(range(len(old))) - {i for i, _ in got}) == removed.tolist()


def test_hashes_of_equal_names_are_equal_wherever_they_sit():
    words = [b"", b"a", b"ab" * 16, b"ab" * 16 + b"c", b"q" * 100]
    a, b = _table(words), _table(list(reversed(words)))
    assert names.hashes(*a).tolist() == list(reversed(names.hashes(*b).tolist()))
    assert len(set(names.hashes(*a).tolist())) == len(words)


def test_match_with_an_empty_side():
    some = names.keys(*_table([b"a", b"bb", b"a"]))
    none = names.keys(*_table([]))
    io, jn, added, removed = names.match(none, some)
    assert (io.tolist(), jn.tolist(), added.tolist(), removed.tolist()) == ([], [], [0, 1, 2], [])
    io, jn, added, removed = names.match(some, none)
    assert (io.tolist(), jn.tolist(), added.tolist(), removed.tolist()) == ([], [], [], [0, 1, 2])

"""Symbol names of two images matched without a Python object per name.

A name is a (offset, length) slice of its image's .strtab. Each name gets a 64-bit hash: names
of up to WIDE bytes (most) as four 64-bit words each, the longer ones one byte position at a
time over the names still that long (the work is their total length, not count × longest);
equal hashes pair the rows, and the pairs are then confirmed byte by byte, so a collision can
never pair two different names (it could at worst show one name as removed and added).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided


_PRIME = np.uint64(1099511628211)


def _by_position(length: np.ndarray):
    """Rows ordered by length, longest first, and for each position k how many rows are
    longer than k (the rows that have a byte there)."""
    order = np.argsort(-length, kind="stable")
    longest = int(length.max(initial=0))
    count = np.searchsorted(-length[order], -np.arange(longest), side="left")
    return order, count


# Names up to this long (most) are hashed and compared as four 64-bit words each.
WIDE = 32
# _MASKS[n]: the first n of WIDE bytes kept, as four little-endian words.
_MASKS = (np.arange(WIDE) < np.arange(WIDE + 1)[:, None]).astype(np.uint8) * np.uint8(255)
_MASKS = _MASKS.view(np.uint64)


def _words(u8: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Names of at most WIDE bytes as rows of WIDE // 8 uint64 words, zero past each name's
    end (rows of longer names hold their first WIDE bytes)."""
    # Windows of WIDE bytes straight over the table; the few names that start within WIDE
    # bytes of its end are read from a zero-padded copy of that end.
    n = len(u8)
    words = np.zeros((len(off), WIDE), np.uint8)
    near_end = off > n - WIDE
    if n >= WIDE:
        inside = np.flatnonzero(~near_end)
        window = as_strided(u8, (n - WIDE + 1, WIDE), (1, 1), writeable=False)
        words[inside] = window[off[inside]]
    end = np.flatnonzero(near_end)
    if end.size:
        base = max(n - WIDE, 0)
        tail = np.zeros(2 * WIDE, np.uint8)
        tail[:n - base] = u8[base:]
        words[end] = as_strided(tail, (WIDE + 1, WIDE), (1, 1), writeable=False)[off[end] - base]
    words = words.view(np.uint64)
    words &= _MASKS[np.minimum(length, WIDE)]
    return words


def _hash_words(words: np.ndarray, length: np.ndarray) -> np.ndarray:
    h = length.astype(np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h = (h ^ words[:, j]) * _PRIME
    return h


def hashes(u8: np.ndarray, off: np.ndarray, length: np.ndarray, words=None) -> np.ndarray:
    """One uint64 per name, seeded with its length (`words`: _words of the same names)."""
    words = _words(u8, off, length) if words is None else words
    h = _hash_words(words, length)
    rest = np.flatnonzero(length > WIDE)
    if rest.size:
        h[rest] = _bytewise_hashes(u8, off[rest], length[rest])
    return h


def _bytewise_hashes(u8: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
    h = length.astype(np.uint64)
    order, count = _by_position(length)
    with np.errstate(over="ignore"):
        for k, m in enumerate(count.tolist()):
            rows = order[:m]
            h[rows] = h[rows] * _PRIME + (u8[off[rows] + k].astype(np.uint64) + np.uint64(1))
    return h


def equal(u8a, offa, u8b, offb, length, words_a=None, words_b=None) -> np.ndarray:
    """Rows whose names (both `length` long) are byte-for-byte equal (`words_*`: their _words,
    when already made)."""
    wa = _words(u8a, offa, length) if words_a is None else words_a
    wb = _words(u8b, offb, length) if words_b is None else words_b
    out = (wa == wb).all(axis=1)
    rest = np.flatnonzero(out & (length > WIDE))
    if rest.size:
        out[rest] = _bytewise_equal(u8a, offa[rest], u8b, offb[rest], length[rest])
    return out


def _bytewise_equal(u8a, offa, u8b, offb, length) -> np.ndarray:
    out = np.ones(len(offa), bool)
    order, count = _by_position(length)
    for k, m in enumerate(count.tolist()):
        rows = order[:m]
        out[rows] &= u8a[offa[rows] + k] == u8b[offb[rows] + k]
    return out


class Keys(namedtuple("Keys", "u8 order hashes off length words")):
    """The names of one image, ready to be matched: their string table `u8`, the rows in hash
    order (`order`; stable: among equal hashes, the first row first), and in that order each
    row's hash, name offset and length, and _words. Made per image by keys(), in the thread
    that analyses it, so that the match of two images reads both in order, not at random."""


def keys(u8: np.ndarray, off: np.ndarray, length: np.ndarray) -> Keys:
    words = _words(u8, off, length)
    h = hashes(u8, off, length, words=words)
    order = np.argsort(h, kind="stable")
    return Keys(u8, order, h[order], off[order], length[order], words[order])


def match(a: Keys, b: Keys):
    """The names of two images (OLD, NEW) matched. Returns (io, jn, added, removed): the paired
    rows, in NEW row order (a name repeated in NEW is paired once, its first row; a name
    repeated in OLD pairs its first row), NEW rows without a partner, OLD rows without one."""
    na, nb = len(a.order), len(b.order)
    if not na or not nb:
        none = np.zeros(0, np.int64)
        return none, none, np.arange(nb), np.arange(na)
    # Positions in hash order: NEW's sorted hashes looked up in OLD's, a walk in step.
    pos = np.minimum(np.searchsorted(a.hashes, b.hashes), na - 1)
    kb = np.flatnonzero(a.hashes[pos] == b.hashes)
    ka = pos[kb]
    same = a.length[ka] == b.length[kb]
    k = np.flatnonzero(same)
    same[k] = equal(a.u8, a.off[ka[k]], b.u8, b.off[kb[k]], a.length[ka[k]], a.words[ka[k]],
                    b.words[kb[k]])
    ka, kb = ka[same], kb[same]
    if len(ka) > 1:                      # NEW rows of one name are adjacent: keep the first
        first = np.concatenate(([True], ka[1:] != ka[:-1]))
        ka, kb = ka[first], kb[first]
    partner = np.full(nb, -1, np.int64)              # NEW row -> OLD row
    partner[b.order[kb]] = a.order[ka]
    jn = np.flatnonzero(partner >= 0)
    io = partner[jn]
    used = np.zeros(na, bool)
    used[io] = True
    return io, jn, np.flatnonzero(partner < 0), np.flatnonzero(~used)

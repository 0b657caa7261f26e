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

from weaklink.arraysets import first_occurrences

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


class Keys(namedtuple("Keys", "u8 off length words hashes order")):
    """The names of one image, ready to be matched: their bytes (`u8`, `off`, `length`), their
    _words and hashes, and the rows in hash order (stable: among equal hashes, the first row
    first). Made per image by keys(), so that the two images' keys are made at once."""


def keys(u8: np.ndarray, off: np.ndarray, length: np.ndarray) -> Keys:
    words = _words(u8, off, length)
    h = hashes(u8, off, length, words=words)
    return Keys(u8, off, length, words, h, np.argsort(h, kind="stable"))


def match(a: Keys, b: Keys):
    """The names of two images (OLD, NEW) matched. Returns (io, jn, added, removed): the paired
    rows (a name repeated in NEW is paired once), NEW rows without a partner, OLD rows without
    one."""
    wa, wb, ka, kb, order = a.words, b.words, a.hashes, b.hashes, a.order
    query = b.order                                     # sorted queries: a cache-friendly walk
    pos = np.empty(len(kb), np.int64)
    pos[query] = np.searchsorted(ka[order], kb[query])
    pos = np.minimum(pos, max(len(order) - 1, 0))
    pair = order[pos] if len(order) else np.full(len(kb), -1, np.int64)
    hit = (ka[pair] == kb) if len(order) else np.zeros(len(kb), bool)
    jn = np.flatnonzero(hit)
    io = pair[jn]
    same = (a[2][io] == b[2][jn])
    k = np.flatnonzero(same)
    same[k] = equal(a[0], a[1][io[k]], b[0], b[1][jn[k]], a[2][io[k]], wa[io[k]], wb[jn[k]])
    jn, io = jn[same], io[same]
    if len(io) and np.bincount(io, minlength=len(a[1])).max() > 1:
        _, first = first_occurrences(io)
        jn, io = jn[np.sort(first)], io[np.sort(first)]
    paired = np.zeros(len(b[1]), bool)
    paired[jn] = True
    used = np.zeros(len(a[1]), bool)
    used[io] = True
    return io, jn, np.flatnonzero(~paired), np.flatnonzero(~used)

"""Symbol names of two images matched without a Python object per name.

A name is a (offset, length) slice of its image's .strtab. Each name gets a 64-bit polynomial
hash, computed one byte position at a time over the names still that long (the work is the
total length of the names, not count × longest); equal hashes pair the rows, and the pairs are
then confirmed byte by byte, so a collision can never pair two different names (it could at
worst show one name as removed and added, with odds about n² / 2^64).
"""
from __future__ import annotations

import numpy as np

from weaklink.arraysets import first_occurrences

_PRIME = np.uint64(1099511628211)


def _by_position(length: np.ndarray):
    """Rows ordered by length, longest first, and for each position k how many rows are
    longer than k (the rows that have a byte there)."""
    order = np.argsort(-length, kind="stable")
    longest = int(length.max(initial=0))
    count = np.searchsorted(-length[order], -np.arange(longest), side="left")
    return order, count


def hashes(u8: np.ndarray, off: np.ndarray, length: np.ndarray) -> np.ndarray:
    """One uint64 per name, seeded with its length."""
    h = length.astype(np.uint64)
    order, count = _by_position(length)
    with np.errstate(over="ignore"):
        for k, m in enumerate(count.tolist()):
            rows = order[:m]
            h[rows] = h[rows] * _PRIME + (u8[off[rows] + k].astype(np.uint64) + np.uint64(1))
    return h


def equal(u8a, offa, u8b, offb, length) -> np.ndarray:
    """Rows whose names (both `length` long) are byte-for-byte equal."""
    out = np.ones(len(offa), bool)
    order, count = _by_position(length)
    for k, m in enumerate(count.tolist()):
        rows = order[:m]
        out[rows] &= u8a[offa[rows] + k] == u8b[offb[rows] + k]
    return out


def match(a, b):
    """a, b: (u8, off, length) of two images. Returns (io, jn, added, removed): the paired
    rows (a name repeated in NEW is paired once), NEW rows without a partner, OLD rows without
    one."""
    ka, kb = hashes(*a), hashes(*b)
    order = np.argsort(ka, kind="stable")
    query = np.argsort(kb, kind="stable")               # sorted queries: a cache-friendly walk
    pos = np.empty(len(kb), np.int64)
    pos[query] = np.searchsorted(ka[order], kb[query])
    pos = np.minimum(pos, max(len(order) - 1, 0))
    pair = order[pos] if len(order) else np.full(len(kb), -1, np.int64)
    hit = (ka[pair] == kb) if len(order) else np.zeros(len(kb), bool)
    jn = np.flatnonzero(hit)
    io = pair[jn]
    same = (a[2][io] == b[2][jn])
    same[same] = equal(a[0], a[1][io[same]], b[0], b[1][jn[same]], a[2][io[same]])
    jn, io = jn[same], io[same]
    if len(io) and np.bincount(io, minlength=len(a[1])).max() > 1:
        _, first = first_occurrences(io)
        jn, io = jn[np.sort(first)], io[np.sort(first)]
    paired = np.zeros(len(b[1]), bool)
    paired[jn] = True
    used = np.zeros(len(a[1]), bool)
    used[io] = True
    return io, jn, np.flatnonzero(~paired), np.flatnonzero(~used)

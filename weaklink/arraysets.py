"""Set operations on numpy arrays without np.unique and np.isin: numpy 2 imports numpy.ma the
first time either is called, about 25 ms of a command's start-up. Sorting and comparing
neighbours gives the same answers. And stable_order, a faster stable argsort of wide unsigned
keys."""
from __future__ import annotations

import numpy as np


def _starts(sorted_values: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins in a sorted array."""
    if not len(sorted_values):
        return np.zeros(0, bool)
    return np.concatenate(([True], sorted_values[1:] != sorted_values[:-1]))


def unique(values: np.ndarray) -> np.ndarray:
    """np.unique(values): the distinct values, sorted."""
    s = np.sort(values, axis=None)
    return s[_starts(s)]


def first_occurrences(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_index=True): the distinct values, sorted, and where each
    first occurs."""
    order = np.argsort(values, kind="stable")
    s = values[order]
    keep = _starts(s)
    return s[keep], order[keep]


def counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_counts=True)."""
    s = np.sort(values, axis=None)
    at = np.flatnonzero(_starts(s))
    return s[at], np.diff(np.concatenate((at, [len(s)])))


def member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """np.isin(values, pool): for each value, whether it occurs in pool."""
    values = np.asarray(values)
    if not len(pool) or not values.size:
        return np.zeros(values.shape, bool)
    pool = np.sort(np.asarray(pool), axis=None)
    return pool[np.minimum(np.searchsorted(pool, values), len(pool) - 1)] == values


def categories(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(key, return_inverse=True) for non-negative integer keys: counted (bincount)
    when they are small, as section and region numbers are, else sorted."""
    key = np.asarray(key, np.int64)
    if not len(key):
        return key, np.zeros(0, np.int64)
    if int(key.max()) < 1 << 20:
        uniq = np.flatnonzero(np.bincount(key))
        ids = np.zeros(int(uniq[-1]) + 1, np.int64)
    else:
        uniq = unique(key)
        ids = None
    if ids is None:
        return uniq, np.searchsorted(uniq, key)
    ids[uniq] = np.arange(len(uniq))
    return uniq, ids[key]


# Keys from this many on are ordered by radix (stable_order); fewer are not worth the passes.
RADIX_FROM = 4096


def stable_order(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys, kind="stable") for 1-D unsigned integer keys, the same order, faster
    for many wide keys: numpy sorts 16-bit keys by counting, in linear time, but 32- and 64-bit
    ones by comparison (its SIMD sorts are not used on every x86 CPU: not on AMD Zen 4). So the
    keys are ordered one 16-bit digit at a time, from the least significant (an LSD radix sort;
    each stable pass keeps the order of the digits before it), skipping digits that every key
    shares. 200k 64-bit keys: 5 ms against 15 ms."""
    keys = np.asarray(keys)
    if keys.dtype.kind != "u" or keys.dtype.itemsize < 4 or len(keys) < RADIX_FROM:
        return np.argsort(keys, kind="stable")
    order = None
    for shift in range(0, 8 * keys.dtype.itemsize, 16):
        digit = (keys >> keys.dtype.type(shift)).astype(np.uint16)    # the low 16 bits
        if digit.min() == digit.max():
            continue                            # shared by every key: no reordering
        if order is None:
            order = np.argsort(digit, kind="stable")
        else:
            order = order[np.argsort(digit[order], kind="stable")]
    return np.arange(len(keys)) if order is None else order

"""Demangle many Itanium C++ names at once, for the `demangled` column of every symbol.

From BATCH_THRESHOLD names on, the names go to c++filt processes started at once and read
when the report is written: binutils' demangler is the same libiberty code ld and nm use, and
it runs on another core while the analysis goes on (weaklink.demangle.spawn_cxxfilt: the
names are c++filt's arguments, its output an in-memory file). Fewer names, or no c++filt, or
a platform without memfd: in process, by the C++ runtime's demangler (weaklink.demangle).
"""
from __future__ import annotations

import os

from weaklink.demangle import collect, demangle_bytes, spawn_cxxfilt

# From this many names on, starting c++filt costs less than demangling in process.
BATCH_THRESHOLD = 500


class Demangling:
    """Started at construction; `lines()` waits and returns the demangled names (bytes), in
    input order. A name that is not mangled, or not valid, comes back unchanged."""

    def __init__(self, names: list[bytes]):
        self._names = names
        self._out: list[bytes] | None = None
        self._jobs = _spawn(names) if len(names) >= BATCH_THRESHOLD else []

    def lines(self) -> list[bytes]:
        if self._out is None:
            jobs, self._jobs = self._jobs, []
            out = _collect(jobs) if jobs else None
            # few names, no tool, or the tool misbehaved
            self._out = out if out is not None else list(map(demangle_bytes, self._names))
        return self._out


def _chunks(names: list[bytes]) -> list[list[bytes]]:
    """The names split so that one process's arguments stay well inside ARG_MAX."""
    try:
        budget = os.sysconf("SC_ARG_MAX") // 4
    except (AttributeError, ValueError, OSError):
        budget = 64 * 1024
    if sum(map(len, names)) + 9 * len(names) <= budget:     # the usual case: one process
        return [names]
    out, size = [[]], 0
    for n in names:
        if size + len(n) + 9 > budget and out[-1]:      # + NUL + the argv pointer
            out.append([])
            size = 0
        out[-1].append(n)
        size += len(n) + 9
    return out


def _spawn(names: list[bytes]) -> list[tuple[int, int, int]]:
    """(pid, memfd, count) of the c++filt processes demangling `names`, or [] when that
    cannot be done here."""
    jobs = []
    for chunk in _chunks(names):
        job = spawn_cxxfilt(chunk)
        if job is None:
            _collect(jobs)
            return []
        jobs.append(job)
    return jobs


def _collect(jobs: list[tuple[int, int, int]]) -> list[bytes] | None:
    """Wait for every job and return their lines in order; None if any failed."""
    out: list[bytes] | None = []
    for job in jobs:
        lines = collect(job)
        out = out + lines if out is not None and lines is not None else None
    return out

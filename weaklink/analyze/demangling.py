"""Demangle many Itanium C++ names at once, for the `demangled` column of every symbol.

From BATCH_THRESHOLD names on, the names go to c++filt processes started at once and read
when the report is written: binutils' demangler is the same libiberty code ld and nm use, and
it runs on another core while the analysis goes on. The names are c++filt's arguments, its
output goes to an in-memory file (os.memfd_create), and the processes are started with
os.posix_spawn, so no pipe has to be pumped by a thread and nothing beyond `os` is imported.
Fewer names, or no c++filt, or a platform without memfd: in process, nested data names by
weaklink.analyze.nested and the rest by weaklink.demangle (cxxfilt).
"""
from __future__ import annotations

import os

from weaklink.analyze.nested import demangle_nested
from weaklink.demangle import cxxfilt_tool, demangle

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
            self._out = out if out is not None else [_in_process(n) for n in self._names]
        return self._out


def _in_process(name: bytes) -> bytes:
    fast = demangle_nested(name)
    if fast is not None:
        return fast
    return demangle(name.decode("utf-8", "replace")).encode()


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
    tool = cxxfilt_tool()
    if tool is None or not hasattr(os, "memfd_create") or not hasattr(os, "posix_spawn"):
        return []
    jobs: list[tuple[int, int, int]] = []
    try:
        for chunk in _chunks(names):
            fd = os.memfd_create("weaklink-c++filt")
            jobs.append((-1, fd, len(chunk)))
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, fd, 1),
                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
            pid = os.posix_spawn(tool, [tool, "--", *chunk], os.environ, file_actions=actions)
            jobs[-1] = (pid, fd, len(chunk))
    except OSError:
        _collect(jobs)
        return []
    return jobs


def _collect(jobs: list[tuple[int, int, int]]) -> list[bytes] | None:
    """Wait for every job and return their lines in order; None if any failed."""
    out: list[bytes] | None = []
    for pid, fd, count in jobs:
        ok = False
        if pid > 0:
            _, status = os.waitpid(pid, 0)
            ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        with open(fd, "rb", closefd=True) as f:
            f.seek(0)
            lines = f.read().split(b"\n")
        if out is not None and ok and len(lines) == count + 1 and not lines[-1]:
            out += lines[:-1]
        else:
            out = None
    return out

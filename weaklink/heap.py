"""The C heap of a command that analyses a large image, faulted in on a spare core.

Analysing an image of 200k symbols touches some 70 MB of fresh memory (numpy's columns, the
JSON blocks), and each 4 KiB page costs a page fault on first touch: 2 to 4 us on the machines
measured, about 50 ms of a 0.3 s command, all of it on the threads doing the work. Meanwhile a
core sits idle while the main thread imports numpy (70 to 100 ms, one core).

warm(nbytes) puts that core to work: a helper thread allocates and touches `nbytes` of heap
with the GIL released (ctypes calls release it), then frees it. glibc is told first to keep
what is freed (no trimming of the heap, blocks under 32 MiB from the heap rather than from
their own mappings) and to serve every thread from one arena, so the columns and the JSON
blocks that come later reuse those pages without faulting. Measured with
benchmarks/bench_analyze.py: 200k symbols, about 10% less wall time.

This changes the allocator settings of the whole process, so only the command line uses it
(never the Python API), and only where it can help: glibc on Linux, two CPUs or more.
"""
from __future__ import annotations

import os
import sys
import threading

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
KEEP_BELOW = 32 << 20       # blocks under this size come from the heap and stay in it
CHUNK = 16 << 20            # touched in pieces under KEEP_BELOW: heap memory, not mappings


def usable() -> bool:
    """glibc on Linux, with at least two CPUs this process may run on."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, ValueError, OSError):
        return False


def warm(nbytes: int) -> threading.Thread | None:
    """Fault in about `nbytes` of heap on another thread (see the module's text); the thread,
    or None when this process cannot use it. Nothing waits for the thread: a command that
    ends first simply exits."""
    if nbytes < CHUNK or not usable():
        return None
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc, memset, free = libc.mallopt, libc.malloc, libc.memset, libc.free
    except (OSError, AttributeError):
        return None
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_size_t]
    memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    if not (mallopt(_M_MMAP_THRESHOLD, KEEP_BELOW) and mallopt(_M_TRIM_THRESHOLD, 1 << 30)
            and mallopt(_M_ARENA_MAX, 1)):
        return None

    def touch() -> None:
        blocks = []
        for _ in range(nbytes // CHUNK):
            block = malloc(CHUNK)
            if not block:
                break
            memset(block, 0, CHUNK)
            blocks.append(block)
        for block in blocks:
            free(block)

    helper = threading.Thread(target=touch, name="weaklink-heap", daemon=True)
    helper.start()
    return helper

"""Demangle many Itanium C++ names at once, for the `demangled` column of every symbol.

Nested data names are decoded in process by weaklink.analyze.nested; `Merged` puts those
lines and the real demangler's lines back in input order. Of the rest, few names go through
weaklink.demangle (cxxfilt, in process) and many through one background c++filt process:
binutils' demangler is the same libiberty code ld and nm use, and one pipe costs far less than
a foreign call per name. The result is one buffer, a name per line, in input order.
"""
from __future__ import annotations

import shutil
import subprocess
import threading

import numpy as np

# Below this many names, a process start costs more than demangling in process.
BATCH_THRESHOLD = 2000


class Demangling:
    """Started at construction; `lines()` waits and returns b"name\\n" * N, in input order."""

    def __init__(self, mangled: bytes, count: int):
        self._input, self._count = mangled, count
        self._out: bytes | None = None
        tool = shutil.which("arm-none-eabi-c++filt") or shutil.which("c++filt")
        self._thread = None
        if count >= BATCH_THRESHOLD and tool:
            self._thread = threading.Thread(target=self._pipe, args=(tool,), daemon=True)
            self._thread.start()

    def _pipe(self, tool: str) -> None:
        try:
            proc = subprocess.run([tool], input=self._input, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return
        if proc.returncode == 0 and proc.stdout.count(b"\n") == self._count:
            self._out = proc.stdout

    def lines(self) -> bytes:
        if self._thread is not None:
            self._thread.join()
        if self._out is None:     # no tool, few names, or the tool misbehaved
            from weaklink.demangle import demangle
            names = self._input.decode("utf-8", "replace").split("\n")[: self._count]
            self._out = "".join(demangle(n) + "\n" for n in names).encode()
        return self._out


def _line_spans(text: bytes) -> tuple[np.ndarray, np.ndarray]:
    ends = np.flatnonzero(np.frombuffer(text, np.uint8) == 10)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
    return starts, ends


class Merged:
    """Lines decoded in process (`ok` rows, from weaklink.analyze.nested) merged in input
    order with the lines a Demangling produces for the other rows."""

    def __init__(self, ok: np.ndarray, fast_text: bytes, rest: Demangling):
        self._ok, self._fast, self._rest = ok, fast_text, rest
        self._text: bytes | None = None

    def lines(self) -> bytes:
        if self._text is None:
            self._text = self._fast if self._ok.all() else self._merge()
        return self._text

    def _merge(self) -> bytes:
        from weaklink.analyze.jsonrows import Slice, encode_rows
        rest = self._rest.lines()
        f_start, f_end = _line_spans(self._fast)
        r_start, r_end = _line_spans(rest)
        start, end = f_start.copy(), f_end.copy()
        start[~self._ok] = r_start + len(self._fast)
        end[~self._ok] = r_end + len(self._fast)
        return encode_rows([Slice(start, end - start)], len(start), self._fast + rest,
                           sep=b"\n") + b"\n"

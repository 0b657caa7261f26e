"""Decode mlw weight streams (the default Ethos-U bitstream) without risking the process.

``ethosu.mlw_codec.decode`` calls ``exit(1)`` when a stream ends inside its data, so a
truncated or overwritten stream would end the emulator with no message. The codec runs in
one helper process (:mod:`npu.functional.mlw_worker`), started on first use and kept for the
process's life (a forked child starts its own). When the helper dies on a stream, that stream
is reported as ending inside its data and the next call starts a fresh helper.
"""
from __future__ import annotations

import atexit
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).resolve().with_name("mlw_worker.py")


class MlwError(ValueError):
    """The stream cannot be decoded; the message says why."""


class _Helper:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pid = os.getpid()

    def decode(self, data: bytes) -> np.ndarray:
        try:
            self.proc.stdin.write(struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
            head = self.proc.stdout.read(5)
            if len(head) < 5:
                raise BrokenPipeError
            status, n = struct.unpack("<BI", head)
            payload = self.proc.stdout.read(n)
            if len(payload) < n:
                raise BrokenPipeError
        except (BrokenPipeError, OSError):
            self.close()
            raise MlwError("the stream ends inside its data (the decoder ran past its last byte)") from None
        if status:
            raise MlwError(payload.decode("utf-8", "replace"))
        return np.frombuffer(payload, dtype="<i2").astype(np.int64)

    def close(self):
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_helper: _Helper | None = None
_inherited: list[_Helper] = []       # a forked child keeps its parent's helper untouched


def _shutdown():
    global _helper
    if _helper is not None and _helper.pid == os.getpid():
        _helper.close()
    _helper = None


atexit.register(_shutdown)


def decode(data: bytes) -> np.ndarray:
    """The values of one mlw stream (int64), or MlwError."""
    global _helper
    if _helper is not None and _helper.pid != os.getpid():
        _inherited.append(_helper)
        _helper = None
    if _helper is None or _helper.proc.poll() is not None:
        _helper = _Helper()          # first use, a forked child, or the last helper died
    try:
        return _helper.decode(bytes(data))
    except MlwError:
        if _helper.proc.poll() is not None:
            _helper = None
        raise

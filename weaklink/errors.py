"""The one error type for bad input: it names the file, the offset and what was expected.

Every reader raises InputError; the CLIs turn it into a single line
``weaklink: error: FILE: what (at offset N)`` and exit status 2.
"""
from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input: a file that is missing, truncated, corrupt, or not what was expected."""

    def __init__(self, path: str | Path | None, what: str, offset: int | None = None):
        self.path = str(path) if path is not None else None
        self.what = what
        self.offset = offset
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        at = f" (at offset {self.offset})" if self.offset is not None else ""
        return f"{where}{self.what}{at}"


class UsageError(Exception):
    """A command line that cannot be acted on (unknown option, missing argument)."""


class ToolchainMissing(Exception):
    """The arm-none-eabi cross toolchain (or another external tool) is not installed."""

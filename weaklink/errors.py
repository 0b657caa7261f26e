"""The one error type for bad input: it names the file, the offset and what was expected.

Every reader raises InputError; the CLIs turn it into a single line
``weaklink: error: FILE: what (at offset N)`` and exit status 2.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


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


def read_input(path: str | Path, *, name: str | None = None, text: bool = False,
               what: str = "file") -> bytes | str:
    """The contents of an input file, or one InputError saying why it cannot be read."""
    shown = name or str(path)
    try:
        p = Path(path)
        return p.read_text(errors="replace") if text else p.read_bytes()
    except FileNotFoundError:
        raise InputError(shown, "no such file") from None
    except IsADirectoryError:
        raise InputError(shown, f"is a directory, expected a {what}") from None
    except OSError as exc:
        raise InputError(shown, f"cannot read {what}: {exc.strerror}") from None


class UsageError(Exception):
    """A command line that cannot be acted on (unknown option, missing argument)."""


class ToolchainMissing(Exception):
    """The arm-none-eabi cross toolchain (or another external tool) is not installed."""


def exit_status(prog: str, action: Callable[[], int]) -> int:
    """Run a command's action: bad input or usage becomes one `PROG: error: …` line and exit
    status 2, never a traceback; a closed pipe (`| head`) is not an error."""
    try:
        return action()
    except (InputError, UsageError, ToolchainMissing) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0

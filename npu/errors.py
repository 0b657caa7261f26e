"""Bad input for the emulator: one error type naming the file, the offset and what was expected.

``npu`` stands alone: this module imports nothing from ``weaklink``. ``weaklink.errors``
re-exports :class:`InputError` and :func:`read_input` from here, so both packages raise and
catch one type, and the CLIs turn it into the line ``PROG: error: FILE: what (at offset N)``
with exit status 2.
"""
from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable


class InputError(Exception):
    """Bad input: a file that is missing, truncated, corrupt, or not what was expected."""

    def __init__(self, path: str | os.PathLike | None, what: str, offset: int | None = None):
        self.path = str(path) if path is not None else None
        self.what = what
        self.offset = offset
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        at = f" (at offset {self.offset})" if self.offset is not None else ""
        return f"{where}{self.what}{at}"

    def __reduce__(self):
        return (type(self), (self.path, self.what, self.offset))


def read_input(path: str | os.PathLike, *, name: str | None = None, text: bool = False,
               what: str = "file") -> bytes | str:
    """The contents of an input file, or one InputError saying why it cannot be read."""
    shown = name or str(path)
    try:
        if text:
            with open(path, errors="replace") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(shown, "no such file") from None
    except IsADirectoryError:
        raise InputError(shown, f"is a directory, expected a {what}") from None
    except OSError as exc:
        raise InputError(shown, f"cannot read {what}: {exc.strerror}") from None
    except ValueError as exc:           # an embedded NUL in the path
        raise InputError(shown, f"cannot read {what}: {exc}") from None


class MissingExtra(Exception):
    """A feature needs an optional dependency that is not installed; the message names the
    extra that brings it: ``--plot needs matplotlib: pip install 'weaklink[plot]'``."""

    def __init__(self, feature: str, package: str, extra: str):
        self.feature, self.package, self.extra = feature, package, extra
        super().__init__(f"{feature} needs {package}: pip install 'weaklink[{extra}]'")


def require(module: str, feature: str, extra: str, package: str | None = None):
    """Import an optional dependency, or raise MissingExtra naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(feature, package or module.split(".")[0], extra) from None


def one_line(exc: BaseException) -> str:
    """An error's text on one line: a reader may quote a file's bytes (a name with a newline,
    a form feed or U+2028 in it), so every non-printable character is shown escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(exc))


def exit_status(prog: str, action: Callable[[], int], errors: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's action: bad input, a missing optional dependency (and any of
    ``errors``) becomes one ``PROG: error: …`` line and exit status 2, never a traceback; a
    closed pipe (``| head``) is not an error."""
    try:
        return action()
    except (InputError, MissingExtra, *errors) as exc:
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0

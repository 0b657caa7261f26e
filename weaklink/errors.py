"""The one error type for bad input: it names the file, the offset and what was expected.

InputError and read_input are npu's (``npu.errors``; npu imports nothing from weaklink).
Every reader raises InputError; the CLIs turn it into a single line
``weaklink: error: FILE: what (at offset N)`` and exit status 2.
"""
from __future__ import annotations

from collections.abc import Callable

from npu.errors import InputError, MissingExtra, read_input, require
from npu.errors import exit_status as _exit_status

__all__ = ["InputError", "MissingExtra", "ToolchainMissing", "UsageError", "exit_status", "read_input",
           "require"]


class UsageError(Exception):
    """A command line that cannot be acted on (unknown option, missing argument)."""


class ToolchainMissing(Exception):
    """The arm-none-eabi cross toolchain (or another external tool) is not installed."""


def exit_status(prog: str, action: Callable[[], int]) -> int:
    """Run a command's action: bad input or usage becomes one `PROG: error: …` line and exit
    status 2, never a traceback; a closed pipe (`| head`) is not an error."""
    return _exit_status(prog, action, (UsageError, ToolchainMissing))

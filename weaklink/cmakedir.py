"""`weaklink --cmake-dir`: the directory of weaklink's CMake package (weaklink/cmake/, package
data), for `find_package(weaklink CONFIG)` with `-Dweaklink_DIR=$(weaklink --cmake-dir)`.

It also records there, in weaklink-executable.cmake, the command that printed it (this console
script, or this interpreter with `-m weaklink.cli`), so that the build's post-link step runs
the same weaklink as the one whose package it found. A directory that cannot be written (a
package installed by another user) keeps no record: the package then finds `weaklink` on PATH,
and WEAKLINK_EXECUTABLE overrides either (docs/cmake.md).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

CMAKE_DIR = Path(__file__).resolve().parent / "cmake"
RECORD = "weaklink-executable.cmake"


def own_command() -> list[str]:
    """The command that runs this weaklink: the console script when it is one, else this
    interpreter with the CLI module (`python -m weaklink.cli`)."""
    script = Path(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    if script is not None and script.name.startswith("weaklink") and script.suffix != ".py" \
            and script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [os.path.abspath(sys.executable), "-m", "weaklink.cli"]  # a venv's python: not resolved


def _quote(arg: str) -> str:
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def record_text(command: list[str]) -> str:
    return ("# Written by `weaklink --cmake-dir`: the weaklink that printed this directory.\n"
            f"set(_weaklink_recorded_command {' '.join(map(_quote, command))})\n")


def cmake_dir() -> Path:
    """The package directory, with this weaklink recorded in it when the directory is ours
    to write (one line on stderr when it is not: stdout stays the directory alone)."""
    text = record_text(own_command())
    record = CMAKE_DIR / RECORD
    try:
        if not record.is_file() or record.read_text() != text:
            tmp = record.with_name(f".{RECORD}.{os.getpid()}")
            tmp.write_text(text)
            os.replace(tmp, record)
    except OSError as e:
        print(f"weaklink: cannot record this weaklink in {record} ({e.strerror}): the CMake "
              "package will look for weaklink on PATH (or give -DWEAKLINK_EXECUTABLE=...)",
              file=sys.stderr)
    return CMAKE_DIR

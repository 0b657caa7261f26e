"""The arm-none-eabi cross toolchain: find it, run it, and say clearly when it is missing."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections import namedtuple
from pathlib import Path

from weaklink.errors import ToolchainMissing

PREFIX = os.environ.get("WEAKLINK_CROSS_PREFIX", "arm-none-eabi-")

# GCC 12 has no -mcpu=cortex-m85; cortex-m55 selects the same v8.1-M multilib (both targets).
CPU_FLAGS = ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard")


def which(*names: str, install: str) -> str:
    """Absolute path of the first of `names` found (on PATH, or a path), or ToolchainMissing
    naming the first and the command that installs it."""
    path = next(filter(None, map(shutil.which, names)), None)
    if path is None:
        raise ToolchainMissing(f"{names[0]} not found on PATH; install it with `{install}`")
    return path


def tool(name: str) -> str:
    """Absolute path of arm-none-eabi-<name>, or ToolchainMissing."""
    return which(PREFIX + name, install="apt-get install gcc-arm-none-eabi "
                 "binutils-arm-none-eabi libnewlib-arm-none-eabi")


def available() -> bool:
    return all(shutil.which(PREFIX + t) for t in ("gcc", "g++", "ld", "ar", "as"))


Completed = namedtuple("Completed", "args returncode stdout stderr")


def run(name: str, args: list[str | Path], cwd: str | Path | None = None) -> Completed:
    """Run a cross tool; the caller decides what a non-zero exit means."""
    argv = (tool(name), *map(str, args))
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    return Completed(argv, proc.returncode, proc.stdout, proc.stderr)


@functools.cache
def version() -> str:
    """One line identifying gcc and ld, for cache keys."""
    gcc = run("gcc", ["--version"]).stdout.splitlines()[0]
    ld = run("ld", ["--version"]).stdout.splitlines()[0]
    return f"{gcc} | {ld}"


@functools.cache
def libgcc_path() -> Path:
    out = run("gcc", [*CPU_FLAGS, "-print-libgcc-file-name"]).stdout.strip()
    return Path(out)

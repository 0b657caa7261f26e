"""Itanium C++ ABI demangling of arm-none-eabi-g++ names, by binutils' c++filt: the libiberty
demangler ld and nm use, run with --no-verbose so that a name reads as `nm -C` prints it
(`std::string::_Rep`; c++filt's default, DMGL_VERBOSE, spells out `std::basic_string<char,
...>::_Rep`). One c++filt process demangles a whole list given as its arguments (a line each,
written at its exit: three times faster than its input mode, which flushes every line);
a list longer than the system lets one process take goes to one process per part.

A name that is not mangled, or that c++filt cannot decode, comes back unchanged; so does every
name when neither arm-none-eabi-c++filt nor c++filt is on PATH (binutils; `missing()` says so).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable

TOOLS = ("arm-none-eabi-c++filt", "c++filt")
# An Itanium name, with GCC's clone suffixes (`.constprop.0`), is made of letters, digits, `_`,
# `$` and `.`; a name with any other byte (a symbol version's `@`, a newline) is not one, and is
# not sent.
MANGLED = re.compile(rb"_Z[A-Za-z0-9_$.]{1,32764}")


@functools.cache
def cxxfilt() -> str | None:
    """arm-none-eabi-c++filt, else c++filt, on PATH."""
    return next(filter(None, map(shutil.which, TOOLS)), None)


def missing() -> str | None:
    """Why C++ names stay mangled, or None when c++filt is there."""
    if cxxfilt() is None:
        return ("C++ names are shown mangled: neither arm-none-eabi-c++filt nor c++filt "
                "(binutils) is on PATH")
    return None


def demangle_all(names: list[bytes]) -> list[bytes]:
    """`names` demangled, in order, by one c++filt process."""
    sent = [MANGLED.fullmatch(n) is not None for n in names]
    todo = [n for n, s in zip(names, sent) if s]
    tool = cxxfilt()
    if not todo or tool is None:
        return list(names)
    lines = []
    for part in _parts(todo):
        try:
            done = subprocess.run([tool, "--no-verbose", "--", *part], capture_output=True)
        except OSError:                 # the system refused the arguments after all
            return list(names)
        got = done.stdout.split(b"\n")
        if done.returncode or len(got) != len(part) + 1:
            return list(names)
        lines += got[:-1]
    out = iter(lines)
    return [next(out) if s else n for n, s in zip(names, sent)]


def _parts(names: list[bytes]) -> list[list[bytes]]:
    """`names` cut into lists that each fit in a quarter of the system's limit on a process's
    arguments (POSIX ARG_MAX; each name costs its bytes, a NUL and a pointer)."""
    try:
        budget = os.sysconf("SC_ARG_MAX") // 4
    except (AttributeError, ValueError, OSError):
        budget = 32 * 1024
    parts, size = [[]], 0
    for n in names:
        if size + len(n) + 9 > budget and parts[-1]:
            parts.append([])
            size = 0
        parts[-1].append(n)
        size += len(n) + 9
    return parts


def demangle_many(names: Iterable[str]) -> dict[str, str]:
    """Each of `names` -> its demangled form, by one c++filt process."""
    names = list(dict.fromkeys(names))
    done = demangle_all([n.encode("utf-8", "surrogateescape") for n in names])
    return {n: d.decode("utf-8", "surrogateescape") for n, d in zip(names, done)}


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """One name demangled (a process for each name not asked before: batch with demangle_many)."""
    if not name.startswith("_Z"):
        return name
    return demangle_many([name])[name]


def unqualified(name: str) -> str:
    """The last component of a (demangled) name: `ns::inner::x` → `x`; functions lose their
    parameter list: `ns::f(int)` → `f`."""
    text = demangle(name)
    depth, cut = 0, len(text)
    for i, ch in enumerate(text):  # drop a trailing parameter list, keeping template args
        if ch == "(" and depth == 0:
            cut = i
            break
        depth += ch == "<"
        depth -= ch == ">"
    return text[:cut].rsplit("::", 1)[-1]

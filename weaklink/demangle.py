"""Itanium C++ ABI demangling (arm-none-eabi-g++ names), for messages and near-miss matching.

Uses cxxfilt (libstdc++'s __cxa_demangle) when installed, else arm-none-eabi-c++filt; a name
that is not mangled, or cannot be demangled, comes back unchanged.
"""
from __future__ import annotations

import functools
import shutil
import subprocess


@functools.cache
def _cxxfilt():
    """cxxfilt, loaded on the first mangled name (its import costs tens of ms: ctypes,
    tempfile), or None when it is not installed."""
    try:
        import cxxfilt
    except ImportError:  # pragma: no cover - cxxfilt is in the demo/test extras
        return None
    return cxxfilt


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    if not name.startswith("_Z"):
        return name
    cxxfilt = _cxxfilt()
    if cxxfilt is not None:
        try:
            return cxxfilt.demangle(name)
        except Exception:  # cxxfilt raises InvalidName (and may fail to load libstdc++)
            return name
    tool = shutil.which("arm-none-eabi-c++filt") or shutil.which("c++filt")
    if tool is None:
        return name
    out = subprocess.run([tool, name], capture_output=True, text=True).stdout.strip()
    return out or name


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

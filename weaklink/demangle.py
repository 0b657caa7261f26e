"""Itanium C++ ABI demangling (arm-none-eabi-g++ names), for messages and near-miss matching.

Uses cxxfilt (libstdc++'s __cxa_demangle) when installed, else arm-none-eabi-c++filt; a name
that is not mangled, or cannot be demangled, comes back unchanged.
"""
from __future__ import annotations

import functools
import os


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
    tool = cxxfilt_tool()
    if tool is None:
        return name
    import subprocess
    out = subprocess.run([tool, name], capture_output=True, text=True).stdout.strip()
    return out or name


@functools.cache
def cxxfilt_tool() -> str | None:
    """arm-none-eabi-c++filt, else c++filt, on PATH (as shutil.which finds them; shutil's
    import costs more than this search)."""
    for name in ("arm-none-eabi-c++filt", "c++filt"):
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
            path = os.path.join(folder or ".", name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


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

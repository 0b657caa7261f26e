"""Itanium C++ ABI demangling (arm-none-eabi-g++ names), for messages and near-miss matching.

In process through the C++ runtime's own demangler, `abi::__cxa_demangle` (Itanium C++ ABI,
3.4 "Demangler API"), called with ctypes from libstdc++ (or libc++); without a C++ runtime,
by arm-none-eabi-c++filt (or c++filt) as a child process, run with --no-verbose: both then
print what `nm -C` prints (`std::string::_Rep`; c++filt's default, DMGL_VERBOSE, spells out
`std::basic_string<char, ...>::_Rep`). A name that is not mangled, or cannot be demangled,
comes back unchanged.
"""
from __future__ import annotations

import ctypes
import functools
import os

# The shared C++ runtimes that export __cxa_demangle, by their run-time (soname) names:
# opened directly, as the dynamic loader would, without searching for them.
RUNTIMES = ("libstdc++.so.6", "libc++.so.1", "libc++abi.so.1", "libc++.1.dylib",
            "libc++abi.dylib")
STATUS_OK = 0       # __cxa_demangle's *status: 0 success, -1 no memory, -2 invalid, -3 bad args


class _CxaDemangle:
    """`char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status)`: with
    buf NULL it returns a malloc'ed string, released with the C library's free."""

    def __init__(self, runtime: ctypes.CDLL):
        self._call = runtime["__cxa_demangle"]     # (an attribute would be name-mangled)
        self._call.restype = ctypes.c_void_p
        self._call.argtypes = (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_int))
        self._free = ctypes.CDLL(None).free       # the process's C library (dlopen(NULL))
        self._free.argtypes = (ctypes.c_void_p,)
        self._free.restype = None
        self._status = ctypes.c_int()

    def __call__(self, name: bytes) -> bytes | None:
        """The demangled name, or None when `name` is not a valid mangled name."""
        text = self._call(name, None, None, ctypes.byref(self._status))
        if not text:
            return None
        try:
            return ctypes.string_at(text) if self._status.value == STATUS_OK else None
        finally:
            self._free(text)


@functools.cache
def cxa_demangle() -> _CxaDemangle | None:
    """The C++ runtime's demangler, opened on the first mangled name; None when no runtime
    with __cxa_demangle can be loaded."""
    for soname in RUNTIMES:
        try:
            return _CxaDemangle(ctypes.CDLL(soname))
        except (OSError, AttributeError):      # not installed, or no __cxa_demangle in it
            continue
    return None


def demangle_bytes(name: bytes) -> bytes:
    """`name` demangled, or unchanged when it is not mangled or not valid."""
    if not name.startswith(b"_Z"):
        return name
    runtime = cxa_demangle()
    if runtime is not None:
        return runtime(name) or name
    out = run_cxxfilt([name])
    return out[0] if out else name


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    if not name.startswith("_Z"):
        return name
    try:
        return demangle_bytes(name.encode()).decode()
    except UnicodeError:        # not text: no C++ name
        return name


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


def spawn_cxxfilt(names: list[bytes]) -> tuple[int, int, int] | None:
    """(pid, memfd, count) of a c++filt process demangling `names` (its arguments; one line
    each on its output, which goes to an in-memory file), or None when that cannot be done
    here (no tool, no memfd or posix_spawn, or the spawn failed). `collect` reads it.
    The process runs beside the caller: nothing has to pump a pipe."""
    tool = cxxfilt_tool()
    if tool is None or not hasattr(os, "memfd_create") or not hasattr(os, "posix_spawn"):
        return None
    fd = os.memfd_create("weaklink-c++filt")
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, fd, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        pid = os.posix_spawn(tool, [tool, "--no-verbose", "--", *names], os.environ,
                             file_actions=actions)
    except OSError:
        os.close(fd)
        return None
    return pid, fd, len(names)


def collect(job: tuple[int, int, int]) -> list[bytes] | None:
    """Wait for a spawn_cxxfilt job: its lines in order, or None if it failed."""
    pid, fd, count = job
    _, status = os.waitpid(pid, 0)
    ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    with open(fd, "rb", closefd=True) as f:
        f.seek(0)
        lines = f.read().split(b"\n")
    return lines[:-1] if ok and len(lines) == count + 1 and not lines[-1] else None


def run_cxxfilt(names: list[bytes]) -> list[bytes] | None:
    """`names` demangled by one c++filt process, or None when that cannot be done."""
    job = spawn_cxxfilt(names)
    return collect(job) if job is not None else None


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

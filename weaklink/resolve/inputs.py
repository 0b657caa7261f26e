"""Opening link inputs the way both linkers do: a path relative to the working directory,
`-lNAME` searched along the -L directories, and each archive and -T script read once per path
(a group rescans the same archive; naming it twice reuses what was read).

Archives of MAP_FROM bytes or more are mapped read-only instead of read (newlib's libc.a and
libgcc.a are 5 and 10 MB, and a link reads only their index and the members it extracts).
Like the linkers, which map their inputs too, a mapped file must not be truncated in place
while the model runs.
"""
from __future__ import annotations

import mmap
import os
import stat
from collections import namedtuple

from weaklink.errors import InputError
from weaklink.read.archive import Archive, is_archive
from weaklink.resolve.cmdline import InputItem
from weaklink.resolve.script import ScriptSymbols, find_file, read_script

MAP_FROM = 1 << 20


class Wording(namedtuple("Wording", "missing unreadable no_library archive_prefix",
                         defaults=(b"!<arch>\n",))):
    """How a linker words an input it cannot open ({} is the library name or the OS reason):
    missing, the file is not there; unreadable, the OS refused it; no_library, no -lNAME
    along the search path. archive_prefix: GNU ld takes any file starting "!<" for an
    archive (and fails on a bad one); lld treats only the two archive magics as archives."""
    __slots__ = ()


GNU_WORDING = Wording("No such file or directory", "cannot read: {}",
                      "cannot find -l{}: No such file or directory", b"!<")
LLD_WORDING = Wording("cannot open: No such file or directory", "cannot open: {}",
                      "unable to find library -l{}")


class InputFiles:
    """Finds and reads the inputs of one link."""

    def __init__(self, search_dirs, cwd: str | None, wording: Wording):
        self.search_dirs = search_dirs
        self.cwd = cwd
        self.wording = wording
        self.archives: dict[str, Archive] = {}
        self.scripts: dict[str, ScriptSymbols] = {}

    def fs(self, path: str) -> str:
        """Where to open `path`: relative to `cwd` (names stay as given, as the linkers print
        them)."""
        return os.path.join(self.cwd, path) if self.cwd else path

    def script(self, path: str) -> ScriptSymbols:
        """A -T script: found as given, else along the -L directories (script.find_file)."""
        if path not in self.scripts:
            found = find_file(path, self.search_dirs, self.fs) or path
            self.scripts[path] = read_script(found, self.search_dirs, self.fs)
        return self.scripts[path]

    def locate(self, item: InputItem) -> str:
        if item.kind == "file":
            return item.arg
        name = item.arg
        fname = name[1:] if name.startswith(":") else f"lib{name}.a"
        for d in self.search_dirs:
            cand = f"{d}/{fname}"                 # both join with '/' even after a trailing '/'
            if os.path.isfile(self.fs(cand)):
                return cand
        raise InputError(None, self.wording.no_library.format(name))

    def open(self, item: InputItem) -> tuple[str, Archive | None, bytes | None]:
        """(path, the archive, None) or (path, None, the file's bytes) for anything else."""
        path = self.locate(item)
        ar = self.archives.get(path)
        if ar is not None:
            return path, ar, None
        data = self._read(path)
        if not is_archive(data[:8]) and not data[:8].startswith(self.wording.archive_prefix):
            return path, None, bytes(data) if isinstance(data, mmap.mmap) else data
        ar = self.archives[path] = Archive(data, path)
        ar.fs_dir = os.path.dirname(self.fs(path))
        return path, ar, None

    def _read(self, path: str):
        where = self.fs(path)
        try:
            with open(where, "rb", buffering=0) as f:      # read whole: no buffer between
                st = os.fstat(f.fileno())
                if stat.S_ISREG(st.st_mode) and st.st_size >= MAP_FROM:
                    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                return f.read()
        except FileNotFoundError:
            raise InputError(path, self.wording.missing) from None
        except OSError as exc:
            raise InputError(path, self.wording.unreadable.format(exc.strerror)) from None

"""A compiler-driver command line (`arm-none-eabi-gcc ARGS`, a CMake link.txt line) turned into
the ld command line it runs (docs/linker-semantics.md §5).

`gcc ARGS -###` prints the commands it would run without running them; the last one is
collect2 (or ld), with each argument shell-quoted. collect2 passes its arguments to ld, minus
the LTO plugin options (`-plugin FILE`, `-plugin-opt=…`, and the `--plugin` spellings), which
only matter for LTO IR objects, which we do not model, and minus `-fuse-ld=…`, which picks
the linker (measured: collect2 12.2 does not pass it on). That a plugin is loaded is kept: it
changes two details of ld's bookkeeping (ld/plugin.c, see rules.py). A line that would compile
sources is refused: nothing exists yet to model.

Driver options (`-fuse-ld=bfd`, `-no-pie`, `-static-pie`, `-Wl,…`, `-Xlinker …`) go to
`gcc -###` and become whatever it puts on the collect2 line. `@FILE` arguments are read first
(response_files.py, gcc's own rules): given any, gcc would hand collect2 its arguments in a
temporary response file of its own, which `-###` names and deletes at once.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence

from weaklink.errors import InputError, UsageError
from weaklink.resolve import response_files

_LINKERS = ("collect2", "ld", "ld.bfd", "arm-none-eabi-ld", "arm-none-eabi-ld.bfd")
_COMPILERS = ("cc1", "cc1plus", "cc1obj", "as", "arm-none-eabi-as", "lto1")
_PLUGIN_WITH_VALUE = ("-plugin", "--plugin")
_PLUGIN_PREFIXES = ("-plugin-opt=", "--plugin-opt=", "-plugin=", "--plugin=")
_COLLECT2_ONLY = ("-fuse-ld=",)     # collect2 chooses the linker with it and drops it


def is_linker(word: str) -> bool:
    base = os.path.basename(word)
    return base in _LINKERS or base.endswith(("-ld", "-ld.bfd"))


def is_driver(word: str, cwd: str | None = None) -> bool:
    """Is the first word of a command line a program (a compiler driver or ld), rather than
    an ld input? Programs are on PATH or executable files; inputs are ELF, archives, scripts."""
    if word.startswith("-"):
        return False
    path = word if os.path.isabs(word) or cwd is None else os.path.join(cwd, word)
    if os.sep in word:
        return shutil.which(path) is not None and not _is_input(path)
    return shutil.which(word) is not None and not os.path.exists(path)


def _is_input(path: str) -> bool:
    """An archive or an ELF relocatable object (e_type 1); an ELF executable is a program."""
    with open(path, "rb") as f:
        head = f.read(18)
    if head.startswith(b"\x7fELF"):
        return len(head) == 18 and int.from_bytes(head[16:18], "little") == 1
    return head.startswith((b"!<arch>", b"!<thin>"))


def strip_plugin_options(args: Sequence[str]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in _PLUGIN_WITH_VALUE:
            skip = True
        elif not a.startswith(_PLUGIN_PREFIXES):
            out.append(a)
    return out


def uses_plugin(args: Sequence[str]) -> bool:
    """Does the ld line load a plugin (collect2 loads GCC's LTO plugin by default)?"""
    return any(a in _PLUGIN_WITH_VALUE or a.startswith(_PLUGIN_PREFIXES[2:]) for a in args)


def ld_command(argv: Sequence[str], cwd: str | None = None) -> tuple[list[str], bool]:
    """(ld arguments without plugin options, whether ld would load a plugin)."""
    argv = list(argv)
    if argv and is_linker(argv[0]):
        full = argv[1:]
    else:
        full = _full_ld_arguments([*argv[:1], *response_files.expand(argv[1:], cwd)], cwd)
        full = [a for a in full if not a.startswith(_COLLECT2_ONLY)]
        gone = response_files.unreadable(full, cwd)
        if gone:
            raise UsageError(f"{gone[0]}: no such response file on the ld line {argv[0]} -### "
                             "prints (gcc deletes its own temporary ones at once); give the "
                             "arguments it holds on the line")
    return strip_plugin_options(full), uses_plugin(full)


def _full_ld_arguments(argv: list[str], cwd: str | None) -> list[str]:
    if not argv:
        raise UsageError("expected a compiler driver command after --")
    try:
        proc = subprocess.run([*argv, "-###"], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, "LC_ALL": "C"})
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]}: {exc.strerror}") from None
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise UsageError(f"{argv[0]} -### failed: {last}")
    commands = []
    for line in proc.stderr.splitlines():
        if not line.startswith(" "):
            continue
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise InputError(f"{argv[0]} -###", f"cannot split its command line: {exc}") from None
        if words:
            commands.append(words)
    compiled = [c for c in commands if os.path.basename(c[0]) in _COMPILERS]
    if compiled:
        sources = [a for a in argv[1:] if not a.startswith("-") and
                   a.rsplit(".", 1)[-1] in ("c", "cc", "cpp", "cxx", "C", "s", "S", "m")]
        raise UsageError(f"{argv[0]} would compile {', '.join(sources) or 'sources'} first; "
                         "weaklink models links of existing objects only")
    links = [c for c in commands if is_linker(c[0])]
    if not links:
        raise UsageError(f"{argv[0]} -### printed no link command (is it a link line? "
                         "-c, -S and -E do not link)")
    return links[-1][1:]

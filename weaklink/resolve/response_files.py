"""`@FILE` arguments: the rest of a command line kept in a file, as GNU ld, gcc and collect2
read it (libiberty expandargv/buildargv, which all three use).

Inside the file, whitespace separates arguments; a backslash takes the next character as it
is (inside quotes too); single and double quotes group characters, spaces included, and an
empty pair ('') is an empty argument. The arguments read may be @FILE again. An @FILE that
cannot be read stays on the line as it is (ld then reports it as an input it cannot find).
"""
from __future__ import annotations

import os

from weaklink.errors import UsageError

MAX_DEPTH = 64       # libiberty stops at 2000 expansions; a loop ends here with a clear line


def split(text: str) -> list[str]:
    """Arguments of a response file's text (libiberty buildargv)."""
    out: list[str] = []
    cur: list[str] = []
    started = escaped = False
    quote = ""
    for ch in text:
        if escaped:
            cur.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = started = True
        elif quote:
            if ch == quote:
                quote = ""
            else:
                cur.append(ch)
        elif ch in "'\"":
            quote, started = ch, True
        elif ch.isspace():
            if started:
                out.append("".join(cur))
                cur, started = [], False
        else:
            cur.append(ch)
            started = True
    if started:
        out.append("".join(cur))
    return out


def _read(arg: str, cwd: str | None) -> str | None:
    path = arg[1:]
    if cwd is not None and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    if os.path.isdir(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return None


def expand(args: list[str], cwd: str | None = None, _depth: int = 0) -> list[str]:
    """`args` with every readable @FILE replaced by the arguments it holds (relative names
    from `cwd`, default the process's directory)."""
    out: list[str] = []
    for arg in args:
        text = _read(arg, cwd) if arg.startswith("@") and len(arg) > 1 else None
        if text is None:
            out.append(arg)
            continue
        if _depth >= MAX_DEPTH:
            raise UsageError(f"{arg}: response files nested more than {MAX_DEPTH} deep "
                             "(does one name itself?)")
        out += expand(split(text), cwd, _depth + 1)
    return out


def unreadable(args: list[str], cwd: str | None = None) -> list[str]:
    """The @FILE arguments in `args` that name no readable file."""
    return [a for a in args if a.startswith("@") and len(a) > 1 and _read(a, cwd) is None]

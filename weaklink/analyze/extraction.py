"""override-not-extracted: replay the link with the resolution model (weaklink.link) and find
strong definitions of surviving weak symbols that sat in archive members ld never pulled.

GNU ld extracts a member only for a symbol that is still strongly undefined when the archive
is searched; a weak definition loaded earlier already satisfies the reference, so the strong
override in the archive is never looked at (docs/linker-semantics.md §2.1 item 2).
"""
from __future__ import annotations

import os

from weaklink.analyze.findings import OVERRIDE_NOT_EXTRACTED, Finding
from weaklink.errors import InputError

# Reasons (weaklink.resolve.gnu.explain) that describe a member the archive search skipped.
MEMBER_REASONS = frozenset({"blocked-by-weak", "never-referenced", "archive-order",
                            "only-weak-reference", "common-needs-data", "already-defined"})
MAX_SYMBOLS = 256        # explanations asked for at most this many weak symbols
# LOAD lines for inputs ld makes itself (ARM interworking/long-branch veneers): no file.
LD_INTERNAL = frozenset({"linker stubs"})


def args_from_map(link_map) -> list[str]:
    """ld arguments rebuilt from the map's LOAD / START GROUP / END GROUP lines, in order."""
    group = {"START GROUP": "--start-group", "END GROUP": "--end-group"}
    return [group.get(line, line) for line in link_map.load_lines if line not in LD_INTERNAL]


def has_archive(args: list[str]) -> bool:
    return any(a.endswith(".a") or a.startswith("-l") for a in args)


def find_link_dir(args: list[str], map_path: str | None) -> str | None:
    """The directory ld ran in: the nearest of the current directory, the map's directory
    and its parents where every relative input of the link exists."""
    rel = [a for a in args if not a.startswith("-") and not os.path.isabs(a)]
    candidates = [os.getcwd()]
    if map_path:
        here = os.path.dirname(os.path.realpath(map_path))
        candidates.append(here)
        while os.path.dirname(here) != here:            # its parents, up to the root
            here = os.path.dirname(here)
            candidates.append(here)
    for base in candidates:
        if all(os.path.exists(os.path.join(base, a)) for a in rel):
            return base
    return None


def _member_is_strong(link_dir: str | None, display: str, symbol: str) -> bool | None:
    """Is `symbol` a strong (STB_GLOBAL) definition in archive member `lib.a(member.o)`?"""
    if not display.endswith(")") or "(" not in display:
        return None
    path, member = display[:-1].split("(", 1)
    try:
        # imported here while the archive reader and the link model import numpy (0.3 s of
        # every analysis that has no archive to look into)
        from weaklink.read.archive import Archive
        ar = Archive.from_path(os.path.join(link_dir or "", path), name=path)
        for off in ar.member_offsets_by_symbol.get(symbol, ()):
            if ar.member(off).name == member:
                obj = ar.object(off)
                row = obj.rows[obj.by_name[symbol]]
                return not row[2]               # (name, kind, weak, ...)
    except (InputError, KeyError, OSError):
        return None
    return None


def not_extracted(weak_names: list[str], args: list[str], link_dir: str | None) -> list[Finding]:
    """Findings for every weak survivor whose strong definition an unextracted member held."""
    from weaklink.resolve import link      # numpy, as above
    names = weak_names[:MAX_SYMBOLS]
    result = link(args, why_not=names, cwd=link_dir)
    out = []
    for w in result.why_not:
        if w.reason not in MEMBER_REASONS or not w.file.endswith(")"):
            continue
        if _member_is_strong(link_dir, w.file, w.symbol) is False:
            continue                              # a weak copy: nothing was lost
        out.append(Finding(OVERRIDE_NOT_EXTRACTED, "warning", w.symbol,
                           f"strong {w.symbol} in {w.file} was never linked: archive member "
                           f"not extracted ({w.reason}: {w.detail})"))
    return out

"""GNU ld 2.40's options as data (weaklink/data/gnu_ld_options.txt), and how ld splits a
command line into them.

ld parses with getopt_long_only (ld/lexsup.c parse_args): a word starting with `--` is a long
option, exact or a unique prefix, its value after `=` or in the next word; a word with one
dash is first tried as a long option the same way (except the names ld accepts with two
dashes only: `-omagic` is `-o magic`), then as short options (`-LDIR`, `-l c`, `-zmuldefs`).
An `optional` value is only ever joined (`--sort-common=descending`): the next word is the
next argument. `-z KEYWORD[=VALUE]` looks KEYWORD up in the table's `-z` rows; ld only warns
about a keyword it does not know ("-z K ignored"), so an unknown one has no effect.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import namedtuple
from functools import lru_cache
from pathlib import Path

from weaklink.errors import UsageError

TABLE = Path(__file__).resolve().parent.parent / "data" / "gnu_ld_options.txt"
RESOLUTIONS = ("modelled", "none", "refused", "exits")


class LdOption(namedtuple("LdOption", "names arity two_dashes resolution note")):
    """One row: `names` as ld lists them (names[0] is the key the parser acts on), `arity`
    none | value | optional, `two_dashes` (one dash means something else), `resolution`
    modelled | none | refused | exits, `note` (ld's --help text, or why)."""
    __slots__ = ()

    @property
    def key(self) -> str:
        return self.names[0]


# An option found at args[i]: its row, its value (None: none given), the index of the next
# argument, and the words it took (as given).
Match = namedtuple("Match", "option value next words")
# rows; long: name without dashes (len > 1) -> row; short: one letter -> row; z: -z keyword
# -> row; names: the long names, sorted (abbreviations are a prefix search)
_Index = namedtuple("_Index", "rows long short z names")


def _parse_row(line: str, lineno: int) -> LdOption:
    cols = [c.strip() for c in line.split("|", 3)]
    if len(cols) != 4:
        raise ValueError(f"{TABLE}:{lineno}: expected 4 columns separated by |")
    names, arity, resolution, note = cols
    arity, _, flag = arity.partition(",")
    if arity not in ("none", "value", "optional") or flag not in ("", "two-dashes") \
            or resolution not in RESOLUTIONS:
        raise ValueError(f"{TABLE}:{lineno}: bad arity or resolution in {line!r}")
    if names.startswith("-z "):
        return LdOption((names,), arity, False, resolution, note)
    return LdOption(tuple(names.split()), arity, bool(flag), resolution, note)


@lru_cache(maxsize=1)
def index() -> _Index:
    rows, long, short, z = [], {}, {}, {}
    for n, line in enumerate(TABLE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        row = _parse_row(line, n)
        rows.append(row)
        for name in row.names:
            if name.startswith("-z "):
                z[name[3:]] = row
                continue
            bare = name.lstrip("-").rstrip("=")
            (short if len(bare) == 1 and name.count("-") == 1 else long)[bare] = row
    return _Index(tuple(rows), long, short, z, sorted(long))


def rows() -> tuple[LdOption, ...]:
    return index().rows


def _long(body: str, dashes: int, idx: _Index) -> tuple[LdOption, str, str | None] | None:
    """(row, name, joined value) for a long option `body` (after its dashes), or None."""
    name, eq, value = body.partition("=")
    row = idx.long.get(name)
    if row is None or (row.two_dashes and dashes == 1):
        hits = set()
        for n in idx.names[bisect_left(idx.names, name):]:
            if not n.startswith(name):
                break
            if not (idx.long[n].two_dashes and dashes == 1):
                hits.add(idx.long[n])
        if len(hits) > 1:
            raise UsageError(f"ld option '{'-' * dashes}{name}' is ambiguous "
                             f"({', '.join(sorted(r.key for r in hits))})")
        if not hits:
            return None
        row = hits.pop()
    return row, name, (value if eq else None)


def _take_value(row: LdOption, value: str | None, args: list[str], i: int,
                shown: str) -> Match:
    if row.arity == "none":
        if value is not None:
            raise UsageError(f"ld option '{shown}' doesn't allow an argument")
        return Match(row, None, i + 1, (args[i],))
    if value is not None or row.arity == "optional":
        return Match(row, value, i + 1, (args[i],))
    if i + 1 >= len(args):
        raise UsageError(f"ld option '{shown}' requires an argument")
    return Match(row, args[i + 1], i + 2, (args[i], args[i + 1]))


def _z(m: Match) -> Match:
    """-z KEYWORD: the keyword's own row (unknown keywords: ld warns and ignores them)."""
    keyword, eq, value = m.value.partition("=")
    row = index().z.get(keyword)
    if row is None:
        row = LdOption((f"-z {keyword}",), "none", False, "none",
                       "ld does not know this keyword: it warns \"-z ... ignored\"")
    elif (row.arity == "none") == bool(eq):
        raise UsageError(f"ld option '-z {m.value}': {keyword} "
                         f"{'takes no value' if row.arity == 'none' else 'needs =VALUE'}")
    return Match(row, value if eq else None, m.next, m.words)


def match(args: list[str], i: int) -> Match | None:
    """The option at args[i] (which starts with '-'), or None if ld has no such option.
    Raises UsageError for a missing or unwanted value and for an ambiguous abbreviation."""
    idx = index()
    arg = args[i]
    dashes = 2 if arg.startswith("--") else 1
    body = arg[dashes:]
    found = _long(body, dashes, idx) if dashes == 2 or len(body) > 1 else None
    if found is not None:
        row, name, value = found
        m = _take_value(row, value, args, i, "-" * dashes + name)
    elif dashes == 1 and body[:1] in idx.short:
        row = idx.short[body[0]]
        if row.arity == "none":
            if len(body) > 1:      # a cluster of short options without values (`-sx`)
                rest = match(["-" + body[1:]], 0)
                if rest is None or rest.option.arity != "none" or rest.value is not None \
                        or "none" != row.resolution or "none" != rest.option.resolution:
                    return None
            m = Match(row, None, i + 1, (arg,))
        else:
            m = _take_value(row, body[1:] or None, args, i, "-" + body[0])
    else:
        return None
    return _z(m) if m.option.key == "-z" else m

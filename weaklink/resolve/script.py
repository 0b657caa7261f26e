"""What a GNU ld linker script means for symbol resolution and garbage collection.

The syntax is weaklink/read/ldscript.py; this module keeps the meaning (ld.info "Linker
Scripts", docs/linker-semantics.md §3.4):
  ENTRY(sym)          the entry symbol, entered as undefined like -e
  EXTERN(sym ...)     entered as undefined like -u (and a --gc-sections root)
  PROVIDE(sym = ...)  defines sym only if it is referenced and no input defines it (a common
  PROVIDE_HIDDEN      counts as defined)
  sym = expr;         a plain assignment, also HIDDEN(sym = expr) and inside SECTIONS: like
                      --defsym at the script's place on the command line, and again at the end
  INPUT / GROUP       more inputs at the script's place; a name not found as given is searched
                      in the -L directories (ld.info INPUT), `-lNAME` is a library
  INCLUDE file        read from the current directory, else the -L directories
  KEEP(...)           --gc-sections roots; `/DISCARD/` drops what it matches
A symbol a script defines has the binding "script"; its value is the constant expression's
value, or None when ld computes it from addresses.
"""
from __future__ import annotations

import fnmatch
import os
import re
from collections import namedtuple
from functools import lru_cache

from weaklink.errors import InputError, read_input
from weaklink.read import ldscript
from weaklink.read.ldscript import InputSectionRule

DISCARD = "/DISCARD/"


class ScriptSymbols(namedtuple("ScriptSymbols", "name entry extern provide assigned values "
                                               "inputs rules search_dirs aliases")):
    """What resolution needs of a script: values, name -> int | None (the last assignment);
    aliases, name -> the one symbol its value reads; inputs (InputFile), rules
    (InputSectionRule)."""
    __slots__ = ()

    @property
    def keeps(self) -> tuple[InputSectionRule, ...]:
        return tuple(r for r in self.rules if r.keep)


def _from_script(s: ldscript.Script) -> ScriptSymbols:
    provide = tuple(dict.fromkeys(a.name for a in s.assignments if a.provide))
    assigned = tuple(dict.fromkeys(a.name for a in s.assignments if not a.provide))
    values = {a.name: a.value for a in s.assignments}
    aliases = {a.name: a.alias for a in s.assignments}          # the last assignment's
    return ScriptSymbols(s.name, s.entry, tuple(s.extern), provide, assigned, values,
                         tuple(s.inputs), tuple(s.rules), tuple(s.search_dirs),
                         {k: v for k, v in aliases.items() if v})


def parse_script(text: str, name: str = "<script>", search_dirs=(), fs=lambda p: p
                 ) -> ScriptSymbols:
    def include(path: str) -> tuple[str, str]:
        found = find_file(path, search_dirs, fs)
        if found is None:
            raise InputError(name, f"cannot find linker script {path} (INCLUDE)")
        return read_input(fs(found), name=found, text=True, what="linker script file"), found
    return _from_script(ldscript.parse(text, name, include))


def read_script(path: str, search_dirs=(), fs=lambda p: p) -> ScriptSymbols:
    text = read_input(fs(path), name=path, text=True, what="linker script file")
    return parse_script(text, path, search_dirs, fs)


def find_file(path: str, search_dirs, fs=lambda p: p) -> str | None:
    """ld's search for -T, INCLUDE and INPUT names: as given, else each -L directory."""
    if os.path.exists(fs(path)):
        return path
    if os.path.isabs(path):
        return None
    for d in search_dirs:
        cand = os.path.join(d, path)
        if os.path.exists(fs(cand)):
            return cand
    return None


# -- input-section patterns -----------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _glob(pattern: str) -> re.Pattern:
    return re.compile(fnmatch.translate(pattern), re.S)


def glob_match(pattern: str, name: str) -> bool:
    """ld matches names with fnmatch(3) without FNM_PATHNAME: `*` also crosses '/'."""
    if not any(c in pattern for c in "*?["):
        return pattern == name
    return _glob(pattern).match(name) is not None


def file_matches(pattern: str, path: str, member: str | None) -> bool:
    """ldlang.c walk_wild: a file pattern is matched against the command-line name of the
    input (an archive's name covers its members); `archive:member` names a member."""
    if ":" in pattern and member is not None:
        ar, _, mem = pattern.partition(":")
        return (not ar or glob_match(ar, path)) and (not mem or glob_match(mem, member))
    return glob_match(pattern, path)


def _excluded(patterns, path: str, member: str | None) -> bool:
    return any(glob_match(p, member if member is not None else path)
               or (member is not None and file_matches(p, path, member)) for p in patterns)


def rule_matches(rule: InputSectionRule, path: str, member: str | None, section: str) -> bool:
    if not file_matches(rule.file, path, member) or _excluded(rule.exclude_files, path, member):
        return False
    return any(glob_match(sp.pattern, section) and not _excluded(sp.exclude_files, path, member)
               for sp in rule.sections)


class RuleSet:
    """Fast `matches(path, member, section)` over many rules (KEEP, /DISCARD/): rules for every
    file (`*`, no EXCLUDE_FILE) become one regex over section names, with a cache per name;
    the few others are tried one by one."""

    def __init__(self, rules):
        simple, self.other = [], []
        for r in rules:
            if r.file == "*" and not r.exclude_files and \
                    not any(sp.exclude_files for sp in r.sections):
                simple += [sp.pattern for sp in r.sections]
            else:
                self.other.append(r)
        self._rx = _union(simple)
        self._other_rx = [_union([sp.pattern for sp in r.sections]) for r in self.other]
        self._cache: dict[str, bool] = {}
        self._other_cache: dict[str, list] = {}

    def __bool__(self) -> bool:
        return self._rx is not None or bool(self.other)

    def matches(self, path: str, member: str | None, section: str) -> bool:
        hit = self._cache.get(section)
        if hit is None:
            hit = self._cache[section] = bool(self._rx and self._rx.match(section))
        if hit:
            return True
        cand = self._other_cache.get(section)
        if cand is None:                         # rules whose section patterns could match
            cand = self._other_cache[section] = [
                r for r, rx in zip(self.other, self._other_rx) if rx and rx.match(section)]
        return any(rule_matches(r, path, member, section) for r in cand)


def _union(patterns) -> re.Pattern | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns), re.S)

"""`--compare gnu,lld`: will my link change if I switch linkers? Both models run on the same
command line; every difference comes with the rule that causes it.

Differences (JSON `differences: [{kind, symbol, gnu, lld, reason}]`):
  outcome     one linker succeeds, the other fails
  error       an error (kind, symbol) only one linker reports
  extracted   an archive member only one linker extracts
  definition  a symbol both define, from different files
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from npu.records import Record, to_json
from weaklink.plaintext import aligned
from weaklink.resolve.gcgraph import member_name
from weaklink.resolve.result import (LINKER_SYMBOL_REDEFINED, MULTIPLE_DEFINITION,
                                     UNDEFINED_REFERENCE, LinkResult)

SCHEMA_VERSION = 1
LAZY = "lld: lazy symbols are remembered wherever the archive sits"


@dataclass(frozen=True, slots=True)
class Difference(Record):
    kind: str
    symbol: str
    gnu: str | None
    lld: str | None
    reason: str


@dataclass(frozen=True)
class Comparison(Record):
    gnu: LinkResult
    lld: LinkResult
    differences: tuple[Difference, ...]

    schema_version = SCHEMA_VERSION
    flavors = ("gnu", "lld")
    JSON = ("schema_version", "flavors", "same", "gnu_ok=gnu.ok", "lld_ok=lld.ok", "differences")

    @property
    def same(self) -> bool:
        return not self.differences

    def dumps(self) -> str:
        return json.dumps(to_json(self), indent=2)

    def table(self) -> str:
        if self.same:
            return "GNU ld and ld.lld decide this link the same way"
        rows = [("KIND", "SYMBOL", "GNU LD", "LD.LLD", "REASON")]
        rows += [(d.kind, d.symbol or "-", d.gnu or "-", d.lld or "-", d.reason)
                 for d in self.differences]
        return "\n".join(aligned(rows))


class _Order:
    """Where each input sits on the command line (first and last position of each path)."""

    def __init__(self, args: Sequence[str]):
        self.first: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self.groups: list[tuple[int, int]] = []
        start = None
        for i, a in enumerate(args):
            if a in ("--start-group", "-("):
                start = i
            elif a in ("--end-group", "-)") and start is not None:
                self.groups.append((start, i))
            elif not a.startswith("-"):
                self.first.setdefault(a, i)
                self.last[a] = i

    def position(self, file: str | None) -> int | None:
        if file is None:
            return None
        path = file.split("(", 1)[0] if file.endswith(")") else file
        return self.first.get(path)

    def archive_before(self, member: str, ref: str | None) -> str | None:
        """The archive of `member`, when every occurrence precedes `ref`'s and no group holds
        both: GNU ld searched it before the reference existed."""
        archive = member.split("(", 1)[0]
        at, ref_at = self.last.get(archive), self.position(ref)
        if at is None or ref_at is None or at >= ref_at:
            return None
        if any(lo <= at and ref_at <= hi for lo, hi in self.groups):
            return None
        return archive


def _reason_extracted(member: str, sym: str, ref: str | None, order: _Order,
                      gnu: LinkResult) -> str:
    archive = order.archive_before(member, ref)
    if archive is not None:
        return f"GNU ld: {archive} precedes {ref} and is never searched again; {LAZY}"
    g = gnu.symbols.get(sym)
    if g is not None and g.binding == "common":
        return ("GNU ld: a common symbol pulls a member that defines it as data; "
                "lld 16 (--no-fortran-common) does not")
    if g is not None and g.binding == "undefined-weak":
        return "GNU ld: only weak references were seen when the archive was searched; " + LAZY
    return "GNU ld searches an archive only at its place on the command line; " + LAZY


def _reason_gnu_only_member(member: str, sym: str, lld: LinkResult) -> str:
    info = lld.symbols.get(sym)
    if info is not None and info.binding == "common":
        return ("GNU ld: a common symbol pulls a member that defines it as data; lld 16 "
                "(--no-fortran-common) keeps the common")
    if info is not None and info.file and info.file != member:
        return (f"lld: {sym} was already defined by {info.file} when the reference came "
                "(definitions are read before references, lazy members only on demand)")
    return "the two linkers pull members in a different order"


def _thin_aliases(lld: LinkResult) -> dict[str, str]:
    """GNU ld names a thin archive's member by its path (dir/m.o), lld as lib.a(m.o)."""
    out = {}
    for name in lld.loaded:
        archive, member = member_name(name)
        if member is not None:
            out[os.path.normpath(os.path.join(os.path.dirname(archive), member))] = name
    return out


WRAP = ("--wrap: GNU ld renames each reference as it reads it (__real_foo pulls foo's "
        "member); lld resolves names as written, then redirects them and adds __wrap_foo "
        "with foo's binding")


def _wrapped(args: Sequence[str]) -> set[str]:
    """Every name --wrap touches: foo, __wrap_foo, __real_foo."""
    names = set()
    for i, a in enumerate(args):
        value = a[len("--wrap="):] if a.startswith("--wrap=") else (
            args[i + 1] if a == "--wrap" and i + 1 < len(args) else None)
        if value:
            names |= {value, "__wrap_" + value, "__real_" + value}
    return names


def compare(gnu: LinkResult, lld: LinkResult, args: Sequence[str]) -> Comparison:
    order = _Order(args)
    diffs: list[Difference] = []
    alias = _thin_aliases(lld)
    same = lambda name: alias.get(os.path.normpath(name), name) if name else name  # noqa: E731
    lld_members = {x.member: x for x in lld.extracted}
    gnu_members = {same(x.member): x for x in gnu.extracted if x.symbol != "--whole-archive"}
    extra_lld = [x for m, x in lld_members.items() if m not in gnu_members]
    extra_gnu = [x for m, x in gnu_members.items() if m not in lld_members]
    member_reason = {x.member: _reason_extracted(x.member, x.symbol, x.file, order, gnu)
                     for x in extra_lld}
    member_reason.update({same(x.member): _reason_gnu_only_member(same(x.member), x.symbol, lld)
                          for x in extra_gnu})

    if gnu.ok != lld.ok:
        why = _outcome_reason(gnu, lld, member_reason)
        diffs.append(Difference("outcome", "", "ok" if gnu.ok else "fails",
                                "ok" if lld.ok else "fails", why))
    g_err = {(e.kind, e.symbol) for e in gnu.errors}
    l_err = {(e.kind, e.symbol) for e in lld.errors}
    for kind, sym in sorted(g_err ^ l_err):
        diffs.append(Difference("error", sym, kind if (kind, sym) in g_err else None,
                                kind if (kind, sym) in l_err else None,
                                _error_reason(kind, sym, gnu, lld, member_reason)))
    for x in extra_lld:
        diffs.append(Difference("extracted", x.symbol, None, x.member, member_reason[x.member]))
    for x in extra_gnu:
        diffs.append(Difference("extracted", x.symbol, x.member, None,
                                member_reason[same(x.member)]))
    for name, g in sorted(gnu.symbols.items()):
        lsym = lld.symbols.get(name)
        if lsym is None or g.file is None or lsym.file is None or same(g.file) == lsym.file:
            continue
        why = member_reason.get(lsym.file) or member_reason.get(same(g.file)) or (
            "both linkers keep the first definition they read, and they read the inputs in a "
            "different order")
        diffs.append(Difference("definition", name, g.file, lsym.file, why))
    wrapped = _wrapped(args)
    return Comparison(gnu, lld, tuple(replace(d, reason=f"{d.reason}; {WRAP}")
                                      if d.symbol in wrapped else d for d in diffs))


def _outcome_reason(gnu, lld, member_reason) -> str:
    failing = gnu if not gnu.ok else lld
    first = failing.errors[0] if failing.errors else None
    if first is None:
        return "the two linkers decide differently"
    other = lld if failing is gnu else gnu
    return _error_reason(first.kind, first.symbol, gnu, lld, member_reason) if all(
        (e.kind, e.symbol) != (first.kind, first.symbol) for e in other.errors) \
        else "the two linkers report different errors"


def _error_reason(kind, sym, gnu, lld, member_reason) -> str:
    in_gnu = any((e.kind, e.symbol) == (kind, sym) for e in gnu.errors)
    if kind == UNDEFINED_REFERENCE:
        if in_gnu:
            hit = next((x for x in lld.extracted if x.symbol == sym), None)
            if hit is not None:
                return member_reason.get(hit.member, LAZY)
            return f"lld: {sym} is defined (the two linkers load different members)"
        msg = next(e.message for e in lld.errors if (e.kind, e.symbol) == (kind, sym))
        if msg.startswith("relocation refers to a symbol in a discarded section"):
            return ("lld: a global definition in a discarded COMDAT copy replaced the kept "
                    "weak one, and then became undefined; GNU ld keeps the first copy's symbol")
        return f"GNU ld: {sym} is defined (the two linkers load different members)"
    if kind == LINKER_SYMBOL_REDEFINED:
        return (f"lld reserves {sym}: an input may not define it; GNU ld's own definition "
                "replaces the input's silently")
    if kind == MULTIPLE_DEFINITION:
        if in_gnu:
            return ("lld: the second definition is not loaded or not a duplicate under lld's "
                    "rules (it reports duplicates only after all input is read)")
        return "lld: both definitions are loaded, and lld reports every non-weak duplicate"
    return "the two linkers report different errors"

"""--why-not SYM: every definition of SYM present in the inputs that did not win, and why.

Reasons (keys are stable, for JSON; § = docs/linker-semantics.md):
  never-referenced        nothing referenced SYM when (or after) the archive was searched
  archive-order           the first reference came after the archive's last search: move the
                          archive after it or put both in --start-group/--end-group (§2.1 item 4)
  blocked-by-weak         an earlier weak definition already satisfied SYM, so the archive
                          member was never pulled (§2.1 item 2)
  already-defined         an earlier strong definition satisfied SYM
  only-weak-reference     an undefined weak reference never pulls a member (§2.1 item 1)
  common-needs-data       a common pulls only a member defining SYM as global data (§2.1 item 7)
  lost-to-common          a weak definition loses to a common (§1.2)
  first-weak-wins         a later weak definition is ignored
  strong-definition-wins  a strong definition beats a weak one, in any order
  multiple-definition     a second strong definition (an error, or ignored with muldefs)
  smaller-common          a common merged into a larger one
  mangled-name-near-miss  a different symbol with the same demangled unqualified name (§4)
  wrapped                 --wrap=SYM: other files' references go to __wrap_SYM; only
                          __real_SYM (and the defining file's own calls) reach SYM (wrap.py)
"""
from __future__ import annotations

from weaklink.demangle import demangle, unqualified
from weaklink.read.objfile import K_COMMON, K_UNDEF
from weaklink.resolve.gnu import rules as R
from weaklink.resolve.gnu.driver import LinkState
from weaklink.resolve.result import WhyNot


def _state_at(sym: R.Sym, seq: int) -> tuple[int, int]:
    """(state, file) of a watched symbol after event `seq`."""
    state, file = R.NEW, -1
    for t, st, f in sym.history or ():
        if t > seq:
            break
        state, file = st, f
    return state, file


def _member_reason(s: LinkState, sym: R.Sym, scan_seq: int) -> tuple[str, str]:
    name = sym.name
    state, owner = _state_at(sym, scan_seq)
    who = s.files[owner] if owner >= 0 else "the linker"
    if state == R.DEFWEAK:
        return "blocked-by-weak", f"blocked by an earlier weak definition in {who}"
    if state == R.DEFINED:
        return "already-defined", f"already defined by {who} when the archive was searched"
    if state == R.UNDEFWEAK:
        return ("only-weak-reference", "only weakly referenced: an undefined weak reference "
                "never extracts an archive member")
    if state == R.COMMON:
        return ("common-needs-data", f"{name} was a common (from {who}); a common only pulls a "
                "member that defines it as global, non-function data")
    first = next((t for t, st, _ in sym.history or () if st == R.UNDEF), -1)  # first strong ref
    if first > scan_seq:
        return ("archive-order", "the archive was searched before the first reference to "
                f"{name}; list it after the referencing file or use --start-group/--end-group")
    return "never-referenced", f"{name} was never referenced"


def _loaded_reason(s: LinkState, sym: R.Sym, kind: int, weak: bool) -> tuple[str, str]:
    winner = s.files[sym.file] if sym.file >= 0 else "the linker"
    if kind == K_COMMON:
        if sym.state == R.COMMON:
            return "smaller-common", f"merged into the larger common from {winner}"
        return "already-defined", f"a definition in {winner} beats a common"
    if sym.state == R.COMMON:
        return "lost-to-common", f"lost to a common from {winner}: a common beats a weak definition"
    if weak and sym.state == R.DEFINED and sym.file >= 0:
        return "strong-definition-wins", f"the strong definition in {winner} wins over a weak one"
    if weak:
        return "first-weak-wins", f"an earlier weak definition in {winner} is kept (first weak wins)"
    if sym.absolute and sym.file < 0:
        return "already-defined", "overridden by a --defsym or script assignment"
    return "multiple-definition", f"a second strong definition; {winner} is kept"


def why_not(s: LinkState, name: str) -> list[WhyNot]:
    sym = s.table.syms.get(name) or R.Sym(name)
    out = []
    for fid, obj in enumerate(s.objects):          # loaded definitions that lost
        i = obj.by_name.get(name)
        if i is None or fid == sym.file:
            continue
        _, kind, weak, _, shndx, _ = obj.rows[i]
        if kind != K_UNDEF and not (fid in s.dead and shndx in s.dead[fid]):
            reason, detail = _loaded_reason(s, sym, kind, weak)
            out.append(WhyNot(name, s.files[fid], reason, detail))
    # a member pulled (or loaded whole) at one occurrence of an archive is not a loser at
    # another: an archive listed twice is searched twice, the member is loaded once
    seen = {(inst.archive.name, off) for inst in s.instances
            for off in (inst.archive.member_offsets_by_symbol.get(name, ()) if inst.whole
                        else inst.loaded)}
    for inst in s.instances:                       # archive members never pulled
        ar = inst.archive
        for off in ar.member_offsets_by_symbol.get(name, ()):
            key = (ar.name, off)
            if key in seen:
                continue
            seen.add(key)
            reason, detail = _member_reason(s, sym, inst.last_scan_seq)
            out.append(WhyNot(name, ar.display_name(ar.member(off)), reason, detail))
    out += near_misses(s, name)
    if s.wrap and name in s.wrap.symbols and sym.file >= 0:
        out.insert(0, WhyNot(name, s.files[sym.file], "wrapped",
                             f"--wrap={name}: undefined references to {name} resolve to "
                             f"__wrap_{name}; only __real_{name} and calls inside "
                             f"{s.files[sym.file]} reach this definition"))
    return out


def near_misses(s: LinkState, name: str) -> list[WhyNot]:
    tail = unqualified(name)
    out = []
    for other, sym in s.table.syms.items():
        if other == name or tail not in other or unqualified(other) != tail:
            continue
        where = s.files[sym.file] if sym.file >= 0 else "(undefined)"
        out.append(WhyNot(name, where, "mangled-name-near-miss",
                          f"{where} defines `{demangle(other)}' ({other}), a different symbol "
                          f"with the same unqualified name"))
    for inst in s.instances:
        for other in inst.archive.member_offsets_by_symbol:
            if other != name and other not in s.table.syms and tail in other \
                    and unqualified(other) == tail:
                out.append(WhyNot(name, inst.archive.name, "mangled-name-near-miss",
                                  f"{inst.archive.name} offers `{demangle(other)}' ({other})"))
    return out

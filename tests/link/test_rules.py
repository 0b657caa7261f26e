"""One test per row/cell of the rule table in weaklink/resolve/gnu/rules.py (no toolchain needed)."""
from __future__ import annotations

import pytest

from weaklink.read.objfile import K_ABS, K_COMMON, K_DEFINED, K_UNDEF
from weaklink.resolve.gnu import rules as R

A, B = 0, 1     # two file ids, A loaded first


def table_in(state: str, **kw) -> tuple[R.SymbolTable, R.Sym]:
    """A table whose symbol `x` is in `state`, reached from file A."""
    t = R.SymbolTable(**kw)
    x = t.get("x")
    setup = {
        "new": lambda: None,
        "undef": lambda: t.resolve(x, A, K_UNDEF, False, 0, 0),
        "undefweak": lambda: t.resolve(x, A, K_UNDEF, True, 0, 0),
        "defweak": lambda: t.resolve(x, A, K_DEFINED, True, 4, 1),
        "defined": lambda: t.resolve(x, A, K_DEFINED, False, 4, 1),
        "common": lambda: t.resolve(x, A, K_COMMON, False, 8, 0xFFF2),
        "absolute": lambda: t.resolve(x, A, K_ABS, False, 0, 0xFFF1, 16),
    }[state]
    setup()
    return t, x


EXISTING = ("new", "undef", "undefweak", "defweak", "defined", "common")


# -- row: undefined ----------------------------------------------------------------------------
@pytest.mark.parametrize("existing,after,counts", [
    ("new", R.UNDEF, 1), ("undef", R.UNDEF, 0), ("undefweak", R.UNDEF, 1),
    ("defweak", R.DEFWEAK, 0), ("defined", R.DEFINED, 0), ("common", R.COMMON, 0)])
def test_row_undefined(existing, after, counts):
    t, x = table_in(existing)
    before = t.undefs
    t.resolve(x, B, K_UNDEF, False, 0, 0)
    assert x.state == after and t.undefs - before == counts
    if existing in ("new", "undefweak"):
        assert x.ref_file == B        # bfd u.undef.abfd: the file that made it undefined


# -- row: undefined weak -----------------------------------------------------------------------
@pytest.mark.parametrize("existing", EXISTING)
def test_row_undefined_weak(existing):
    t, x = table_in(existing)
    state, before = x.state, t.undefs
    t.resolve(x, B, K_UNDEF, True, 0, 0)
    assert x.state == (R.UNDEFWEAK if existing == "new" else state)
    assert t.undefs == before         # a weak undefined never joins the undefs list


# -- row: common ---------------------------------------------------------------------------------
@pytest.mark.parametrize("existing,after,owner", [
    ("new", R.COMMON, B), ("undef", R.COMMON, B), ("undefweak", R.COMMON, B),
    ("defweak", R.COMMON, B), ("defined", R.DEFINED, A)])
def test_row_common(existing, after, owner):
    t, x = table_in(existing)
    t.resolve(x, B, K_COMMON, False, 16, 0xFFF2)
    assert (x.state, x.file) == (after, owner)


def test_row_common_new_joins_undefs_list():
    t, x = table_in("new")
    t.resolve(x, B, K_COMMON, False, 16, 0xFFF2)
    assert t.undefs == 1


@pytest.mark.parametrize("size,owner,merged", [(16, B, 16), (8, A, 8), (4, A, 8)])
def test_row_common_on_common_takes_largest_first_on_tie(size, owner, merged):
    t, x = table_in("common")
    t.resolve(x, B, K_COMMON, False, size, 0xFFF2)
    assert (x.state, x.file, x.size) == (R.COMMON, owner, merged)


# -- row: weak definition -------------------------------------------------------------------------
@pytest.mark.parametrize("existing,after,owner,noticed", [
    ("new", R.DEFWEAK, B, True), ("undef", R.DEFWEAK, B, True),
    ("undefweak", R.DEFWEAK, B, True), ("defweak", R.DEFWEAK, A, False),
    ("defined", R.DEFINED, A, False), ("common", R.COMMON, A, True)])
def test_row_weak_definition(existing, after, owner, noticed):
    t, x = table_in(existing)
    t.resolve(x, B, K_DEFINED, True, 4, 1)
    assert (x.state, x.file) == (after, owner)
    assert ((B, R.N_DEF) in x.noticed()) is noticed


# -- row: strong definition -----------------------------------------------------------------------
@pytest.mark.parametrize("existing", ["new", "undef", "undefweak", "defweak", "common"])
def test_row_strong_definition_takes_over(existing):
    t, x = table_in(existing)
    t.resolve(x, B, K_DEFINED, False, 4, 1)
    assert (x.state, x.file) == (R.DEFINED, B) and not t.multiple


def test_row_strong_on_strong_is_multiple_definition_first_kept():
    t, x = table_in("defined")
    t.resolve(x, B, K_DEFINED, False, 4, 1)
    assert x.file == A and t.multiple == [("x", B, A, False)]
    assert (B, R.N_DEF) not in x.noticed()


def test_row_strong_on_strong_with_muldefs_is_silent():
    t, x = table_in("defined", muldefs=True)
    t.resolve(x, B, K_DEFINED, False, 4, 1)
    assert x.file == A and not t.multiple


@pytest.mark.parametrize("value,error", [(16, False), (32, True)])
def test_row_absolute_on_absolute(value, error):
    t, x = table_in("absolute")
    t.resolve(x, B, K_ABS, False, 0, 0xFFF1, value)
    assert bool(t.multiple) is error


# -- row: --defsym ----------------------------------------------------------------------------------
@pytest.mark.parametrize("existing", EXISTING)
def test_row_assignment_overrides(existing):
    t, x = table_in(existing)
    t.assign(x, 0x1234)
    assert (x.state, x.file, x.absolute, x.value) == (R.DEFINED, -1, True, 0x1234)


@pytest.mark.parametrize("existing", ["new", "undef", "undefweak", "common"])
@pytest.mark.parametrize("weak", [False, True])
def test_row_soft_assignment_is_taken_over_by_a_definition(existing, weak):
    t, x = table_in(existing)
    t.assign(x, 0x1234)
    t.resolve(x, B, K_DEFINED, weak, 4, 1)           # ldscript_def: treated as undefined
    assert not t.multiple and x.file == B and (B, R.N_DEF) in x.noticed()


@pytest.mark.parametrize("existing", ["defweak", "defined"])
@pytest.mark.parametrize("weak", [False, True])
def test_row_hard_assignment_clashes_with_any_definition(existing, weak):
    t, x = table_in(existing)
    t.assign(x, 0x1234)
    t.resolve(x, B, K_DEFINED, weak, 4, 1)
    assert t.multiple == [("x", B, -1, True)] and x.file == -1
    assert (B, R.N_DEF) not in x.noticed()


# -- archive extraction rule ------------------------------------------------------------------------
@pytest.mark.parametrize("existing,data_def,wanted", [
    ("new", True, False), ("undef", True, True), ("undefweak", True, False),
    ("defweak", True, False), ("defined", True, False),
    ("common", True, True), ("common", False, False)])
def test_member_wanted(existing, data_def, wanted):
    _, x = table_in(existing)
    sym = None if existing == "new" else x
    assert R.member_wanted(sym, lambda: data_def) is wanted


def test_row_assignment_is_hard_once_any_object_defined_the_name():
    t, x = table_in("defweak")
    t.resolve(x, B, K_COMMON, False, 16, 0xFFF2)      # the common wins, def_regular stays
    t.assign(x, 0x40)
    t.resolve(x, 2, K_DEFINED, True, 4, 1)
    assert t.multiple == [("x", 2, -1, True)]


@pytest.mark.parametrize("existing", ["undef", "defined"])
def test_row_common_takes_over_any_assignment(existing):
    t, x = table_in(existing)
    t.assign(x, 0x40)
    t.resolve(x, B, K_COMMON, False, 16, 0xFFF2)
    assert (x.state, x.file) == (R.COMMON, B)
    t.resolve(x, 2, K_DEFINED, False, 4, 1)           # and then a definition beats the common
    assert (x.state, x.file) == (R.DEFINED, 2) and not t.multiple

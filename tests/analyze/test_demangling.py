"""The in-process nested-name demangler against libstdc++'s (cxxfilt), and the batch
demangler (one c++filt process) against cxxfilt too."""
from __future__ import annotations

import cxxfilt
from hypothesis import given, settings, strategies as st

from weaklink.analyze.demangling import BATCH_THRESHOLD, Demangling
from weaklink.analyze.nested import demangle_nested

ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,14}", fullmatch=True)
nested = st.lists(ident, min_size=1, max_size=5).map(
    lambda parts: "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E")
others = st.sampled_from([
    "_Z4gfuni", "_ZN2ns1fEv", "_ZNK1S3getEv", "_ZN2ns1fIiEEvT_", "_ZNSt6vectorIiSaIiEE4sizeEv",
    "_ZN12_GLOBAL__N_18anon_varE", "_ZL6kconst", "_ZN1S2svE", "main", "_ZN", "_ZNE",
    "_ZN01aE", "_ZN3abE", "_ZN2abcE", "_ZN10executorch8backends3arm14dedicated_sramE",
    "_ZN99999aE", "_ZN2nsE",
])


def _reference(name: str) -> str:
    try:
        return cxxfilt.demangle(name)
    except Exception:
        return name


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(nested.map(lambda n: (n, True)), others.map(lambda n: (n, False))),
                min_size=1, max_size=40))
def test_nested_matches_cxxfilt_or_declines(items):
    for name, simple in items:
        got = demangle_nested(name.encode())
        if got is not None:
            assert got.decode() == _reference(name), name
        if simple and not name.startswith("_ZN12_GLOBAL__N"):
            assert got is not None, name        # every plain nested data name is decoded


def test_few_names_in_process_keep_input_order():
    names = [b"_ZN2ns1aE", b"_Z4gfuni", b"_ZN2ns1bE", b"_ZNK1S3getEv", b"plain_c"]
    assert Demangling(names).lines() == [b"ns::a", b"gfun(int)", b"ns::b", b"S::get() const",
                                         b"plain_c"]


def test_batch_demangler_matches_cxxfilt():
    names = [f"_ZN2ns{len(f'f{i}')}f{i}Ei" for i in range(BATCH_THRESHOLD + 10)]
    names[7] = "not_mangled"
    lines = Demangling([n.encode() for n in names]).lines()
    assert [x.decode() for x in lines] == [_reference(n) for n in names]


def test_batch_demangler_splits_past_the_argument_limit(monkeypatch):
    """Names beyond a quarter of ARG_MAX go to several c++filt processes, in order."""
    import os

    from weaklink.analyze import demangling
    names = [f"_ZN2ns{len(f'g{i}')}g{i}Ev".encode() for i in range(BATCH_THRESHOLD + 100)]
    monkeypatch.setattr(os, "sysconf", lambda key: 4 * 4096)      # 4 KiB of arguments each
    chunks = demangling._chunks(names)
    assert len(chunks) > 3 and [n for c in chunks for n in c] == names
    lines = Demangling(names).lines()
    assert [x.decode() for x in lines] == [_reference(n.decode()) for n in names]

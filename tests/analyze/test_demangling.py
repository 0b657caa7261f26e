"""The in-process nested-name demangler against libstdc++'s (cxxfilt), and the merge with
the real demangler for everything else."""
from __future__ import annotations

import cxxfilt
import numpy as np
from hypothesis import given, settings, strategies as st

from weaklink.analyze.demangling import Demangling, Merged
from weaklink.analyze.jsonrows import Slice, encode_rows
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


def _split(names):
    raw = b"\0".join(n.encode() for n in names) + b"\0"
    off = np.cumsum([0] + [len(n) + 1 for n in names[:-1]])
    return raw, off, np.array([len(n) for n in names])


def _reference(name: str) -> str:
    try:
        return cxxfilt.demangle(name)
    except Exception:
        return name


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(nested.map(lambda n: (n, True)), others.map(lambda n: (n, False))),
                min_size=1, max_size=40))
def test_nested_matches_cxxfilt_or_declines(items):
    names = [n for n, _ in items]
    raw, off, length = _split(names)
    ok, text = demangle_nested(raw, off, length)
    lines = text.split(b"\n")[:len(names)]
    for (name, simple), good, line in zip(items, ok, lines):
        if good:
            assert line.decode() == _reference(name), name
        if simple and not name.startswith("_ZN12_GLOBAL__N"):
            assert good, name          # every plain nested data name is decoded in process


def test_merge_keeps_input_order():
    names = ["_ZN2ns1aE", "_Z4gfuni", "_ZN2ns1bE", "_ZNK1S3getEv"]
    raw, off, length = _split(names)
    ok, fast = demangle_nested(raw, off, length)
    assert ok.tolist() == [True, False, True, False]
    hard = np.flatnonzero(~ok)
    text = encode_rows([Slice(off[hard], length[hard])], len(hard), raw, sep=b"\n") + b"\n"
    merged = Merged(ok, fast, Demangling(text, len(hard))).lines()
    assert merged.decode().split("\n")[:-1] == ["ns::a", "gfun(int)", "ns::b", "S::get() const"]


def test_batch_demangler_matches_cxxfilt():
    from weaklink.analyze import demangling as D
    names = [f"_ZN2ns{len(f'f{i}')}f{i}Ei" for i in range(D.BATCH_THRESHOLD + 10)]
    names[7] = "not_mangled"
    text = ("\n".join(names) + "\n").encode()
    lines = D.Demangling(text, len(names)).lines().decode().split("\n")[:-1]
    assert lines == [_reference(n) for n in names]

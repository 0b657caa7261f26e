"""The demangler: the C++ runtime's __cxa_demangle in process against binutils' c++filt,
and the batch demangler (c++filt processes) against the in-process one."""
from __future__ import annotations

import subprocess

from hypothesis import given, settings, strategies as st

from weaklink.analyze.demangling import BATCH_THRESHOLD, Demangling
from weaklink.demangle import cxa_demangle, cxxfilt_tool, demangle, demangle_bytes

ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,14}", fullmatch=True)
nested = st.lists(ident, min_size=1, max_size=5).map(
    lambda parts: "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E")
others = st.sampled_from([
    "_Z4gfuni", "_ZN2ns1fEv", "_ZNK1S3getEv", "_ZN2ns1fIiEEvT_", "_ZNSt6vectorIiSaIiEE4sizeEv",
    "_ZN12_GLOBAL__N_18anon_varE", "_ZL6kconst", "_ZN1S2svE", "main", "_ZN", "_ZNE",
    "_ZN01aE", "_ZN3abE", "_ZN2abcE", "_ZN10executorch8backends3arm14dedicated_sramE",
    "_ZN99999aE", "_ZN2nsE", "_ZNSs4_Rep20_S_empty_rep_storageE", "_ZNSs4_Rep9_S_createEjjRKSaIcE",
    "_ZNSsC1EPKcRKSaIcE", "_ZNSi4readEPci",
])


def _reference(names: list[str]) -> list[str]:
    """binutils' c++filt as nm -C demangles (without DMGL_VERBOSE: `std::string::_Rep`,
    not `std::basic_string<char, ...>::_Rep`), the demangler of ld's messages."""
    done = subprocess.run([cxxfilt_tool(), "--no-verbose", "--", *names], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(nested, others), min_size=1, max_size=40))
def test_in_process_matches_cxxfilt(names):
    assert [demangle(n) for n in names] == _reference(names)


def test_the_runtime_demangler_is_loaded():
    """libstdc++ is on every machine with g++: names are demangled in process."""
    assert cxa_demangle() is not None
    assert cxa_demangle()(b"_ZNK1S3getEv") == b"S::get() const"
    assert cxa_demangle()(b"_ZN99999aE") is None


def test_not_mangled_or_invalid_comes_back_unchanged():
    assert demangle("main") == "main"
    assert demangle_bytes(b"_ZN") == b"_ZN"
    assert demangle_bytes(b"_Zxx") == b"_Zxx"
    assert demangle_bytes(b"_ZN2ns1aE") == b"ns::a"


def test_few_names_in_process_keep_input_order():
    names = [b"_ZN2ns1aE", b"_Z4gfuni", b"_ZN2ns1bE", b"_ZNK1S3getEv", b"plain_c"]
    assert Demangling(names).lines() == [b"ns::a", b"gfun(int)", b"ns::b", b"S::get() const",
                                         b"plain_c"]


def test_batch_demangler_matches_in_process():
    names = [f"_ZN2ns{len(f'f{i}')}f{i}Ei" for i in range(BATCH_THRESHOLD + 10)]
    names[7] = "not_mangled"
    names[9] = "_ZNSs4_Rep20_S_empty_rep_storageE"      # a standard substitution as a prefix
    lines = Demangling([n.encode() for n in names]).lines()
    assert [x.decode() for x in lines] == [demangle(n) for n in names]
    assert lines[9] == b"std::string::_Rep::_S_empty_rep_storage"      # as nm -C prints it


def test_batch_demangler_splits_past_the_argument_limit(monkeypatch):
    """Names beyond a quarter of ARG_MAX go to several c++filt processes, in order."""
    import os

    from weaklink.analyze import demangling
    names = [f"_ZN2ns{len(f'g{i}')}g{i}Ev".encode() for i in range(BATCH_THRESHOLD + 100)]
    monkeypatch.setattr(os, "sysconf", lambda key: 4 * 4096)      # 4 KiB of arguments each
    chunks = demangling._chunks(names)
    assert len(chunks) > 3 and [n for c in chunks for n in c] == names
    lines = Demangling(names).lines()
    assert [x.decode() for x in lines] == [demangle(n.decode()) for n in names]

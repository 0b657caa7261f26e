"""The demangler: one c++filt process per list of names (per part of a list past the system's
argument limit), against binutils' c++filt given each list (how nm -C and ld's messages
demangle them)."""
from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from weaklink import demangle as D
from weaklink.cli import main

ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,14}", fullmatch=True)
nested = st.lists(ident, min_size=1, max_size=5).map(
    lambda parts: "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + "E")
others = st.sampled_from([
    "_Z4gfuni", "_ZN2ns1fEv", "_ZNK1S3getEv", "_ZN2ns1fIiEEvT_", "_ZNSt6vectorIiSaIiEE4sizeEv",
    "_ZN12_GLOBAL__N_18anon_varE", "_ZL6kconst", "_ZN1S2svE", "main", "_ZN", "_ZNE",
    "_ZN01aE", "_ZN3abE", "_ZN2abcE", "_ZN10executorch8backends3arm14dedicated_sramE",
    "_ZN99999aE", "_ZN2nsE", "_ZNSs4_Rep20_S_empty_rep_storageE", "_ZNSs4_Rep9_S_createEjjRKSaIcE",
    "_ZNSsC1EPKcRKSaIcE", "_ZNSi4readEPci", "_ZN2ns1fEv.constprop.0", "_ZL3bazv.part.0.cold",
])


def _reference(names: list[str]) -> list[str]:
    """binutils' c++filt with the names as its arguments, as nm -C demangles (without
    DMGL_VERBOSE: `std::string::_Rep`, not `std::basic_string<char, ...>::_Rep`)."""
    done = subprocess.run([D.cxxfilt(), "--no-verbose", "--", *names], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(nested, others), min_size=1, max_size=40))
def test_one_process_matches_cxxfilt_on_each_name(names):
    assert [x.decode() for x in D.demangle_all([n.encode() for n in names])] == _reference(names)
    assert [D.demangle_many(names)[n] for n in names] == _reference(names)


def test_not_mangled_or_invalid_comes_back_unchanged():
    assert D.demangle("main") == "main"
    assert D.demangle_all([b"_ZN", b"_Zxx", b"_ZN2ns1aE"]) == [b"_ZN", b"_Zxx", b"ns::a"]


def test_names_c_plus_plus_cannot_spell_are_not_sent():
    """A byte c++filt would read as a separator (a symbol version, a space, a newline) makes no
    Itanium name: such a name comes back as it is, and the names around it keep their places."""
    names = [b"_ZN2ns1aE", b"_ZN2ns1bE@@V1", b"_ZN2ns1c\nE", b"_Z4gfuni", b"plain_c", b"_ZN2ns1d E"]
    assert D.demangle_all(names) == [b"ns::a", b"_ZN2ns1bE@@V1", b"_ZN2ns1c\nE", b"gfun(int)",
                                     b"plain_c", b"_ZN2ns1d E"]


def test_a_long_list_is_one_process_in_order():
    names = [f"_ZN2ns{len(f'f{i}')}f{i}Ei" for i in range(5000)]
    names[9] = "_ZNSs4_Rep20_S_empty_rep_storageE"      # a standard substitution as a prefix
    done = D.demangle_all([n.encode() for n in names])
    assert [x.decode() for x in done] == _reference(names)
    assert done[9] == b"std::string::_Rep::_S_empty_rep_storage"      # as nm -C prints it


def test_a_list_past_the_argument_limit_goes_to_several_processes_in_order(monkeypatch):
    names = [f"_ZN2ns{len(f'g{i}')}g{i}Ev".encode() for i in range(600)]
    monkeypatch.setattr(D.os, "sysconf", lambda key: 4 * 4096)     # 4 KiB of arguments each
    parts = D._parts(names)
    assert len(parts) > 3 and [n for p in parts for n in p] == names
    assert [x.decode() for x in D.demangle_all(names)] == [f"ns::g{i}()" for i in range(600)]


@pytest.fixture
def no_cxxfilt(monkeypatch, tmp_path):
    """A PATH without binutils."""
    monkeypatch.setenv("PATH", str(tmp_path))
    D.cxxfilt.cache_clear()
    D.demangle.cache_clear()
    yield
    D.cxxfilt.cache_clear()
    D.demangle.cache_clear()


def test_without_cxxfilt_names_stay_mangled_and_say_why(no_cxxfilt):
    assert D.demangle_all([b"_ZN2ns1aE"]) == [b"_ZN2ns1aE"] and D.demangle("_ZN2ns1aE") == "_ZN2ns1aE"
    assert "c++filt" in D.missing()


def test_analyze_without_cxxfilt_notes_it(small_image, capsys, no_cxxfilt):
    assert main(["analyze", "--json", str(small_image.elf)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {s["name"]: s["demangled"] for s in doc["symbols"]}["_ZN2ns6weak_vE"] == "_ZN2ns6weak_vE"
    assert D.missing() in doc["notes"]

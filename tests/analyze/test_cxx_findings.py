"""near-miss-override and weak-default-survived on C++ firmware built with the real
arm-none-eabi-g++ (tests/analyze/cxx_sources.py): true and false cases from the code patterns
of real ExecuTorch and TFLM images, in a Release build (no DWARF) and a debug one (-O0 -g)."""
from __future__ import annotations

import json

import pytest

from weaklink.analyze import analyze
from weaklink.analyze.cxxnames import parse
from weaklink.analyze.render import render

from cxx_sources import build

# The overrides that were meant and cannot bind, with why.
NEAR_MISSES = {
    "ethosu_fast_scratch": 'extern "C" mismatch',        # C default, namespaced C++ override
    "_Z10board_initv": 'extern "C" mismatch',            # C++ default, C override
    "_ZN3drv5levelEi": "C++ namespace mismatch: drv and app",   # drv::level vs app::level
}
# Weak defaults nobody replaced: always reported.
WEAK_DEFAULTS = {"ethosu_fast_scratch", "ethosu_fast_scratch_size", "_Z10board_initv",
                 "_ZN3drv5levelEi", "_ZN3drv4modeEi", "reset"}
# C++ vague linkage in both builds, with the evidence that decides it.
VAGUE = {
    "_ZTVN10executorch7runtime15MemoryAllocatorE": "vtable",
    "_ZTIN10executorch8backends3arm13EthosUBackendE": "typeinfo",
    "_ZTSN10executorch7runtime16BackendInterfaceE": "typeinfo name",
    "_ZGVZN10executorch7runtime7counterEvE1c": "guard variable",
    "_ZZN10executorch7runtime7counterEvE1c": "static data of an inline function",
    "_ZN10executorch7runtime8clamp_toIiEET_S2_S2_S2_": "template instantiation",
    "_ZNSs4_Rep20_S_empty_rep_storageE": "member of a standard class template specialization",
    "_ZN10executorch7runtime15MemoryAllocatorD1Ev": "constructor or destructor",
    "_ZN10executorch7runtime15MemoryAllocator5resetEv": "a vtable entry",
    "_ZN10executorch7runtime15MemoryAllocator8allocateEj": "a vtable entry",
    "_ZN10executorch8backends3arm13EthosUBackend4initEPKcj": "a vtable entry",
}


@pytest.fixture(scope="module")
def images(cross_toolchain, tmp_path_factory):
    root = tmp_path_factory.mktemp("cxx")
    return {kind: build(root / kind, kind) for kind in ("release", "debug")}


def _doc(path) -> dict:
    return json.loads(analyze(str(path)).to_json())


def _near(doc) -> dict[str, str]:
    return {f["symbol"]: f["message"] for f in doc["findings"]
            if f["rule"] == "near-miss-override"}


@pytest.mark.parametrize("kind", ["release", "debug"])
def test_near_miss_only_where_an_override_was_meant(images, kind):
    near = _near(_doc(images[kind]))
    assert set(near) == set(NEAR_MISSES)
    for symbol, why in NEAR_MISSES.items():
        assert why in near[symbol], near[symbol]
    assert "executorch::backends::arm::ethosu_fast_scratch" in near["ethosu_fast_scratch"]
    assert "app::level(int)" in near["_ZN3drv5levelEi"]


@pytest.mark.parametrize("kind", ["release", "debug"])
def test_no_near_miss_between_methods_or_signatures(images, kind):
    """Virtual overrides (MemoryAllocator::reset / ArmMemoryAllocator::reset), methods of
    unrelated classes (EthosUBackend::init / Method::init), a C default against a method
    (reset / ArmMemoryAllocator::reset) and two signatures (drv::mode(int) / app::mode(char))
    all share an unqualified name with a strong definition; none is a near miss."""
    doc = _doc(images[kind])
    names = {s["name"] for s in doc["symbols"]}
    assert {"_ZN18ArmMemoryAllocator5resetEv", "_ZN10executorch7runtime6Method4initEi",
            "_ZN3app4modeEc", "reset"} <= names               # the would-be partners exist
    near = _near(doc)
    for weak in ("_ZN10executorch7runtime15MemoryAllocator5resetEv",
                 "_ZN10executorch7runtime15MemoryAllocator8allocateEj",
                 "_ZN10executorch8backends3arm13EthosUBackend4initEPKcj",
                 "reset", "_ZN3drv4modeEi"):
        assert weak not in near


@pytest.mark.parametrize("kind", ["release", "debug"])
def test_weak_default_survived_leaves_out_vague_linkage(images, kind):
    doc = _doc(images[kind])
    weak = {f["symbol"] for f in doc["findings"] if f["rule"] == "weak-default-survived"}
    vague = {v["symbol"]: v["reason"] for v in doc["vague_linkage"]}
    assert WEAK_DEFAULTS <= weak
    assert not weak & set(vague)
    for symbol, why in VAGUE.items():
        assert why in vague[symbol], (symbol, vague.get(symbol))
    every_weak = {s["name"] for s in doc["symbols"] if s["binding"] == "weak"}
    assert every_weak == weak | set(vague)            # each weak symbol is in one list


def test_methods_without_dwarf_rest_on_an_assumption(images):
    """Release: Board::init (defined in the class body) and Board::out (made weak by hand
    outside it) look the same; both are read as vague linkage, and the report says it
    assumed so. Debug: DWARF tells them apart, and nothing is assumed."""
    release, debug = _doc(images["release"]), _doc(images["debug"])
    vague = {v["symbol"]: v["reason"] for v in release["vague_linkage"]}
    assert "assumed" in vague["_ZN5Board4initEv"] and "assumed" in vague["_ZN5Board3outEv"]
    assert any(n.startswith("assumption:") for n in release["notes"])
    vague = {v["symbol"]: v["reason"] for v in debug["vague_linkage"]}
    assert vague["_ZN5Board4initEv"] == "method defined in its class body (DWARF)"
    assert vague["_ZN5Board5twiceEi"] == "method defined in its class body (DWARF)"
    weak = {f["symbol"] for f in debug["findings"] if f["rule"] == "weak-default-survived"}
    assert "_ZN5Board3outEv" in weak and not debug["notes"]


def test_table_counts_vague_linkage(images):
    text = render(analyze(str(images["release"])))
    assert "weak C++ vague-linkage definitions left out" in text and "(None)" not in text


def test_expected_override_is_checked_even_for_vague_linkage(images):
    report = analyze(str(images["release"]),
                     expect_override=["_ZN10executorch7runtime15MemoryAllocator5resetEv"])
    assert report.exit_code == 1



@pytest.mark.parametrize("text, scope, name, params, quals, template", [
    ("ns::Foo::bar(int) const", "ns::Foo", "bar", "int", "const", False),
    ("void ns::f<int>(int)", "ns", "f<int>", "int", "", True),
    ("ns::operator<(A const&, A const&)", "ns", "operator<", "A const&, A const&", "", False),
    ("ns::operator< <int>(int)", "ns", "operator< <int>", "int", "", True),
    ("Foo::operator()(int)", "Foo", "operator()", "int", "", False),
    ("Foo::operator int() const", "Foo", "operator int", "", "const", False),
    ("operator new(unsigned int)", "", "operator new", "unsigned int", "", False),
    ("(anonymous namespace)::x", "(anonymous namespace)", "x", None, "", False),
    ("ns::g[abi:cxx11]()", "ns", "g[abi:cxx11]", "", "", False),
    ("ns::x<(1>2)>", "ns", "x<(1>2)>", None, "", True),
])
def test_parse_demangled_names(text, scope, name, params, quals, template):
    got = parse(text)
    assert (got.scope, got.name, got.params, got.quals, got.template) == (
        scope, name, params, quals, template)


def test_structors_of_template_classes():
    assert parse("std::basic_string<char, std::char_traits<char> >::~basic_string()").structor
    assert parse("A<int>::A()").structor and not parse("A::B()").structor

"""ld's wording on the real fixture links: C++ names are demangled unless --no-demangle."""
from __future__ import annotations

from weaklink.resolve import link


def test_messages_match_the_real_ld_stderr(firmware):
    outcome = firmware["extern-custom-u85"]
    result = link(outcome.ld_args, cwd=str(outcome.cwd))
    assert not result.ok
    for error in result.errors:
        assert error.symbol.startswith("_ZN10executorch")        # the raw name, for tools
        assert error.message in outcome.stderr                   # the text, as ld printed it
    assert {e.message for e in result.errors} == {
        "undefined reference to `executorch::backends::arm::ethosu_fast_scratch'",
        "undefined reference to `executorch::backends::arm::ethosu_fast_scratch_size'"}


def test_no_demangle_keeps_raw_names(firmware):
    outcome = firmware["extern-custom-u85"]
    result = link([*outcome.ld_args, "--no-demangle"], cwd=str(outcome.cwd))
    assert {e.message for e in result.errors} == {
        "undefined reference to `_ZN10executorch8backends3arm19ethosu_fast_scratchE'",
        "undefined reference to `_ZN10executorch8backends3arm24ethosu_fast_scratch_sizeE'"}

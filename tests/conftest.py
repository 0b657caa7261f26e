"""Session fixtures shared by every test folder.

`firmware` builds the bundled fixture variants once per session with the real cross toolchain
(incremental, into $WEAKLINK_CACHE or <repo>/.cache) and maps each variant name, such as
"weak-custom-u85", to its LinkOutcome. Tests that need the toolchain skip with a message when
it is absent; CI always has it.

Property tests (hypothesis) run derandomized: every run draws the same examples, so a CI
failure replays exactly. HYPOTHESIS_PROFILE=fresh explores new examples, by hand.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

from weaklink import toolchain

settings.register_profile("ci", derandomize=True)
settings.register_profile("fresh", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    if toolchain.available():
        return f"cross toolchain: {toolchain.version()}"
    return "cross toolchain: arm-none-eabi-* NOT FOUND (toolchain tests skip)"


@pytest.fixture(scope="session")
def cross_toolchain():
    if not toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed (apt-get install gcc-arm-none-eabi "
                    "binutils-arm-none-eabi libnewlib-arm-none-eabi)")
    return toolchain


@pytest.fixture(scope="session")
def firmware(cross_toolchain):
    from weaklink.builders import firmware as fixtures

    return {o.variant.name: o for o in fixtures.build()}


@pytest.fixture
def code_scans(monkeypatch) -> list[set[int]]:
    """The target sets of every scan of the code for calls (weaklink.bind.callsite.calls_to)
    made while the test runs, in order: a test counts how often the code is read."""
    from weaklink.bind import callsite

    scans, real = [], callsite.calls_to

    def counting(image, targets):
        scans.append(set(targets))
        return real(image, targets)

    monkeypatch.setattr(callsite, "calls_to", counting)
    return scans

"""Fixtures for the run tests: QEMU (skips with the install line when it is absent; CI installs
it), small firmware built from source in the test, and the fixture variants that boot on
QEMU's mps3-an547."""
from __future__ import annotations

import shutil

import pytest

from weaklink.run.qemu import QEMU


@pytest.fixture(scope="session")
def qemu():
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} not installed (apt-get install qemu-system-arm)")
    return QEMU


@pytest.fixture(scope="session")
def run_variants(cross_toolchain, qemu):
    """The images that boot on mps3-an547: the U55 rows and the story's rows built for U65 and
    for u85tcm (Corstone-320 without BRAM), by name."""
    from weaklink.builders import firmware as fixtures
    from weaklink.demo.runs import RUN_VARIANTS

    wanted = [v for v in fixtures.VARIANTS if v.target == "u55"] + list(RUN_VARIANTS) \
        + list(fixtures.CORRUPTION_VARIANTS) + list(fixtures.RUN_ONLY_VARIANTS)
    return {o.variant.name: o for o in fixtures.build(wanted)}

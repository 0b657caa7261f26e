"""Fixtures for the link-model tests: a Scenario in tmp_path, skipped without the toolchain.
Helpers live in snippets.py and linkgen.py (plain modules: `conftest` is not importable by
name once several test folders have one)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from weaklink import toolchain
from weaklink.scenario import Scenario

sys.path.insert(0, str(Path(__file__).parent))      # snippets.py, linkgen.py


@pytest.fixture
def sc(tmp_path) -> Scenario:
    if not toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed; needed to build scenario objects")
    return Scenario(tmp_path)

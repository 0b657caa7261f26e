"""The `weaklink fvp` fixtures (fixtures/firmware/fvp/*.c) built with the real cross toolchain
on tests/run's minimal mps3-an547 startup (UART0 `say`, main's status as a semihosting exit)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "fixtures" / "firmware" / "fvp"
sys.path.insert(0, str(ROOT / "tests" / "run"))
from firmware_src import build_firmware  # noqa: E402

FIXTURES = ("eot", "semihost_io", "data", "uarts")


def source(name: str) -> str:
    """The fixture's C with fvp_io.h in place of its #include (build_firmware takes one file)."""
    header = (SOURCES / "fvp_io.h").read_text()
    return (SOURCES / f"{name}.c").read_text().replace('#include "fvp_io.h"', header)


def build(directory: Path, name: str) -> Path:
    return build_firmware(directory / name, source(name), name=name)

"""`weaklink --cmake-dir`: the directory of weaklink's CMake package (weaklink/cmake/, package
data), for `find_package(weaklink CONFIG)` with `-Dweaklink_DIR=$(weaklink --cmake-dir)`.

It writes nothing. The package finds the weaklink it runs by asking each candidate (the console
script installed beside the package, then `weaklink` on PATH) for this directory
(weaklinkConfig.cmake; docs/cmake.md).
"""
from __future__ import annotations

from pathlib import Path

CMAKE_DIR = Path(__file__).resolve().parent / "cmake"

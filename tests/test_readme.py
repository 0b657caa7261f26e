"""The README's Python example is a test: it must keep running as written."""
from __future__ import annotations

import re

from weaklink.cachedir import REPO


def test_readme_python_example_runs(cross_toolchain, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert len(blocks) == 1
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test(tmp_path)

"""The symbol changes of the story's diffs against arm-none-eabi-nm on the same two images."""
from __future__ import annotations

import subprocess

import pytest

from weaklink import toolchain
from weaklink.diff import diff

PAIRS = [("extern-example-u85", "removed-example-u85"),
         ("removed-example-u85", "weak-example-u85"),
         ("weak-example-u85", "weak-custom-u85"),
         ("weak-example-u85", "weak-too-small-u85"),
         ("extern-example-u55", "weak-custom-u55")]


def nm(path) -> dict[str, tuple[str, int | None]]:
    """Defined non-local symbols: name → (nm letter, size)."""
    out = subprocess.run([toolchain.tool("nm"), "-S", str(path)], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        letter, name = parts[-2], parts[-1]
        if letter.isupper() and letter != "U":
            syms[name] = (letter, int(parts[1], 16) if len(parts) == 4 else None)
    return syms


@pytest.mark.parametrize("old, new", PAIRS)
def test_added_removed_size_and_binding_agree_with_nm(firmware, old, new):
    a, b = firmware[old], firmware[new]
    r = diff(str(a.elf), str(b.elf), map_old=str(a.map), map_new=str(b.map))
    one, two = nm(a.elf), nm(b.elf)
    kinds = {c.symbol: set(c.kinds) for c in r.changes}
    assert {s for s, k in kinds.items() if "added" in k} == set(two) - set(one)
    assert {s for s, k in kinds.items() if "removed" in k} == set(one) - set(two)
    both = set(one) & set(two)
    weak = lambda letter: letter in "VW"       # noqa: E731
    assert {s for s, k in kinds.items() if "binding-changed" in k} == \
        {s for s in both if weak(one[s][0]) != weak(two[s][0])}
    assert {s for s, k in kinds.items() if "size-changed" in k} == \
        {s for s in both if (one[s][1] or 0) != (two[s][1] or 0)}

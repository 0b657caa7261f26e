"""weaklink.heap: the heap a large analysis will use, faulted in on another thread; and the
process settings of the commands that analyse images (weaklink.commands.prepare_for_images)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from weaklink import heap

pytestmark = pytest.mark.skipif(not heap.usable(), reason="glibc on Linux with 2 CPUs or more")

# In a process of its own: warm() changes the allocator settings of the whole process.
_PROBE = r"""
import json, sys
import numpy as np
from weaklink import heap

def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) * 1024

before = rss()
helper = heap.warm(int(sys.argv[1]))
helper.join()
warmed = rss()
blocks = [np.ones(4 << 20, np.uint8) for _ in range(8)]      # 32 MB written after the warming
print(json.dumps({"before": before, "warmed": warmed, "used": rss(), "small": heap.warm(1 << 20)}))
"""


def test_warmed_heap_is_kept_and_reused():
    out = subprocess.run([sys.executable, "-c", _PROBE, str(64 << 20)], capture_output=True,
                         text=True, check=True)
    r = json.loads(out.stdout)
    assert r["warmed"] - r["before"] >= 48 << 20      # touched, freed, and not given back
    assert r["used"] - r["warmed"] < 8 << 20          # the next 32 MB reuse those pages
    assert r["small"] is None                         # under one chunk: not worth a thread


def test_large_images_warm_the_heap_small_ones_do_not(firmware, monkeypatch):
    from weaklink import commands
    from weaklink.read import image as image_mod
    calls = []
    monkeypatch.setattr(heap, "warm", calls.append)
    elf = next(iter(firmware.values())).elf
    images = commands.prepare_for_images(str(elf))
    assert [i.name for i in images] == [str(elf)] and calls == []
    monkeypatch.setattr(image_mod, "NUMPY_FROM", 0)          # every image is large
    images = commands.prepare_for_images(str(elf), str(elf))
    entries = images[0].elf.symtab_span[1]
    assert len(images) == 2 and calls == [2 * entries * commands.HEAP_PER_ENTRY]


def test_an_unreadable_image_is_left_to_the_command(tmp_path, firmware):
    from weaklink import commands
    elf = str(next(iter(firmware.values())).elf)
    assert commands.prepare_for_images(str(tmp_path / "nope.elf"), elf) == []
    assert len(commands.prepare_for_images(elf, str(tmp_path))) == 1

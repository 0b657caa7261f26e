"""`weaklink demo --story tflm`: the table of the TFLM fixtures, each verdict as built to show."""
from __future__ import annotations

import json

from weaklink.cli import main
from weaklink.builders.tflm import VARIANTS


def test_tflm_story_table_and_json(cross_toolchain, capsys):
    assert main(["demo", "--story", "tflm", "--json"]) == 0
    rows = {r["variant"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert set(rows) == {v.name for v in VARIANTS}
    for v in VARIANTS:
        assert rows[v.name]["npu"] == v.expected
    assert rows["split-fast-sram-u85"]["operators"] == 3
    assert rows["fast-sram-O0-u85"]["fast_memory"]["source"].startswith("literal pool")
    assert main(["demo", "--story", "tflm"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["variant", "target"]
    line = next(t for t in table if t.startswith("fast-too-small-u85"))
    assert "driver check fails" in line and line.split()[-2:] == ["error", "-"]


def test_guide_shows_the_tflm_table_as_printed(cross_toolchain, capsys):
    import re

    from weaklink.cachedir import REPO

    section = (REPO / "docs" / "commands.md").read_text().split("### 4.1 TensorFlow Lite Micro")[1]
    shown = re.search(r"```\n(.*?)```", section, re.S).group(1).rstrip()
    assert main(["demo", "--story", "tflm"]) == 0
    assert capsys.readouterr().out.rstrip() == shown

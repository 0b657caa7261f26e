"""`weaklink demo --diff`: the fast-scratch story as three firmware diffs, each a CI gate.

1. extern → removed, example runner on U85: the quick fix. The runner still defines its 384 KB
   SRAM array, but the backend passes 0/0; the NPU verdict goes from ok to hang.
2. removed → weak, example runner on U85: the final fix. The runner's strong override wins over
   the backend's weak default; the fast scratch is the SRAM array again, hang → ok.
3. weak with the runner's override (example) → weak without it (custom), U85: the weak default
   survives; the binding of `ethosu_fast_scratch` goes strong → weak, ok → hang.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npu.records import Record, to_json
from weaklink.builders import firmware as fixtures
from weaklink.diff import diff
from weaklink.diff.comparison import GATES
from weaklink.diff.render import render

SCHEMA_VERSION = 1
STORY = (
    ("the quick fix: extern -> removed (example runner, U85)",
     "extern-example-u85", "removed-example-u85"),
    ("the final fix: removed -> weak (example runner, U85)",
     "removed-example-u85", "weak-example-u85"),
    ("weak with the runner's override -> weak without it (example -> custom runner, U85)",
     "weak-example-u85", "weak-custom-u85"),
)


@dataclass(frozen=True)
class StoryDiff:
    title: str
    old: str            # variant names
    new: str
    report: object      # weaklink.diff.comparison.DiffReport


@dataclass(frozen=True)
class DemoDiffs(Record):
    diffs: tuple[StoryDiff, ...]

    schema_version = SCHEMA_VERSION
    JSON = ("schema_version", "diffs=stories")

    @property
    def exit_code(self) -> int:
        return 0       # the story's gates are meant to fail: the demo shows them, it is no gate

    @property
    def stories(self) -> list[dict]:
        """Each diff's JSON, headed by its title and the two variants."""
        return [{"title": d.title, "old_variant": d.old, "new_variant": d.new, **to_json(d.report)}
                for d in self.diffs]

    def to_table(self) -> str:
        out = []
        for k, d in enumerate(self.diffs, 1):
            out += [f"== {k}. {d.title}", render(d.report)]
        return "\n".join(out).rstrip("\n")


def run_diffs(cache: str | Path | None = None) -> DemoDiffs:
    names = {n for _, a, b in STORY for n in (a, b)}
    built = {o.variant.name: o for o in fixtures.build(
        [v for v in fixtures.VARIANTS if v.name in names], cache=cache)}
    out = []
    for title, a, b in STORY:
        old, new = built[a], built[b]
        t = new.target
        options = {"accelerator": t.accelerator, "system_config": t.system_config,
                   "memory_mode": t.memory_mode, "soc": t.board}
        report = diff(str(old.elf), str(new.elf), map_old=str(old.map), map_new=str(new.map),
                      board=t.board, check_options=options, fail_on=GATES)
        out.append(StoryDiff(title, a, b, report))
    return DemoDiffs(tuple(out))

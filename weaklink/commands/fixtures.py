"""`weaklink fixtures`: build the bundled fixture firmware and print the real link outcomes."""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from weaklink import fixtures
from weaklink.read import elfstructs as S
from weaklink.read.elf import ElfFile

FAST_SCRATCH = "ethosu_fast_scratch"
FAST_SCRATCH_MANGLED = "_ZN10executorch8backends3arm19ethosu_fast_scratchE"
# The size symbol that goes with each spelling of the pointer.
SIZE_OF = {FAST_SCRATCH: "ethosu_fast_scratch_size",
           FAST_SCRATCH_MANGLED: "_ZN10executorch8backends3arm24ethosu_fast_scratch_sizeE"}
SOC_TOML = Path(__file__).resolve().parents[2] / "npu" / "data" / "soc.toml"
_UNDEFINED = re.compile(r"undefined reference to `([^']+)'")


@dataclass(frozen=True)
class FastScratchFact:
    """The fast-scratch pointer as it sits in the linked image."""

    symbol: str
    binding: str
    section: str
    value: int
    size: int | None
    points_into: str | None


@dataclass(frozen=True)
class OutcomeRow:
    variant: str
    backend: str
    runner: str
    target: str
    link: str
    returncode: int
    undefined: list[str]
    fast_scratch: FastScratchFact | None


def _regions(board: str) -> list[dict]:
    return tomllib.loads(SOC_TOML.read_text())[board]["memories"]


def _region_of(address: int, regions: list[dict]) -> str | None:
    for r in regions:
        if r["origin"] <= address < r["origin"] + r["length"]:
            return r["name"]
    return None


def _initial_word(elf: ElfFile, index: int) -> int:
    """The 4-byte initial value of symbol `index`: its section's file bytes (zero for NOBITS)."""
    sym = elf.symbols[index]
    shndx = int(sym["st_shndx"])
    offset = int(sym["st_value"]) - int(elf.sections[shndx]["sh_addr"])
    return int.from_bytes(elf.section_bytes(shndx)[offset:offset + 4], "little")


def fast_scratch_fact(elf_path: Path, board: str) -> FastScratchFact | None:
    """Read the fast-scratch pointer (extern "C" or namespaced), its size and initial value."""
    elf = ElfFile.from_path(elf_path)
    names = elf.symbol_names()
    for wanted in (FAST_SCRATCH, FAST_SCRATCH_MANGLED):
        if wanted not in names:
            continue
        index = names.index(wanted)
        value = _initial_word(elf, index)
        size = _initial_word(elf, names.index(SIZE_OF[wanted])) if SIZE_OF[wanted] in names else None
        sym = elf.symbols[index]
        binding = S.BINDING_NAMES.get(int(sym["st_info"]) >> 4, "other")
        return FastScratchFact(wanted, binding, elf.section_name(int(sym["st_shndx"])), value,
                               size, _region_of(value, _regions(board)) if value else None)
    return None


def outcome_row(outcome: fixtures.LinkOutcome) -> OutcomeRow:
    v = outcome.variant
    undefined = sorted(set(_UNDEFINED.findall(outcome.stderr)))
    link = "ok" if outcome.ok else (f"undefined-reference x{len(undefined)}" if undefined
                                     else f"failed (exit {outcome.returncode})")
    fact = fast_scratch_fact(outcome.elf, outcome.target.board) if outcome.ok else None
    return OutcomeRow(v.name, v.backend, v.runner, v.target, link, outcome.returncode,
                      undefined, fact)


def render_table(rows: list[OutcomeRow]) -> str:
    head = ("backend", "runner", "target", "link (real ld)", "fast scratch symbol", "binding",
            "section", "initial value", "size", "points into")
    body = []
    for r in rows:
        f = r.fast_scratch
        body.append((r.backend, r.runner, r.target, r.link,
                     f.symbol if f else "-", f.binding if f else "-", f.section if f else "-",
                     f"{f.value:#010x}" if f else "-",
                     (f"{f.size:#x}" if f.size is not None else "-") if f else "-", (f.points_into or "-") if f else "-"))
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(head), line("-" * w for w in widths), *map(line, body)]
    for r in rows:
        for sym in r.undefined:
            out.append(f"{r.variant}: undefined reference to `{sym}'")
    return "\n".join(out)


def add_parser(sub) -> None:
    p = sub.add_parser("fixtures", help="build the bundled fixture firmware; print real link outcomes")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--cache", help="cache directory (default $WEAKLINK_CACHE or <repo>/.cache)")
    p.set_defaults(run=run)


def run(args) -> int:
    rows = [outcome_row(o) for o in fixtures.build(cache=args.cache)]
    if args.json:
        print(json.dumps({"schema_version": 1, "rows": [asdict(r) for r in rows]}, indent=2))
    else:
        print(render_table(rows))
    return 0

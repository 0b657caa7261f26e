"""Check: will the NPU inference in this firmware image work, and how fast?

`check(...)` runs the whole chain on one linked image, in order:

1. analyze the image (which definitions won, near misses, overrides never extracted);
2. find the model (the embedded vela_bin_stream blob, or --model) and decode its stream;
3. bind: the base-address table the backend passes to ethosu_invoke_v3 (binding file); DWARF
   tells whether the backend's unit reads the fast-scratch pointer at all (ld's --cref table
   cannot: it omits a weak definer once the name is defined);
4. static findings on that table (a null, too small or unreachable fast scratch);
5. emulate the stream on the NPU with those bases: ok, hang or error, and cycles;
6. explain: the diagnosis chain from the NPU fault back to the symbol that set the base.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import npu
from npu.hw import accelerator as npu_accelerator
from npu.soc import default_soc, load_soc
from weaklink.analyze import analyze
from weaklink.bind import load_binding, resolve_bases
from weaklink.bind.references import from_dwarf
from weaklink.bind.table import BoundBase
from weaklink.check.report import CheckReport, FastScratch
from weaklink.check.static import fast_scratch_findings
from weaklink.read.elf import ElfFile

FAST_SCRATCH_REGION = 2
# Findings from the firmware analysis that bear on the NPU verdict.
ANALYSIS_RULES = ("near-miss-override", "override-not-extracted")


def check(elf_path: str | Path, *, accelerator: str, system_config: str, memory_mode: str,
          soc: str | None = None, map_path: str | Path | None = None,
          model_path: str | Path | None = None, binding: str | Path = "executorch-arm",
          vela_ini: str | Path | None = None, functional: bool = False) -> CheckReport:
    elf_path = str(elf_path)
    acc = npu_accelerator(accelerator)
    board = load_soc(soc or default_soc(acc))
    rules = load_binding(binding)
    elf = ElfFile.from_path(elf_path)

    # 1. analysis, with the pointer rule's symbols queried for attribution
    pointer_names = [n for r in rules.regions if r.source == "pointer" for n in r.symbols]
    analysis = analyze(elf_path, map_path=str(map_path) if map_path else None,
                       board=board.name, symbols=pointer_names)
    findings = [f for f in analysis.findings if f.rule in ANALYSIS_RULES]

    # 2-3. model and base-address table
    override = npu.load_model(model_path) if model_path else None
    table = resolve_bases(elf, rules, from_dwarf(elf_path), require_model=override is None)
    model = override or npu.load_model(table.model_bytes, f"{elf_path}:vela_bin_stream")
    table = _attributed(table, analysis)

    # 4. static findings
    needs = npu.region_needs(model, accelerator)
    findings += fast_scratch_findings(table, FAST_SCRATCH_REGION, needs, board, memory_mode)

    # 5. emulate with the resolved bases (--functional: also compute on bytes, issue 14)
    bases = [npu.Base(b.region, b.address, b.size) for b in table.bases]
    inputs = None
    if functional:
        from weaklink.check.functional import default_inputs
        inputs = default_inputs(model)
    result = npu.run(model, accelerator=accelerator, system_config=system_config,
                     memory_mode=memory_mode, soc=board.name, bases=bases, vela_ini=vela_ini,
                     stream_address=table.stream_address, functional=functional, inputs=inputs)

    # 6. --functional: corruption findings, and `wrong` when placing the regions apart changes the outputs
    computed = None
    if result.functional is not None:
        from weaklink.read.image import Image
        from weaklink.check.functional import functional_check
        computed, corrupt = functional_check(model, table, Image(elf), result, accelerator)
        findings += corrupt

    fast = table.base(FAST_SCRATCH_REGION)
    return CheckReport(file=elf_path, accelerator=accelerator, system_config=system_config,
                       memory_mode=memory_mode, soc=board.name, table=table,
                       fast_scratch=_fast_scratch(fast, board), regions_used=sorted(needs),
                       needs=needs, findings=tuple(findings), run=result, functional=computed)


def _attributed(table, analysis):
    """Fill in which compilation unit defined each base's symbol (DWARF or map)."""
    bases = []
    for b in table.bases:
        q = analysis.queried.get(b.symbol.name) if b.symbol else None
        if q is not None and q.defined_in:
            b = replace(b, symbol=replace(b.symbol, defined_in=Path(q.defined_in).name))
        bases.append(b)
    return replace(table, bases=tuple(bases))


def _fast_scratch(base: BoundBase | None, board) -> FastScratch | None:
    if base is None:
        return None
    memory = board.memory_at(base.address) if base.address else None
    return FastScratch(base.symbol.binding if base.symbol else None, base.address, base.size,
                       memory.name if memory else None)

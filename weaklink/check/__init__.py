"""Check: will the NPU inference in this firmware image work, and how fast?

`check(elf_path, ...)` reads the image (and the map) once and runs the whole chain on them
(`check_image`), each stage once, in order:

1. analyze the image (which definitions won, near misses, overrides never extracted);
2. bind (weaklink.bind.bound): the binding (given, or detected: an embedded vela_bin_stream
   blob means `executorch-arm`, a Vela .tflite with ethos-u operators means `tflm-ethosu`);
   every base-address table the firmware passes to ethosu_invoke_v3 (one per ethos-u
   operator of each embedded .tflite, or the blob's), with the driver's fast-memory rule
   applied; whether the backend reads the fast-scratch pointer at all is decided from the
   evidence there is (weaklink.bind.evidence: relocations, DWARF, the code), and assumed, with
   the assumption reported, when there is none;
3. the SoC and the driver's hooks;
4. per table: decode its stream, static findings (a null, too small or unreachable fast
   scratch; fast memory smaller than the driver's check allows);
5. emulate each stream on the NPU with those bases: ok, hang or error, and cycles; a region in
   memory the NPU reaches but the memory mode did not assume is a performance finding, costed
   by emulating the stream again with that region timed as the assumed memory; the SoC
   assumptions the verdict rests on go into the report;
6. explain: the diagnosis chain from the NPU fault back to the symbol that set the base.
The verdict is the worst operator's. An operator whose verdict depends on what the image does
not say (ethosu_init's fast memory where the call's r2 cannot be read) is `unknown`, with why;
what the verdict assumes instead of reading is listed under `assumptions`.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import npu.api
from npu.hw import accelerator as npu_accelerator, load_vela_ini
from weaklink.analyze import npu_findings
from weaklink.bind.binding import load_binding, pointer_symbols
from weaklink.bind.bound import bind_image
from weaklink.bind.table import BoundBase
from weaklink.check.board import choose as choose_soc
from weaklink.check.functional import default_inputs, functional_check
from weaklink.check.hooks import STREAM, driver_hooks
from weaklink.check.report import CheckReport, FastScratch, OperatorCheck, worst
from weaklink.check.static import fast_memory_findings, fast_scratch_findings, placement_findings
from weaklink.check.unknown import (binding_assumptions, cannot_tell_base, cannot_tell_fast_memory,
                                    not_emulated, reader_assumptions, unknown_needed)
from weaklink.errors import InputError
from weaklink.read.image import Image
from weaklink.read.ldmap import parse_map
from weaklink.read.linkmap import LinkMap

FAST_SCRATCH_REGION = 2


def split_model_option(value) -> tuple[str | None, int | None]:
    """`--model` FILE@ADDR -> (FILE, ADDR); a FILE without an address -> (FILE, None)."""
    if value is None:
        return None, None
    text = str(value)
    head, at, tail = text.rpartition("@")
    if at and head:
        try:
            return head, int(tail, 0)
        except ValueError:
            raise InputError(text, f"--model FILE@ADDR: {tail!r} is not an address") from None
    return text, None


def check(elf_path: str | Path, *, map_path: str | Path | None = None, **options) -> CheckReport:
    """check_image of the image at `elf_path` and the map at `map_path`, each read once."""
    return check_image(Image.from_path(str(elf_path)), parse_map(map_path) if map_path else None,
                       **options)


def check_image(image: Image, link_map: LinkMap | None = None, *, accelerator: str,
                system_config: str, memory_mode: str, soc: str | None = None,
                model_path: str | Path | None = None, binding: str | Path | None = None,
                vela_ini: str | Path | None = None, functional: bool = False,
                link_inputs=(), arena: str | None = None) -> CheckReport:
    """`link_map`: the link's map (weaklink.read.ldmap), or None. `link_inputs`: objects and
    archives of the link, whose relocations say which code reads a pointer
    (weaklink.bind.evidence). `arena`: TFLM's tensor arena, SYMBOL|SECTION|ADDR:SIZE.
    `model_path` may be FILE@ADDR: a .tflite the image reads from ADDR, outside itself."""
    acc = npu_accelerator(accelerator)
    model_path, model_at = split_model_option(model_path)
    override = npu.api.load_model(model_path) if model_path else None
    rules = load_binding(binding) if binding else None

    # 1. analysis: its findings that bear on the NPU, and which unit defined each symbol the
    # pointer rules read
    findings, units = npu_findings(image, link_map, pointer_symbols(rules))

    # 2. bind: the binding (given, or detected), every base-address table
    bound = bind_image(image, rules, link_map=link_map, model_path=model_path, model_at=model_at,
                       arena=arena, link_inputs=link_inputs)
    rules, tables = bound.rules, bound.tables
    override = None if bound.placed is not None else override

    # 3. the SoC (given, or from the NPU base the image passes ethosu_init and its segments);
    # the driver hooks it overrides
    choice = choose_soc(image, acc, soc, bound.init)   # one line, exit 2, for an NPU the SoC cannot carry
    board = choice.soc
    hooks = driver_hooks(image, board, memory_mode)

    # 4-5. per operator: findings and emulation
    soc_unknown = choice.unknown or hooks.unknown
    ops = [_operator(_attributed(t, units), override, image.name, accelerator, system_config,
                     memory_mode, choice.ref, board, hooks, vela_ini, image if functional else None,
                     soc_unknown) for t in tables]
    main = worst(ops)
    fast = main.table.base(FAST_SCRATCH_REGION)
    return CheckReport(file=image.name, accelerator=accelerator, system_config=system_config,
                       memory_mode=memory_mode, soc=board.name, soc_choice=choice, hooks=hooks,
                       table=main.table,
                       fast_scratch=_fast_scratch(fast, board),
                       needs=main.needs, findings=tuple(findings + _union(ops)), run=main.run,
                       operators=tuple(ops), functional=main.functional,
                       assumptions=binding_assumptions(tables) + reader_assumptions(ops, rules) + (
                           () if soc_unknown else hooks.assumptions + tuple(
                               dict.fromkeys(a for op in ops for a in op.run.assumptions))),
                       cannot_tell=main.cannot_tell)


def _operator(table, override, elf_path, accelerator, system_config, memory_mode, soc_ref, board,
              hooks, vela_ini, functional_image=None, soc_unknown=None) -> OperatorCheck:
    """functional_image: --functional, with the image whose symbols own the address space.
    soc_unknown: why the SoC (or what its driver hooks do) cannot be told: the verdict is
    `unknown`, and nothing is judged against a map the image was not built for."""
    if table.missing:               # no model to emulate: the verdict is unknown, and why
        run = dict(accelerator=accelerator, system_config=system_config, memory_mode=memory_mode,
                   soc=soc_ref)
        return OperatorCheck(table, {}, (), not_emulated(run, {}), None, table.missing)
    label = "vela_bin_stream" if table.model_format != "tflite" else \
        f"{table.model_symbol or hex(table.model_address)}:ethos-u[{table.operator}]"
    model = override or npu.api.load_model(table.model_bytes, f"{elf_path}:{label}",
                                       op=table.operator or 0)
    needs = npu.api.region_needs(model, accelerator)
    cannot_tell = soc_unknown or cannot_tell_fast_memory(table, needs) or cannot_tell_base(table, needs)
    if functional_image is not None and not cannot_tell and model.missing:
        cannot_tell = f"--functional needs {model.missing}"
    acc = npu_accelerator(accelerator)
    # region 2's base is not known when the fast memory cannot be read: no finding on it
    findings = [] if cannot_tell else \
        fast_scratch_findings(table, FAST_SCRATCH_REGION, needs, board, memory_mode,
                              acc.read_only_ports, hooks)
    findings += fast_memory_findings(table, FAST_SCRATCH_REGION, needs)
    bases, fast_memory, fast_size = _emulated_bases(table)
    # what the NPU gets: each address through the image's ethosu_address_remap, each port
    # through its ethosu_config_select (the driver's weak defaults: as passed, REGIONCFG)
    bases = [npu.api.Base(b.region, hooks.npu_address(b.address), b.size) for b in bases]
    stream = hooks.npu_address(table.stream_address) if table.stream_address else 0
    ports = hooks.ports({**{b.region: b.address for b in bases}, **({STREAM: stream} if stream else {})})
    if cannot_tell:                 # the bytes would be computed on a guessed region 2
        functional_image = None
    inputs = default_inputs(model) if functional_image is not None else None
    run = dict(accelerator=accelerator, system_config=system_config, memory_mode=memory_mode,
               soc=soc_ref, bases=bases, vela_ini=vela_ini, stream_address=stream,
               fast_memory=hooks.npu_address(fast_memory) if fast_memory else 0,
               fast_memory_size=fast_size, ports=ports)
    result = not_emulated(run, needs) if unknown_needed(table, needs) else \
        npu.api.run(model, **run, functional=functional_image is not None, inputs=inputs)
    ini = load_vela_ini(vela_ini)
    findings += [] if soc_unknown else placement_findings(result, needs, board, ini.system_config(system_config),
                                   ini.memory_mode(memory_mode), lambda cost_as: npu.api.run(model, **run, cost_as=cost_as),
                                   {b.region: b.symbol.name if b.symbol else b.name for b in table.bases})
    computed = None
    if result.functional is not None:       # 6. --functional: corrupts findings, and `wrong`
        computed, corrupt = functional_check(model, table, functional_image, result, accelerator)
        findings += corrupt
    return OperatorCheck(table, needs, tuple(findings), result, computed, cannot_tell)


def _emulated_bases(table):
    """The bases the NPU gets, and the fast memory for the emulated driver's own check. When
    the driver's check passes, region 2 is the fast memory: the NPU may use all of it and no
    more, so the emulator bounds the region by the fast memory's size."""
    fast = table.fast_memory
    bases = [npu.api.Base(b.region, b.address, b.size) for b in table.bases]
    fast_memory = fast_size = 0
    # size unknown: the driver substitutes, but its check cannot be judged
    if fast is not None and fast.given and fast.size is not None and len(bases) > FAST_SCRATCH_REGION:
        if bases[FAST_SCRATCH_REGION].size > fast.size:
            fast_memory, fast_size = fast.address, fast.size   # the emulated driver fails the invoke
        else:
            bases[FAST_SCRATCH_REGION] = npu.api.Base(FAST_SCRATCH_REGION, fast.address, fast.size)
    known = [b for b, t in zip(bases, table.bases) if not t.unknown]    # never emulated at 0
    return known, fast_memory, fast_size


def _union(ops) -> list:
    """Every operator's findings, each (rule, message) once: the first one seen."""
    first = {}
    for op in ops:
        for f in op.findings:
            first.setdefault((f.rule, f.message), f)
    return list(first.values())


def _attributed(table, units: dict[str, str]):
    """Fill in which compilation unit defined each base's symbol (DWARF or map)."""
    bases = []
    for b in table.bases:
        unit = units.get(b.symbol.name) if b.symbol else None
        if unit:
            b = replace(b, symbol=replace(b.symbol, defined_in=Path(unit).name))
        bases.append(b)
    return replace(table, bases=tuple(bases))


def _fast_scratch(base: BoundBase | None, board) -> FastScratch | None:
    if base is None or base.unknown:
        return None
    memory = board.memory_at(base.address) if base.address else None
    return FastScratch(base.symbol.binding if base.symbol else None, base.address, base.size,
                       memory.name if memory else None)

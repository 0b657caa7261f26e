"""Bind one linked image: every fact `check` takes from the bind stage, each read once.

`bind_image`, in order:
1. the binding: given, or the preset for how the model is embedded: a vela_bin_stream blob
   (ExecuTorch, `executorch-arm`), or a Vela .tflite with ethos-u operators or TFLM's
   interpreter linked (TensorFlow Lite Micro, `tflm-ethosu`);
2. tflite: the embedded models, found once, a model the image reads from outside itself
   (`--model FILE[@ADDR]`), and the tensor arena (weaklink.bind.tflm);
3. whether the backend reads each pointer the binding names (weaklink.bind.evidence), and
   the fast memory the driver is given (weaklink.bind.fastmem);
4. every base-address table, with the driver's fast-memory rule (weaklink.bind.table).
The calls of the driver's init function (DriverInit: DWARF call sites, and the code) and of
TFLM's entry points (Calls) are read when first asked for, the code in one scan for both; the
Bound keeps the first for the SoC choice (the NPU base the image passes, weaklink.check.board).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from weaklink.bind.binding import Binding, load_binding
from weaklink.bind.evidence import ReaderEvidence
from weaklink.bind.fastmem import INIT, DriverInit, resolve_fast_memory
from weaklink.bind.table import (BaseAddressTable, apply_fast_memory, find_model, resolve_bases,
                                 symbol_fact)
from weaklink.bind.tflm import EmbeddedModel, find_arena, find_models, place_model, tflm_tables
from weaklink.bind.tflmcalls import Calls
from weaklink.errors import InputError
from weaklink.read.image import Image


@dataclass(frozen=True)
class Bound:
    rules: Binding
    tables: list[BaseAddressTable]
    init: DriverInit                        # the calls of ethosu_init, read once
    placed: EmbeddedModel | None = None     # --model, where the image reads it from


def bind_image(image: Image, rules: Binding | None = None, *, link_map=None,
               model_path: str | Path | None = None, model_at: int | None = None,
               arena: str | None = None, link_inputs=()) -> Bound:
    """`rules`: the binding, or None to detect it. `model_path`, `model_at`: --model FILE@ADDR;
    `arena`: --arena; `link_inputs`: the link's objects and archives (evidence of who reads a
    pointer); `link_map`: the link's map (weaklink.read.ldmap), or None."""
    calls, models = Calls(image, INIT), None        # one scan of the code for both
    if rules is None:               # detected: how the model is embedded
        try:
            find_model(image, load_binding("executorch-arm"))
            name = "executorch-arm"
        except InputError:
            models = find_models(image, load_binding("tflm-ethosu"))
            name = ("tflm-ethosu" if models or calls.links_tflm() else
                    "executorch-arm" if model_path is not None else None)
        if name is None:
            raise InputError(image.name, "no vela_bin_stream blob and no Vela .tflite with an "
                             "ethos-u operator in the image's loadable sections (give --binding "
                             "or --model)")
        rules = load_binding(name)
    placed = found = None
    if rules.model_format == "tflite":
        models = find_models(image, rules) if models is None else models
        placed = place_model(model_path, model_at, models, calls) if model_path else None
        models = [placed] if placed is not None else models
        found = find_arena(image, rules.arena, calls, link_map, arena) if models or not model_path else None
    refs = None
    if any(r.reader for r in rules.regions):
        refs = ReaderEvidence(image, link_inputs=link_inputs)
    init = DriverInit(image, INIT, calls)
    fast = resolve_fast_memory(image, rules.fast_memory, init)
    if rules.model_format == "tflite" and not models and not model_path:
        # the image holds no model: one table that says so, with where the code reads it
        read_from = calls.model_addresses()
        tables = [BaseAddressTable(rules.name, read_from[0][0] if read_from else 0, None, (),
                                   model_format="tflite", arena=found, missing=calls.model_missing())]
    elif rules.model_format == "tflite":    # no model but --model's: no table of the image
        tables = tflm_tables(image, rules, models, found) if models else []
    else:
        tables = [resolve_bases(image, rules, refs, require_model=not model_path)]
    if not tables:
        raise InputError(image.name, f"the {rules.name} binding needs the model embedded in the image")
    fact = symbol_fact(image, fast.symbol, local=True) if fast.symbol else None
    return Bound(rules, [apply_fast_memory(replace(t, fast_memory=fast), fact) for t in tables],
                 init, placed)


def resolve_tables(image: Image, binding: Binding, *, link_map=None, arena: str | None = None,
                   link_inputs=()) -> list[BaseAddressTable]:
    """Every table the firmware will pass, the driver's fast-memory rule applied: one per
    embedded model and ethos-u operator for a tflite binding, the one of the blob otherwise
    (bind_image with the binding given)."""
    return bind_image(image, binding, link_map=link_map, arena=arena, link_inputs=link_inputs).tables

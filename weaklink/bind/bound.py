"""Bind one linked image: every fact `check` takes from the bind stage, each read once.

`bind_image`, in order:
1. the binding: given, or the preset for how the model is embedded: a vela_bin_stream blob
   (ExecuTorch, `executorch-arm`), or a Vela .tflite with ethos-u operators or TFLM's
   interpreter linked (TensorFlow Lite Micro, `tflm-ethosu`);
2. tflite: the embedded models, found once, and a model the image reads from outside itself
   (`--model FILE[@ADDR]`, weaklink.bind.tflm.place_model);
3. whether the backend reads each pointer the binding names (weaklink.bind.evidence);
4. every base-address table, with the driver's fast-memory rule (weaklink.bind.table).
The calls of the driver's init function (DriverInit) and of TFLM's entry points (Calls) are
each read once, when first asked for; the Bound keeps the first for the SoC choice (the NPU
base the image passes, weaklink.check.board).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from weaklink.bind.binding import Binding, load_binding
from weaklink.bind.fastmem import DriverInit
from weaklink.bind.evidence import ReaderEvidence
from weaklink.bind.references import from_dwarf
from weaklink.bind.table import BaseAddressTable, find_model, resolve_tables
from weaklink.bind.tflm import EmbeddedModel, find_models, place_model
from weaklink.bind.tflmcalls import Calls
from weaklink.errors import InputError
from weaklink.read.image import Image


@dataclass(frozen=True)
class Bound:
    rules: Binding
    tables: list[BaseAddressTable]
    init: DriverInit                        # the calls of ethosu_init, read once
    placed: EmbeddedModel | None = None     # --model, where the image reads it from


def detect_binding(image: Image, model_given: bool, calls: Calls) -> tuple[str, list | None]:
    """The preset for how the model is embedded, and for TFLM the models found on the way."""
    try:
        find_model(image, load_binding("executorch-arm"))
        return "executorch-arm", None
    except InputError:
        pass
    models = find_models(image, load_binding("tflm-ethosu"))
    if models or calls.links_tflm():
        return "tflm-ethosu", models
    if model_given:
        return "executorch-arm", None
    raise InputError(image.name, "no vela_bin_stream blob and no Vela .tflite with an "
                     "ethos-u operator in the image's loadable sections (give --binding or --model)")


def bind_image(image: Image, rules: Binding | None = None, *, link_map=None,
               model_path: str | Path | None = None, model_at: int | None = None,
               arena: str | None = None, link_inputs=()) -> Bound:
    """`rules`: the binding, or None to detect it. `model_path`, `model_at`: --model FILE@ADDR;
    `arena`: --arena; `link_inputs`: the link's objects and archives (evidence of who reads a
    pointer); `link_map`: the link's map (weaklink.read.ldmap), or None."""
    init, calls, models = DriverInit(image), Calls(image), None
    if rules is None:
        name, models = detect_binding(image, model_path is not None, calls)
        rules = load_binding(name)
    placed = None
    if rules.model_format == "tflite":
        models = find_models(image, rules) if models is None else models
        placed = place_model(model_path, model_at, models, calls) if model_path else None
    refs = None
    if any(r.reader for r in rules.regions):
        refs = ReaderEvidence(image, dwarf=from_dwarf(image.elf), link_inputs=link_inputs)
    tables = resolve_tables(image, rules, refs, link_map=link_map, init=init,
                            require_model=placed is not None or not model_path, arena=arena,
                            placed=placed, models=models, calls=calls)
    if not tables:
        raise InputError(image.name, f"the {rules.name} binding needs the model embedded in the image")
    return Bound(rules, tables, init, placed)

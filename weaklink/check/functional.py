"""`weaklink check --functional`: compute the inference on bytes with the image's memory map.

1. owners of the address space: every NPU region at the base the backend passes, the model
   blob where it sits in the image, and every data object of the image (ELF symbols);
2. the functional run at those bases (done by npu.api.run): every NPU read and write, with its
   operation and absolute address range;
3. `corrupts` findings: writes over bytes another region, the model or a symbol still needs
   (npu.functional.corruption says when bytes are still needed);
4. the same inference with every region placed apart: when the outputs differ, the verdict
   is `wrong`.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import compress

import numpy as np

from npu.functional import run_functional
from npu.functional.corruption import (MODEL, REGION, SYMBOL, Owner, find_corruptions,
                                       separate_placement)
from npu.hw import accelerator as npu_accelerator
from npu.records import Record

from weaklink.read import elfstructs as S
from weaklink.rules import CORRUPTS, Finding

INPUT_SEED = 0


@dataclass(frozen=True)
class FunctionalCheck(Record):
    outputs: tuple               # at the image's bases
    separate_outputs: tuple      # every region placed apart
    corruptions: tuple

    JSON = ("outputs_equal_to_separate_placement=outputs_equal", "output_bytes_differing",
            "output_bytes", "corruptions", "first_difference")

    @property
    def outputs_equal(self) -> bool:
        return all(a.tobytes() == b.tobytes() for a, b in zip(self.outputs, self.separate_outputs))

    @property
    def output_bytes_differing(self) -> int:
        return sum(int(np.count_nonzero(a.view(np.uint8) != b.view(np.uint8)))
                   for a, b in zip(self.outputs, self.separate_outputs))

    @property
    def output_bytes(self) -> int:
        return sum(a.nbytes for a in self.outputs)

    @property
    def first_difference(self) -> dict | None:
        """The first output element (in each output's row-major order) that differs from the run
        with every region placed apart: which output, its index, both values, and the region
        whose write caused it (the first corruption's, when one was found)."""
        for i, (a, b) in enumerate(zip(self.outputs, self.separate_outputs)):
            differ = np.flatnonzero(a.ravel() != b.ravel())
            if len(differ):
                k = int(differ[0])
                first = {"output": i, "index": [int(v) for v in np.unravel_index(k, a.shape)],
                         "value": int(a.ravel()[k]), "separate_value": int(b.ravel()[k])}
                if self.corruptions:
                    first["region"] = self.corruptions[0].write.region
                return first
        return None

    def summary(self) -> list[str]:
        """The report's lines: equal bytes, and the first differing element with the region whose
        write caused it (the first corruption, when one was found)."""
        total = self.output_bytes
        lines = [f"functional: {total - self.output_bytes_differing} of {total} "
                 "output bytes equal to a run with every region placed apart"]
        first = self.first_difference
        if first is not None:
            where = ", ".join(map(str, first["index"]))
            text = (f"first difference: output {first['output']} [{where}] = {first['value']}, "
                    f"{first['separate_value']} with every region placed apart")
            if self.corruptions:
                c = self.corruptions[0]
                text += f"; caused by a write through region {c.write.region} over {c.owner.name}"
            lines.append(text)
        return lines


def default_inputs(model) -> list[np.ndarray]:
    """Seeded random inputs, one per model input, of the element size Vela recorded."""
    rng = np.random.default_rng(INPUT_SEED)
    dtypes = {1: np.int8, 2: np.int16, 4: np.int32}
    out = []
    for io in model.inputs:
        shape = tuple(d for d in io.shape if d)
        info = np.iinfo(dtypes[io.elem_size])
        out.append(rng.integers(info.min, info.max + 1, size=shape, dtype=dtypes[io.elem_size]))
    return out


def owners(table, image) -> list:
    out = [Owner(REGION, f"region {b.region} ({b.name})", b.address, b.address + b.size, b.region)
           for b in table.bases if b.size]
    model_end = table.model_address + len(table.model_bytes)
    if table.model_address:
        what = (f"the model (`{table.model_symbol}`, a .tflite)" if table.model_format == "tflite"
                and table.model_symbol else "the model (vela_bin_stream blob)")
        out.append(Owner(MODEL, what, table.model_address, model_end))
    c = image.defined
    objects = [k for k in compress(range(len(c)), map(S.STT_OBJECT.__eq__, c.type)) if c.size[k]]
    # by address; at one address globals, then the larger, first
    objects.sort(key=lambda k: (c.address[k], c.binding[k] == S.STB_LOCAL, -c.size[k]))
    for k in objects:
        start, size = c.address[k], c.size[k]
        if table.model_address <= start < model_end:
            continue                      # the blob itself: reported as the model
        out.append(Owner(SYMBOL, f"`{image.text(c.name_off[k], c.name_len[k])}`", start, start + size))
    return out


def functional_check(model, table, image, run, accelerator) -> tuple[FunctionalCheck, list[Finding]]:
    bases = {b.region: b.address for b in table.bases}
    held = owners(table, image)                 # what each address of the image belongs to
    found = find_corruptions(run.functional, held, bases)
    sizes = {b.region: max(b.size or 0, model.region_sizes.get(b.region, 0)) for b in table.bases}
    apart = run_functional(model, npu_accelerator(accelerator), separate_placement(sizes), default_inputs(model))
    check = FunctionalCheck(run.functional.outputs, apart.outputs, tuple(found))
    findings = [CORRUPTS.finding(c.owner.name, c.message) for c in found]
    return check, findings

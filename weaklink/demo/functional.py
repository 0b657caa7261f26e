"""The demo's functional column: for a U85 row that ran (`check --functional`), whether the bytes
the emulated NPU computed equal LiteRT's reference kernels on the same input (the kernels TFLite
Micro runs on the Cortex-M), or, without LiteRT installed, the same inference with every region
placed apart."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import npu.api
from npu.records import Record
from weaklink.check.functional import default_inputs


@dataclass(frozen=True)
class FunctionalCell(Record):
    reference: str                 # "LiteRT" or "apart"
    equal: bool
    bytes_differing: int
    output_bytes: int

    JSON = ("reference", "outputs_equal=equal", "output_bytes_differing=bytes_differing",
            "output_bytes")

    @property
    def text(self) -> str:
        if self.equal:
            return f"= {self.reference}"
        return f"≠ {self.reference} ({self.bytes_differing}/{self.output_bytes} B)"


def litert_outputs(tflite: Path, inputs) -> list[np.ndarray] | None:
    """The outputs of LiteRT's reference kernels on `inputs` (one array per input, or a function
    of the interpreter's input details that makes them); None without LiteRT (an extra)."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        return None
    it = Interpreter(model_path=str(tflite), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    details = it.get_input_details()
    for d, x in zip(details, inputs(details) if callable(inputs) else inputs):
        it.set_tensor(d["index"], np.asarray(x).reshape(d["shape"]))
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def functional_cell(report, tflite: Path) -> FunctionalCell | None:
    """None when the check computed nothing (no --functional, or the run did not complete)."""
    f = report.functional
    if f is None:
        return None
    want = None
    if tflite.is_file():
        model = npu.api.load_model(report.table.model_bytes, report.file)
        want = litert_outputs(tflite, default_inputs(model))
    if want is None:
        return FunctionalCell("apart", f.outputs_equal, f.output_bytes_differing, f.output_bytes)
    got = f.outputs
    differ = sum(int(np.count_nonzero(np.asarray(a).view(np.uint8).ravel() != np.asarray(b).view(np.uint8).ravel()))
                 for a, b in zip(got, want))
    total = sum(np.asarray(a).nbytes for a in got)
    return FunctionalCell("LiteRT", differ == 0 and len(got) == len(want), differ, total)

"""Functional Ethos-U emulation: the bytes an inference computes.

``run_functional(model, accelerator, placement, inputs)`` backs every region with bytes at
its base address (overlapping regions share bytes), loads the model's weights into region
0 and the inputs where Vela placed them, executes the command stream, and reads the
outputs back. Ethos-U55/U65 streams run on :class:`Engine`, Ethos-U85 streams on
:class:`U85Engine` (its weight order, weight formats, output stage and chaining).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from npu.errors import InputError
from npu.functional.engine import Engine
from npu.functional.memory import Access, AddressSpace
from npu.functional.u85_engine import U85Engine
from npu.functional.u85_plan import stream_cache
from npu.readonly import read_only_end
from npu.records import Record

__all__ = ["FunctionalRun", "run_functional"]
DTYPE = {1: np.int8, 2: np.int16, 4: np.int32}


@dataclass(frozen=True)
class FunctionalRun(Record):
    outputs: tuple[np.ndarray, ...]
    writes: tuple[Access, ...]         # every NPU write: operation, region, absolute range
    kernels: int
    reads: tuple[Access, ...] = ()     # every NPU read, in the same form

    JSON = ("kernels", "outputs=output_types")

    @property
    def output_types(self) -> list[dict]:
        """Each output's shape and dtype (its bytes are not JSON)."""
        return [{"shape": list(o.shape), "dtype": str(o.dtype)} for o in self.outputs]


def _place_inputs(mem: AddressSpace, model, inputs, path):
    if len(inputs) != len(model.inputs):
        raise InputError(path, f"the model has {len(model.inputs)} input(s), {len(inputs)} given")
    for i, (io, x) in enumerate(zip(model.inputs, inputs)):
        x = np.asarray(x)
        want = int(np.prod([d for d in io.shape if d])) * io.elem_size
        if x.nbytes != want or x.dtype.itemsize != io.elem_size:
            raise InputError(path, f"input {i}: {x.dtype}{list(x.shape)} is {x.nbytes} bytes; the model expects "
                                   f"{want} bytes of {io.elem_size}-byte elements, shape {list(io.shape)}")
        mem.load(io.region, io.offset, np.ascontiguousarray(x).tobytes(), f"input {i}")


def _read_outputs(mem: AddressSpace, model) -> tuple[np.ndarray, ...]:
    out = []
    for i, io in enumerate(model.outputs):
        if io.elem_size not in DTYPE:
            raise InputError(model.path, f"output {i}: element size {io.elem_size}, expected "
                             f"{', '.join(map(str, sorted(DTYPE)))}")
        shape = tuple(d for d in io.shape if d) or (1,)
        n = int(np.prod(shape)) * io.elem_size
        raw = mem.read(io.region, io.offset, n, f"output {i}")
        out.append(np.frombuffer(raw, dtype=DTYPE[io.elem_size]).reshape(shape).copy())
    return tuple(out)


def run_functional(model, accelerator, placement: dict[int, tuple[int, int]], inputs) -> FunctionalRun:
    """placement: region -> (base address, size in bytes)."""
    if accelerator.cores > 1 and not accelerator.is_u85:
        raise InputError(model.path, f"--functional: {accelerator.name} splits weights across {accelerator.cores} "
                                     "cores; the functional engine models single-core configs")
    if model.weight_data is None or not model.inputs or not model.outputs:
        if model.missing:                   # a .tflite names what it lacks
            raise InputError(model.path, f"--functional needs {model.missing}")
        raise InputError(model.path, f"a {model.container} holds no weights or input/output placement: "
                                     "functional runs need Vela's raw .npz or the vela_bin_stream blob")
    try:
        return _run(model, accelerator, placement, inputs)
    except InputError as e:
        if e.path is not None:
            raise
        # the memory, weight and scale decoders do not know the file: the model is the input
        raise InputError(model.path, e.what, e.offset) from None


def prepare(model, accelerator, placement, inputs):
    """The address space with the weights and inputs loaded, and the engine that will run the
    stream on it: (AddressSpace, Engine or U85Engine)."""
    sizes = {r: size for r, (_, size) in placement.items()}
    sizes[0] = max(sizes.get(0, 0), len(model.weight_data))
    if accelerator.is_u85:                      # a region 0 cut short (npu.readonly)
        cache = stream_cache(model.commands)
        if cache.read_only_end is None:
            cache.read_only_end = read_only_end(model.commands)
        sizes[0] = max(sizes[0], cache.read_only_end)
    mem = AddressSpace.build({r: a for r, (a, _) in placement.items()}, sizes)
    if model.weight_data:
        mem.load(0, 0, model.weight_data, "weights")
    _place_inputs(mem, model, inputs, model.path)
    if accelerator.is_u85:
        return mem, U85Engine(model.commands, mem, accelerator, model.path)
    return mem, Engine(model.commands, mem, accelerator.ofm_ublock[2], model.path, accelerator.shram_kb)


def _run(model, accelerator, placement, inputs) -> FunctionalRun:
    mem, engine = prepare(model, accelerator, placement, inputs)
    # The kernels' matrix products are small: BLAS worker threads only spin against the
    # element-wise passes that follow, so the engine runs single-threaded, as LiteRT does.
    with threadpool_limits(1, user_api="blas"):
        engine.run()
    return FunctionalRun(_read_outputs(mem, model), tuple(mem.writes), engine.kernels, tuple(mem.reads))

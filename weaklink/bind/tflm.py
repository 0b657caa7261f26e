"""TensorFlow Lite Micro firmware: the embedded Vela .tflite models, the tensor arena, and the
base-address table each `ethos-u` operator passes to the driver.

- Models: flatbuffers with the `TFL3` identifier in the image's loadable sections, read with
  npu.read.tflite (bounds-checked: every hit is tried, junk is skipped); the symbol whose
  address is the flatbuffer's start (the g_model[] array) names it.
- The table (TFLM's ethos-u kernel): entry i is input i+1, then the outputs. A tensor with
  data in the flatbuffer (the weights) is used in place: its image address is the model's
  address plus the buffer's offset. Every other tensor (scratch, fast scratch, feature maps)
  is placed in the tensor arena by TFLM's planner:
  - at its offset in Vela's offline memory plan (the OfflineMemoryAllocation metadata): TFLM
    aligns the arena's start up to 16 bytes and places the tensor that many bytes after it
    (tflite-micro micro_allocator.cc, CommitPlan; MicroArenaBufferAlignment() is 16);
  - with no plan, or -1 for the tensor, at an offset its planner decides at run time:
    weaklink reports the arena's bounds and never a guessed offset;
  - a tensor of 0 bytes gets no memory: TFLM leaves its data pointer NULL.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npu.read.tflite import IDENTIFIER, EthosuOperator, TflTensor, read_tflite
from npu.records import Record
from weaklink.bind.binding import Binding
from weaklink.bind.table import BaseAddressTable, BoundBase, symbol_fact
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image


@dataclass(frozen=True)
class EmbeddedModel:
    address: int                # image address of the flatbuffer's first byte
    symbol: str | None          # the array that marks it, when one starts there
    data: bytes                 # the flatbuffer, up to the furthest byte its operators use
    operators: tuple[EthosuOperator, ...]
    offline_plan: str = "absent"    # Vela's offline memory plan: present, absent, or why unusable
    placed: str = ""                # not in the image: where --model put it, and why there


ARENA_ALIGNMENT = 16        # TFLM's MicroArenaBufferAlignment(): the arena's start is aligned up


ARENA_OPTION = "--arena SYMBOL|SECTION|ADDR:SIZE"


@dataclass(frozen=True)
class Arena(Record):
    name: str | None
    address: int | None         # None: the image does not say where the arena is
    size: int | None
    source: str
    assumption: str | None = None   # found by a naming convention: the interpreter is assumed to get it
    run_time: bool = False  # unknown because the code computes it at run time (an allocator's pointer)

    JSON = ("name", "start=address", "end", "size", "source", "head", "assumption", "unknown",
            "option", "decided_at_run_time=run_time")

    @property
    def unknown(self) -> bool:
        return self.address is None

    @property
    def end(self) -> int | None:
        return None if self.unknown else self.address + (self.size or 0)

    @property
    def head(self) -> int | None:
        """Where TFLM's planned tensors start: the arena's address aligned up to 16."""
        if self.unknown:
            return None
        return (self.address + ARENA_ALIGNMENT - 1) & ~(ARENA_ALIGNMENT - 1)

    @property
    def option(self) -> str | None:
        """The option that supplies an arena the image does not say."""
        return ARENA_OPTION if self.unknown else None


def _model_at(image: Image, data: bytes, address: int, origin: int, marker: str | None):
    try:
        model = read_tflite(data, image.name, origin)
    except InputError:
        return None
    if not model.operators:
        return None
    name = marker or _marker(image, address)
    return EmbeddedModel(address, name, data[:model.extent], model.operators, model.offline_plan)


def _marker(image: Image, address: int) -> str | None:
    """The array that starts at the flatbuffer's first byte (g_model[])."""
    sym = image.symbol_at(address, (S.STT_OBJECT, S.STT_NOTYPE))
    return sym.name if sym is not None and sym.address == address and sym.size else None


def find_models(image: Image, binding: Binding) -> list[EmbeddedModel]:
    """Every embedded .tflite with ethos-u operators, in address order."""
    if binding.model_symbol:
        sym = image.symbol_named(binding.model_symbol, local=True)
        if sym is not None:
            data = image.bytes_at(sym.address, sym.size or (1 << 26), clip=True) or b""
            found = _model_at(image, data, sym.address, sym.address, binding.model_symbol)
            if found:
                return [found]
    out, data = [], image.elf.data
    for start, address, end in image.find_loaded(IDENTIFIER, 4):   # it follows the root offset
        if address % 4 == 0:
            found = _model_at(image, data[start:end], address, start, None)
            if found:
                out.append(found)
    return out


def tensor_base(region: int, name: str, tensor: TflTensor, model: EmbeddedModel,
                arena: Arena | None, same_as: int | None):
    """(address, size, note, arena bounds, offset in the arena) of one table entry; the
    address is None for an arena tensor when the arena is unknown."""
    size = tensor.elements
    if tensor.data_offset is not None:
        address = model.address + tensor.data_offset
        where = f"`{model.symbol}`" if model.symbol else f"the flatbuffer at {model.address:#x}" + (
            f" ({model.placed})" if model.placed else "")
        return address, size, (f"tensor `{tensor.name}`: buffer {tensor.buffer} at offset "
                               f"{tensor.data_offset:#x} of {where}"), None, None
    again = f", the same tensor as region {same_as}" if same_as is not None else ""
    if tensor.nbytes == 0:
        return 0, size, (f"tensor `{tensor.name}`{again} has 0 bytes: TFLM gives it no memory "
                         f"and passes NULL"), None, None
    if arena is None or arena.unknown:
        which = ("the code computes at run time" if arena is not None and arena.run_time else
                 "the image does not say")
        return None, size, (f"tensor `{tensor.name}`{again}: in the tensor arena, which {which} "
                            f"(give --arena)"), None, None
    bounds = (arena.address, arena.end)
    offset = tensor.offline_offset
    if offset is None or offset < 0:
        why = ("-1 in the offline plan" if offset is not None else
               "no offline memory plan in the model" if model.offline_plan == "absent" else
               f"the offline memory plan is unusable: {model.offline_plan}")
        return arena.address, size, (f"tensor `{tensor.name}` ({size} B){again} in `{arena.name}` "
                                     f"[{arena.address:#x}, {arena.end:#x}): offset decided by "
                                     f"TFLM's planner at run time ({why})"), bounds, None
    address = arena.head + offset
    beyond = ""
    if address + (tensor.nbytes or size) > arena.end:
        beyond = (f"; it ends past the arena's end {arena.end:#x}: TFLM's AllocateTensors fails "
                  f"(the arena is too small)")
    return address, size, (f"tensor `{tensor.name}` ({size} B){again}: `{arena.name}` + {offset:#x} "
                           f"(offline memory plan){beyond}"), bounds, offset


def place_model(path: str, address: int | None, models: list[EmbeddedModel], calls):
    """The .tflite at `path` that a TFLM image reads from outside itself (`--model FILE@ADDR`:
    flashed on its own, read in place at a constant address; without ADDR, where the code
    reads the model, `calls`: weaklink.bind.tflmcalls), as an EmbeddedModel: TFLM uses it in
    place, so its weights are at the address plus the buffer's offset. None when the image
    embeds its `models` and no address is given (then --model only replaces the stream that
    is emulated)."""
    if address is None and models:
        return None
    data = Path(path).read_bytes() if Path(path).is_file() else None
    if data is None or data[4:8] != IDENTIFIER:
        if address is None:
            return None
        raise InputError(path, "--model FILE@ADDR: expected a .tflite (TFL3 flatbuffer)")
    how = f"--model {Path(path).name}@{address:#x}" if address is not None else ""
    if address is None:
        found = calls.model_addresses()
        if len(found) != 1:
            raise InputError(path, "the image embeds no model and the code does not show one "
                             "address it reads it from: give --model FILE@ADDR")
        address, where = found[0]
        how = f"--model {Path(path).name}, placed where the code reads the model: {where}"
    model = read_tflite(data, path, 0)
    if not model.operators:
        raise InputError(path, "no ethos-u operator in this .tflite (compile it with Vela)")
    return EmbeddedModel(address, None, data[:model.extent], model.operators, model.offline_plan,
                         how)


def tflm_tables(image: Image, binding: Binding, models, arena) -> list[BaseAddressTable]:
    """One table per ethos-u operator of each model (tflm.EmbeddedModel), its arena tensors in
    `arena` (tflm.Arena)."""
    tables = []
    for m in models:
        for op in m.operators:
            bases, first = [], {}
            for i, tensor in enumerate(op.entries):
                rule = binding.region(i)
                name = rule.name if rule else tensor.name
                address, size, note, bounds, offset = tensor_base(
                    i, name, tensor, m, arena, first.get(tensor.index))
                first.setdefault(tensor.index, i)
                fact = symbol_fact(image, arena.name, local=True) if bounds and arena.name else None
                bases.append(BoundBase(i, name, address or 0, size, fact, None, note, bounds,
                                       offset, unknown=note if address is None else "",
                                       run_time=address is None and arena.run_time))
            stream = m.address + op.command_stream.data_offset
            tables.append(BaseAddressTable(binding.name, m.address, None, tuple(bases), m.data,
                                           stream, "tflite", m.symbol, op.number, arena))
    return tables

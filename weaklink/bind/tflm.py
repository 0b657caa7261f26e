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
- The tensor arena (find_arena): stated, read from the code, or found by convention.
  In order, the first that answers:
  1. stated: `--arena SYMBOL|SECTION|ADDR:SIZE` (a symbol by its mangled or demangled name, an
     output section of the image or an input section of the map, or an address and size), or a
     symbol the binding names under [arena];
  2. evidence: what the code hands TFLM's interpreter or allocator (weaklink.bind.tflmcalls,
     `Calls.arena`); every call must agree;
  3. convention, an assumption that is printed: an input section apps put arenas in (from the
     map: `.bss.tensor_arena`, `tflm_arena`, `.bss.NoInit.activation_buf*`), else the largest
     object whose demangled name has `arena` in it (`(anonymous namespace)::
     inferenceProcessTensorArena`, `arm::app::tensorArena`, `tensor_arena_buf`), never a vtable,
     typeinfo, guard variable or other C++ special name, nor code. Himax's
     `.bss.NoInit` holds every buffer the app keeps over a reset (image buffers too): the section
     alone is no sign of an arena there.
  Otherwise the arena is unknown (an Arena whose address is None), with why. An arena the code
  computes at run time (the value reaching the call is what a function returns, or derived from
  it, through registers or a store and load of the calling function) is unknown with no
  convention tried: no object of the image is the arena then. Only a value loaded from memory
  the reader cannot follow (a writable word, a field of an object) leaves room for the convention.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress
from pathlib import Path

from npu.read.tflite import IDENTIFIER, EthosuOperator, TflTensor, read_tflite
from npu.records import Record
from weaklink.bind.binding import ArenaRule, Binding
from weaklink.bind.table import BaseAddressTable, BoundBase, symbol_fact
from weaklink.demangle import demangle
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.read.ldmap import input_sections


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


def name_at(image: Image, address: int) -> str | None:
    """The demangled name of the symbol that holds `address` (0: none)."""
    sym = image.symbol_at(address) if address else None
    return demangle(sym.name) if sym else None


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


# Input sections applications place their arena in (tflite-micro's examples use
# .bss.tensor_arena; Zephyr's samples/modules/tflite-micro/tflm_ethosu `tflm_arena`; Arm's ML
# embedded evaluation kit `.bss.NoInit.activation_buf_sram`/`_dram`, BufAttributes.hpp).
APP_SECTIONS = (".bss.tensor_arena", "tflm_arena", ".bss.NoInit.activation_buf")
# Itanium C++ ABI special names (5.1.4: vtables, VTTs, construction vtables, typeinfo and its
# name, guard variables, TLS init/wrapper functions, reference temporaries): objects the
# compiler makes, never a buffer an application hands TFLM.
SPECIAL_NAMES = (b"_ZTV", b"_ZTT", b"_ZTC", b"_ZTI", b"_ZTS", b"_ZGV", b"_ZGR", b"_ZTH", b"_ZTW",
                 b"_ZThn", b"_ZTv", b"_ZTc")
_ADDR_SIZE = re.compile(r"^(0x[0-9a-fA-F]+|\d+):(0x[0-9a-fA-F]+|\d+)$")


def _from_map(link_map, pattern: str) -> tuple[int, int, str, str] | None:
    """The largest non-empty input section whose name matches `pattern` (a regex) in the map:
    (address, size, file, section name)."""
    found = [s for s in input_sections(link_map, pattern) if s[1]]
    return max(found, key=lambda s: s[1], default=None)


def _objects(image: Image):
    """(demangled name, address, size) of every sized data object with `arena` in its name:
    no function, no C++ special name, nothing in an executable section."""
    c = image.defined
    rows = sorted((k for k in compress(range(len(c)), map(S.STT_OBJECT.__eq__, c.type)) if c.size[k]),
                  key=c.address.__getitem__)
    for row, raw in zip(rows, image.cut_names([c.name_off[k] for k in rows])):
        if b"arena" in raw.lower() and not raw.startswith(SPECIAL_NAMES):
            shndx = image.section_at(c.address[row])
            if shndx is not None and image.elf.shdrs[shndx].sh_flags & S.SHF_EXECINSTR:
                continue
            yield demangle(raw.decode("utf-8", "replace")), c.address[row], c.size[row]


def _lookup(image: Image, name: str):
    sym = image.symbol_named(name, local=True) or image.demangled_symbol(name)
    return None if sym is None else (sym.name if sym.name == name else name, sym.address, sym.size)


def stated(image: Image, spec: str, link_map=None) -> Arena:
    """`--arena SYMBOL|SECTION|ADDR:SIZE`; one InputError when it names nothing."""
    m = _ADDR_SIZE.match(spec)
    if m:
        address, size = int(m.group(1), 0), int(m.group(2), 0)
        return Arena(name_at(image, address), address, size, f"--arena {spec}")
    hit = _lookup(image, spec)
    if hit:
        return Arena(demangle(hit[0]), hit[1], hit[2], f"--arena {spec}: the symbol")
    elf = image.elf
    for i, sh in enumerate(elf.shdrs):
        if elf.section_name(i) == spec and sh.sh_flags & S.SHF_ALLOC:
            return Arena(spec, sh.sh_addr, sh.sh_size, f"--arena {spec}: the output section")
    hit = _from_map(link_map, re.escape(spec)) if link_map else None
    if hit:
        return Arena(name_at(image, hit[0]) or spec, hit[0], hit[1],
                     f"--arena {spec}: the input section ({hit[2]}, map)")
    raise InputError(elf.name, f"--arena {spec}: no symbol or output section of that name in the "
                     f"image{'' if link_map else ' (an input section needs --map)'}, and not ADDR:SIZE")


def _convention(image: Image, rule: ArenaRule, link_map) -> Arena | None:
    if link_map:
        sections = ((rule.input_section,) if rule.input_section else ()) + APP_SECTIONS
        pattern = "|".join(re.escape(s) + (r"[.\w]*" if s.endswith("_buf") else "") for s in sections)
        hit = _from_map(link_map, f"(?:{pattern})")
        if hit:
            name = name_at(image, hit[0]) or hit[3]
            return Arena(name, hit[0], hit[1], f"input section {hit[3]} ({hit[2]}, map)",
                         _assumed(name, f"the input section {hit[3]}"))
    best = None
    for name, address, size in _objects(image):
        last = name.rsplit("::", 1)[-1].lower()
        if rule.symbol_suffix and rule.symbol_suffix.lower() in last and (best is None or size > best[2]):
            best = (name, address, size)
    if best:
        how = f"the largest object whose name has {rule.symbol_suffix!r} in it"
        return Arena(*best, f"symbol `{best[0]}` ({how})", _assumed(best[0], how))
    return None


def _assumed(name: str, how: str) -> str:
    return (f"the tensor arena TFLM's interpreter is given is `{name}` ({how}; give "
            f"--arena, or name it under [arena] in a binding, to state it)")


def find_arena(image: Image, rule: ArenaRule | None, calls, link_map=None,
               spec: str | None = None) -> Arena:
    """The tensor arena; unknown (address None) with why, never a guess. `calls`: what the
    code hands TFLM (weaklink.bind.tflmcalls.Calls, read once per check); `link_map`: the
    link's map (weaklink.read.ldmap), whose input sections may hold it."""
    if spec:
        return stated(image, spec, link_map)
    rule = rule or ArenaRule()
    for name in rule.symbols:
        sym = image.symbol_named(name, local=True)
        if sym is not None:
            return Arena(name, sym.address, sym.size, f"symbol `{name}` named by the binding")
    found, why, run_time = calls.arena()
    if found is not None:
        return found
    if run_time:        # an allocator's pointer: no object of the image is the arena
        return Arena(None, None, None, why, run_time=True)
    conv = _convention(image, rule, link_map)
    if conv is not None:
        return Arena(conv.name, conv.address, conv.size, conv.source,
                     f"{conv.assumption[:-1]}; the code does not show it: {why})")
    return Arena(None, None, None, f"{why}; no symbol or input section looks like an arena")


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

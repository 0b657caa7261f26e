"""What an application hands TensorFlow Lite Micro, read from the image's code: the tensor
arena and where the model is read from.

TFLM's entry points, matched by their demangled names (several overloads across TFLM versions;
GCC emits the C1 and C2 constructors, often at one address; a BL to GNU ld's long-branch stub
`__<name>_veneer` is a call of it). Under the AAPCS a constructor's
`this` travels in r0, so its arguments start at r1:
- `tflite::MicroInterpreter::MicroInterpreter(tflite::Model const*, tflite::MicroOpResolver
  const&, unsigned char* tensor_arena, unsigned int tensor_arena_size, ...)`: the model in r1,
  the arena in r3 (its size on the stack); the overload taking a `tflite::MicroAllocator*`
  instead gets its arena through `MicroAllocator::Create`;
- `tflite::MicroAllocator::Create(unsigned char* tensor_arena, unsigned int arena_size, ...)`:
  the arena in r0, its size in r1;
- `tflite::GetModel(void const* buf)`: the flatbuffer in r0. Most TFLM versions define it
  inline (schema_generated.h: `flatbuffers::GetRoot<Model>(buf)`, a word load from `buf`
  then `buf` plus that word): then the word loads of the function that constructs the
  interpreter, from a constant address, tell where the model is read from.

A value counts when the code before the call holds it as a constant (weaklink.bind.callsite),
or when the call passes on the calling function's own argument untouched and each call of that
function passes a constant (one level). Calls made by TFLM itself (functions in `tflite::`)
count only through what they pass on: TFLM's own Create calls get an aligned copy of the arena.
A value the code computes at run time (a pointer an allocator returns, a field of an object)
is unknown, and said so.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from weaklink.bind import callsite
from weaklink.bind.origins import RETURNED
from weaklink.bind.tflm import Arena, name_at
from weaklink.demangle import demangle, demangle_many
from weaklink.read.image import Image

ARENA_TYPE = "unsigned char*"
MANGLED = ("6tflite16MicroInterpreterC", "6tflite14MicroAllocator6Create", "6tflite8GetModel")


@dataclass(frozen=True)
class Entry:
    """One TFLM entry point: the registers its arena, arena size and model arrive in."""
    address: int
    name: str                       # demangled
    arena: int | None = None
    size: int | None = None
    model: int | None = None        # the flatbuffer itself (GetModel), not a Model*
    constructs: bool = False        # a MicroInterpreter constructor


@dataclass(frozen=True)
class Passed:
    """What one call hands an entry point in one register."""
    call_site: int
    callee: str
    value: int | None               # None: not a constant the code shows
    size: int | None
    where: str                      # how it was read
    run_time: bool = False          # the code computes it at run time (a function's return value)


def parameters(demangled: str) -> list[str]:
    """The parameter types of a demangled function name."""
    inner = demangled[demangled.find("(") + 1:demangled.rfind(")")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "<(" and 1 or (ch in ">)" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def entries(image: Image) -> dict[int, Entry]:
    """TFLM's entry points linked in the image, by address."""
    found = []
    for fn in image.functions:
        if not any(m in fn.name for m in MANGLED):
            continue
        text = fn.name
        if text.startswith("__") and text.endswith("_veneer"):
            text = text[2:-len("_veneer")]    # GNU ld's long-branch stub: a call of the callee
        found.append((fn, text))
    demangled = demangle_many(text for _, text in found)
    out = {}
    for fn, text in found:
        name = demangled[text]
        params, address = parameters(name), fn.address
        if name.startswith("tflite::MicroInterpreter::MicroInterpreter("):
            arena = len(params) > 2 and params[2] == ARENA_TYPE
            out[address] = Entry(address, name, 3 if arena else None, None, None, True)
        elif name.startswith("tflite::MicroAllocator::Create(") and params[:1] == [ARENA_TYPE]:
            out[address] = Entry(address, name, 0, 1)
        elif name == "tflite::GetModel(void const*)":
            out[address] = Entry(address, name, model=0)
    return out


def _in_tflm(image, function: int) -> bool:
    name = name_at(image, function)
    return bool(name) and name.startswith("tflite::")


class Calls:
    """The calls of TFLM's entry points in one image, with the calls of the functions that
    pass an argument on to them, and the calls of `callee` (the driver's init function,
    weaklink.bind.fastmem.DriverInit): one scan of the code reads the calls of both, when
    first asked for. check builds one per image and hands it to every step that reads what
    the code passes."""

    def __init__(self, image: Image, callee: str | None = None):
        self.image, self.callee = image, callee

    @cached_property
    def entries(self) -> dict[int, Entry]:
        return entries(self.image)

    @cached_property
    def _callee_targets(self) -> set[int]:
        return callsite.callee_targets(self.image, self.callee)[0] if self.callee else set()

    @cached_property
    def _scanned(self) -> list[callsite.CodeCall]:
        targets = set(self.entries) | self._callee_targets
        return callsite.calls_to(self.image, targets) if targets else []

    @cached_property
    def calls(self) -> list[callsite.CodeCall]:
        return [c for c in self._scanned if c.target in self.entries]

    @cached_property
    def callee_calls(self) -> list[callsite.CodeCall]:
        """The calls of `callee` (directly or through ld's long-branch stub)."""
        return [c for c in self._scanned if c.target in self._callee_targets]

    @cached_property
    def callers(self) -> list[callsite.CodeCall]:
        """The calls of the functions that pass an argument on to TFLM, or construct its
        interpreter. A BL to GNU ld's long-branch stub of one (`__<name>_veneer`: code in a TCM
        calling code in flash, as Alif's RTSS images do) is a call of it."""
        follow = {c.function for c in self.calls if c.passed}
        follow |= {c.function for c in self.calls if c.target in self.entries and
                   self.entries[c.target].constructs and not _in_tflm(self.image, c.function)}
        via = {}
        for function in follow:
            sym = self.image.symbol_at(function)
            stubs = callsite.callee_targets(self.image, sym.name)[0] if sym is not None else set()
            via.update((stub, function) for stub in stubs if stub != function)
        calls = callsite.calls_to(self.image, follow | set(via)) if follow else []
        return [replace(c, target=via.get(c.target, c.target)) for c in calls]

    def links_tflm(self) -> bool:
        """TFLM's interpreter is linked (its constructor, under any overload)."""
        return any(e.constructs for e in self.entries.values())

    def model_missing(self) -> str:
        """Why a TFLM image has no model to check, and the option that supplies it."""
        found = self.model_addresses()
        if found:
            first, where = found[0]
            more = "".join(f"; also {a:#x} ({w})" for a, w in found[1:])
            return (f"model read from {first:#x}, not in the image ({where}{more}): give "
                    f"--model FILE@{first:#x}")
        return ("no Vela .tflite with an ethos-u operator in the image's loadable sections, and "
                "the code does not show where the model is read from (give --model FILE@ADDR)")

    def _callers(self, function: int) -> list[callsite.CodeCall]:
        return [c for c in self.callers if c.target == function]

    def _values(self, call, reg: int, callee: str, depth: int = 0) -> list[Passed]:
        """What `call` passes in `reg`: a constant, or, passed on, what each call of the
        calling function passes."""
        name = name_at(self.image, call.function)
        name = name.split("(")[0] if name else f"{call.function:#x}"
        if reg in call.values:
            return [Passed(call.call_site, callee, call.values[reg], None,
                           f"the code before the call of {callee} at {call.call_site:#x}"
                           f"{self._read_only(call, reg)}")]
        if reg in call.passed and depth == 0:
            callers = self._callers(call.function)
            out = []
            for c in callers:
                for p in self._values(c, call.passed[reg], callee, 1):
                    out.append(Passed(p.call_site, callee, p.value, None,
                                      f"{p.where.replace(f'of {callee} ', f'of `{name}` ')}"
                                      f", which hands it on to {callee} at {call.call_site:#x}",
                                      p.run_time))
            if out:
                return out
        if _in_tflm(self.image, call.function) and depth == 0:
            return []                       # TFLM's own call with a value it computed
        why, run_time = self._origin(call, reg)
        return [Passed(call.call_site, callee, None, None,
                       f"the call of {callee} at {call.call_site:#x} in `{name}`: {why}", run_time)]

    def _read_only(self, call, reg: int) -> str:
        if reg not in call.read_only:
            return ""
        pc, address = call.read_only[reg]
        name = name_at(self.image, address)
        held = f" (`{name}`)" if name else ""
        return (f", a load at {pc:#x} from the read-only word at {address:#x}{held}, which holds "
                f"it in the image")

    def _origin(self, call, reg: int) -> tuple[str, bool]:
        """Why `reg` is no constant at the call, and whether the code computes it at run time."""
        origin = call.origins.get(reg)
        if call.note or origin is None:
            return call.note or ("not a constant there (an argument, or a value the reader does "
                                 "not follow)"), False
        kind, pc, what = origin
        if kind == RETURNED:
            callee = name_at(self.image, what) if what is not None else None
            callee = callee.split("(")[0] if callee else (f"{what:#x}" if what else "?")
            return (f"computed at run time: the value `{callee}` returns (the call at {pc:#x}), "
                    f"or one derived from it"), True
        if what is None:
            return (f"loaded from memory at {pc:#x} (a field of an object, an address the code "
                    f"computes), which the reader cannot follow"), False
        return (f"loaded at {pc:#x} from the word at {what:#x}, which the reader cannot follow "
                f"(writable, and no store of this function to it)"), False

    def arena(self) -> tuple[Arena | None, str, bool]:
        """The tensor arena every call hands TFLM, when they agree; else None with why it
        cannot be read, and whether the code computes it at run time."""
        out = []
        for c in self.calls:
            e = self.entries.get(c.target)
            if e is None or e.arena is None:
                continue
            for p in self._values(c, e.arena, e.name.split("(")[0]):
                size = c.values.get(e.size) if e.size is not None and p.call_site == c.call_site else None
                out.append(Passed(p.call_site, p.callee, p.value, size, p.where, p.run_time))
        passed = list({(p.call_site, p.value): p for p in out}.values())
        if not passed:
            return None, ("no call of TFLM's interpreter constructor or MicroAllocator::Create "
                          "with an arena was found in the code"), False
        unread = [p for p in passed if p.value is None]
        if unread:
            run_time = [p for p in unread if p.run_time]
            return None, (run_time or unread)[0].where, bool(run_time)
        values = {p.value for p in passed}
        if len(values) > 1:
            return None, (f"{len(passed)} calls hand TFLM different arenas ("
                          f"{', '.join(f'{v:#x}' for v in sorted(values))})"), False
        p = passed[0]
        held = self.image.symbol_at(p.value) if p.value else None
        size = p.size if p.size is not None else (held.address + held.size - p.value if held else None)
        via = f"; calls at {', '.join(f'{q.call_site:#x}' for q in passed)}" if len(passed) > 1 else ""
        return Arena(demangle(held.name) if held else None, p.value, size, f"{p.where}{via}"), "", False

    def model_addresses(self) -> list[tuple[int, str]]:
        """Constant addresses outside the image's sections that the code reads the model from:
        GetModel's argument, or, GetModel inlined, a word load at offset 0 of a constant address in
        the function that constructs the interpreter."""
        found = {}
        for c in self.calls:
            e = self.entries.get(c.target)
            if e is None or e.model is None:
                continue
            for p in self._values(c, e.model, "tflite::GetModel"):
                if p.value is not None:
                    found.setdefault(p.value, p.where)
        functions = {c.function: c for c in self.calls
                     if c.target in self.entries and self.entries[c.target].constructs
                     and not _in_tflm(self.image, c.function)}
        for function, call in functions.items():
            name = name_at(self.image, function) or f"{function:#x}"
            for pc, load in sorted(call.loads.items()):
                if isinstance(load, int):
                    found.setdefault(load, f"a word load at {pc:#x} in `{name}`")
                elif load[2] == 0:
                    for c in self._callers(function):
                        if load[1] in c.values:
                            found.setdefault(c.values[load[1]], f"a word load at {pc:#x} in "
                                             f"`{name}` from its argument r{load[1]}, "
                                             f"{c.values[load[1]]:#x} at the call at {c.call_site:#x}")
        return [(a, w) for a, w in found.items()
                if a % 4 == 0 and self.image.section_at(a) is None and a >= 0x1000]


"""TFLM's tensor arena in a linked image: stated, read from the code, or found by convention.

In order, the first that answers:
1. stated: `--arena SYMBOL|SECTION|ADDR:SIZE` (a symbol by its mangled or demangled name, an
   output section of the image or an input section of the map, or an address and size), or a
   symbol the binding names under [arena];
2. evidence: what the code hands TFLM's interpreter or allocator (weaklink.bind.tflmcalls);
   every call must agree;
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
from pathlib import Path

import numpy as np

from weaklink.analyze.targets import targets
from weaklink.bind.binding import ArenaRule
from weaklink.bind.fastmem import symbol_at
from weaklink.bind.tflm import ARENA_OPTION, Arena
from weaklink.bind.tflmcalls import calls_of
from weaklink.demangle import demangle, demangle_many
from weaklink.errors import InputError
from weaklink.read import elfstructs as S

# Input sections applications place their arena in (tflite-micro's examples use
# .bss.tensor_arena; Zephyr's samples/modules/tflite-micro/tflm_ethosu `tflm_arena`; Arm's ML
# embedded evaluation kit `.bss.NoInit.activation_buf_sram`/`_dram`, BufAttributes.hpp).
APP_SECTIONS = (".bss.tensor_arena", "tflm_arena", ".bss.NoInit.activation_buf")
# Itanium C++ ABI special names (5.1.4: vtables, VTTs, construction vtables, typeinfo and its
# name, guard variables, TLS init/wrapper functions, reference temporaries): objects the
# compiler makes, never a buffer an application hands TFLM.
SPECIAL_NAMES = (b"_ZTV", b"_ZTT", b"_ZTC", b"_ZTI", b"_ZTS", b"_ZGV", b"_ZGR", b"_ZTH", b"_ZTW",
                 b"_ZThn", b"_ZTv", b"_ZTc")
_MAP_INPUT = r"^ ({name})\s+(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(\S+)"
_ADDR_SIZE = re.compile(r"^(0x[0-9a-fA-F]+|\d+):(0x[0-9a-fA-F]+|\d+)$")


def _from_map(map_path, pattern: str) -> tuple[int, int, str, str] | None:
    """The largest input section whose name matches `pattern` (a regex) in a GNU ld map:
    (address, size, file, section name)."""
    try:
        text = Path(map_path).read_text(errors="replace")
    except OSError:
        return None
    best = None
    for m in re.finditer(_MAP_INPUT.format(name=pattern), text, re.M):
        size = int(m.group(3), 16)
        if size and (best is None or size > best[1]):
            best = (int(m.group(2), 16), size, m.group(4), m.group(1))
    return best


def _objects(image):
    """(demangled name, address, size) of every sized data object with `arena` in its name:
    no function, no C++ special name, nothing in an executable section."""
    t = targets(image)
    rows = np.flatnonzero((t.type == S.STT_OBJECT) & (t.size > 0))
    for row, raw in zip(rows, image.cut_names(t.name_off[rows])):
        if b"arena" in raw.lower() and not raw.startswith(SPECIAL_NAMES):
            shndx = image.section_at(int(t.address[row]))
            if shndx is not None and image.elf.shdrs[shndx].sh_flags & S.SHF_EXECINSTR:
                continue
            yield demangle(raw.decode("utf-8", "replace")), int(t.address[row]), int(t.size[row])


def _lookup(symbols, name: str):
    fact = symbols.lookup(name, local=True)
    if fact is not None:
        return fact.name, fact.address, fact.size
    t = targets(symbols.image)
    rows = np.flatnonzero(t.size > 0)
    mangled = [(row, raw.decode("utf-8", "replace"))
               for row, raw in zip(rows, symbols.image.cut_names(t.name_off[rows])) if raw.startswith(b"_Z")]
    demangled = demangle_many(text for _, text in mangled)
    row = next((row for row, text in mangled if demangled[text] == name), None)
    return None if row is None else (name, int(t.address[row]), int(t.size[row]))


def _name_at(symbols, address: int) -> str | None:
    name = symbol_at(symbols.image, address)
    return demangle(name) if name else None


def stated(symbols, spec: str, map_path=None) -> Arena:
    """`--arena SYMBOL|SECTION|ADDR:SIZE`; one InputError when it names nothing."""
    m = _ADDR_SIZE.match(spec)
    if m:
        address, size = int(m.group(1), 0), int(m.group(2), 0)
        return Arena(_name_at(symbols, address), address, size, f"--arena {spec}")
    hit = _lookup(symbols, spec)
    if hit:
        return Arena(demangle(hit[0]), hit[1], hit[2], f"--arena {spec}: the symbol")
    elf = symbols.elf
    for i, sh in enumerate(elf.sections):
        if elf.section_name(i) == spec and int(sh["sh_flags"]) & S.SHF_ALLOC:
            return Arena(spec, int(sh["sh_addr"]), int(sh["sh_size"]), f"--arena {spec}: the output section")
    hit = _from_map(map_path, re.escape(spec)) if map_path else None
    if hit:
        return Arena(_name_at(symbols, hit[0]) or spec, hit[0], hit[1],
                     f"--arena {spec}: the input section ({hit[2]}, map)")
    raise InputError(elf.name, f"--arena {spec}: no symbol or output section of that name in the "
                     f"image{'' if map_path else ' (an input section needs --map)'}, and not ADDR:SIZE")


def _evidence(symbols) -> tuple[Arena | None, str, bool]:
    """The arena every call agrees on, or None with why it cannot be read, and whether the
    code computes it at run time."""
    passed = calls_of(symbols.image).arena()
    if not passed:
        return None, ("no call of TFLM's interpreter constructor or MicroAllocator::Create with "
                      "an arena was found in the code"), False
    unread = [p for p in passed if p.value is None]
    if unread:
        run_time = [p for p in unread if p.run_time]
        return None, (run_time or unread)[0].where, bool(run_time)
    values = {p.value for p in passed}
    if len(values) > 1:
        return None, (f"{len(passed)} calls hand TFLM different arenas ("
                      f"{', '.join(f'{v:#x}' for v in sorted(values))})"), False
    p = passed[0]
    name = symbol_at(symbols.image, p.value)
    fact = _lookup(symbols, name) if name else None
    size = p.size if p.size is not None else (fact[1] + fact[2] - p.value if fact else None)
    via = f"; calls at {', '.join(f'{q.call_site:#x}' for q in passed)}" if len(passed) > 1 else ""
    return Arena(demangle(name) if name else None, p.value, size, f"{p.where}{via}"), "", False


def _convention(symbols, rule: ArenaRule, map_path) -> Arena | None:
    if map_path:
        sections = ((rule.input_section,) if rule.input_section else ()) + APP_SECTIONS
        pattern = "|".join(re.escape(s) + (r"[.\w]*" if s.endswith("_buf") else "") for s in sections)
        hit = _from_map(map_path, f"(?:{pattern})")
        if hit:
            name = symbol_at(symbols.image, hit[0])
            name = demangle(name) if name else hit[3]
            return Arena(name, hit[0], hit[1], f"input section {hit[3]} ({hit[2]}, map)",
                         _assumed(name, f"the input section {hit[3]}"))
    best = None
    for name, address, size in _objects(symbols.image):
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


def find_arena(symbols, rule: ArenaRule | None, map_path=None, spec: str | None = None) -> Arena:
    """The tensor arena; unknown (address None) with why, never a guess."""
    if spec:
        return stated(symbols, spec, map_path)
    rule = rule or ArenaRule()
    for name in rule.symbols:
        fact = symbols.lookup(name, local=True)
        if fact is not None:
            return Arena(name, fact.address, fact.size, f"symbol `{name}` named by the binding")
    found, why, run_time = _evidence(symbols)
    if found is not None:
        return found
    if run_time:        # an allocator's pointer: no object of the image is the arena
        return Arena(None, None, None, why, run_time=True)
    conv = _convention(symbols, rule, map_path)
    if conv is not None:
        return Arena(conv.name, conv.address, conv.size, conv.source,
                     f"{conv.assumption[:-1]}; the code does not show it: {why})")
    return Arena(None, None, None, f"{why}; no symbol or input section looks like an arena")

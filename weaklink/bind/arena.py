"""TFLM's tensor arena in a linked image: stated, read from the code, or found by convention.

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
from itertools import compress

from weaklink.bind.binding import ArenaRule
from weaklink.bind.tflm import Arena
from weaklink.bind.tflmcalls import Calls, name_at
from weaklink.demangle import demangle, demangle_many
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.read.ldmap import input_sections

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
    sym = image.symbol_named(name, local=True)
    if sym is not None:
        return sym.name, sym.address, sym.size
    c = image.defined
    rows = sorted(compress(range(len(c)), c.size), key=c.address.__getitem__)
    mangled = [(row, raw.decode("utf-8", "replace"))
               for row, raw in zip(rows, image.cut_names([c.name_off[k] for k in rows])) if raw.startswith(b"_Z")]
    demangled = demangle_many(text for _, text in mangled)
    row = next((row for row, text in mangled if demangled[text] == name), None)
    return None if row is None else (name, c.address[row], c.size[row])


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


def find_arena(image: Image, rule: ArenaRule | None, calls: Calls, link_map=None,
               spec: str | None = None) -> Arena:
    """The tensor arena; unknown (address None) with why, never a guess. `link_map`: the
    link's map (weaklink.read.ldmap), whose input sections may hold it; `calls`: the image's
    calls of TFLM's entry points (weaklink.bind.tflmcalls), read once per check."""
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

"""Which code of a linked image uses a variable's address, read from the image alone.

A build without -g still says a lot. ld copies each object's local symbols into the image's
.symtab after an STT_FILE symbol naming the object's source file, and among them the ARM
mapping symbols (`$t` Thumb code, `$d` data in code, `$a` ARM code; AAELF32 "Mapping
symbols") that begin every input section: so every byte of code belongs to a source file.
Code can only use a global variable through its address, which an ARM image holds in one of
these forms:
- a literal pool word (`ldr rX, [pc, #n]`; relocation R_ARM_ABS32), in a `$d` span;
- a MOVW/MOVT pair building it in one register (R_ARM_THM_MOVW_ABS_NC / MOVT_ABS);
- a pc-relative literal added to the pc (`ldr rX, [pc, #n]; add rX, pc`; R_ARM_REL32);
- a GOT slot holding it (position-independent code, -fPIC): the function finds the GOT from a
  pc-relative literal (R_ARM_BASE_PREL against _GLOBAL_OFFSET_TABLE_) and loads the slot at
  an offset from a literal (R_ARM_GOT_BREL, the old R_ARM_GOT32), or computes the slot's
  address pc-relative (R_ARM_GOT_PREL).
The scan decodes the Thumb instructions of the code spans it is asked about, linearly, keeping
for each register the last literal or MOVW value put in it. An image linked with its local
symbols discarded (ld -x) has no mapping symbols: each function is then one span of code,
and only the function names say whose code it is. Finding a form is evidence that
the code uses the address; not finding one is not evidence of the contrary (an address can be
computed in ways this scan does not follow), so callers never read "none found" as "unused".
"""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from functools import cache, cached_property

from weaklink.demangle import demangle
from weaklink.read import elfstructs as S
from weaklink.read import thumb
from weaklink.read.image import Image, Symbol

_FUNCTION = (S.STT_FUNC,)
GOT_SYMBOL = "_GLOBAL_OFFSET_TABLE_"
GOT_SECTIONS = (".got", ".got.plt")
_WORD = struct.Struct("<I")
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class CodeRef:
    """One place where code holds a variable's address."""
    site: int                 # the literal, the instruction, or the GOT-offset literal
    form: str                 # literal pool | MOVW/MOVT | pc-relative | GOT | GOT (pc-relative)
    unit: str | None          # the source file ld listed the code under (STT_FILE)
    function: str | None      # the function holding the site (demangled)
    slot: int | None = None   # the GOT slot, for the GOT forms

    def describe(self) -> str:
        how = {"literal pool": f"held in a literal pool at {self.site:#x}",
               "MOVW/MOVT": f"built by a MOVW/MOVT pair at {self.site:#x}",
               "pc-relative": f"computed pc-relative from the literal at {self.site:#x}",
               "GOT": f"read through the GOT slot at {self.slot or 0:#x} (its offset is the "
                      f"literal at {self.site:#x})",
               "GOT (pc-relative)": f"read through the GOT slot at {self.slot or 0:#x} "
                                    f"(pc-relative, from the literal at {self.site:#x})"}
        fn = f" in {_short(self.function)}" if self.function else ""
        return f"{how[self.form]} by {self.unit or 'unattributed'} code{fn}"


def _short(name: str) -> str:
    """A demangled function name without its parameter list."""
    plain = name.replace("(anonymous namespace)", "{anonymous}")
    depth = 0
    for i, ch in enumerate(plain):
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0 and i:
            return plain[:i].replace("{anonymous}", "(anonymous namespace)")
    return name


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str                 # "t" | "d" | "a"
    unit: str | None
    section: int


class CodeMap:
    """The code sections of an image cut into mapping-symbol spans, each with its source file,
    and the functions (FUNC symbols) that hold them."""

    def __init__(self, image: Image):
        self.image = image
        self.elf = image.elf
        self.spans = self._spans()
        self._starts = [s.start for s in self.spans]

    @cached_property
    def code_sections(self) -> list[int]:
        return [i for i, sh in enumerate(self.elf.shdrs)
                if sh.sh_type == S.SHT_PROGBITS and sh.sh_flags & S.SHF_ALLOC
                and sh.sh_flags & S.SHF_EXECINSTR]

    def _spans(self) -> list[_Span]:
        code = set(self.code_sections)
        marks = [(m.address, m.kind, m.unit, m.section) for m in self.image.mapping_symbols
                 if m.section in code]
        if not marks:           # locals discarded (ld -x): each function is a span of code
            for fn in self.image.functions:
                i = self.image.section_at(fn.address)
                if fn.size and i in code:
                    marks.append((fn.address, "t", None, i))
                    marks.append((fn.address + fn.size, "-", None, i))
        marks.sort(key=lambda m: m[0])
        spans = []
        for k, (start, kind, unit, shndx) in enumerate(marks):
            sh = self.elf.shdrs[shndx]
            end = sh.sh_addr + sh.sh_size
            if not sh.sh_addr <= start < end:       # a mapping symbol outside its section
                continue
            for nxt in marks[k + 1:]:
                if nxt[3] == shndx and nxt[0] > start:
                    end = nxt[0]
                    break
            if kind != "-":
                spans.append(_Span(start, end, kind, unit, shndx))
        return spans

    def unit_at(self, address: int) -> str | None:
        k = bisect.bisect_right(self._starts, address) - 1
        if k >= 0 and self.spans[k].start <= address < self.spans[k].end:
            return self.spans[k].unit
        return None

    def function_at(self, address: int) -> Symbol | None:
        """The function (STT_FUNC symbol) that holds `address`."""
        return self.image.symbol_at(address, _FUNCTION)

    def function_name(self, address: int) -> str | None:
        fn = self.function_at(address)
        return demangle(fn.name) if fn else None


def got_slots(image: Image, address: int) -> tuple[set[int], set[int]]:
    """(the GOT origins, the GOT slots holding `address`). GNU ld's ARM GOT-relative
    relocations (R_ARM_BASE_PREL, R_ARM_GOT_BREL) count from the start of the output section
    that holds .got: .got itself when it is an output section, while ld puts
    _GLOBAL_OFFSET_TABLE_ at .got.plt (measured, ld 2.40); lld puts both at .got. A script that
    places .got inside another output section (ExecuTorch's Corstone scripts put it in `.ddr`)
    moves the origin to that section's start. Each is an origin; slots found only there are
    checked word by word where the code points (`slot_holds`)."""
    elf = image.elf
    origins = {s.address for s in image.lookup(GOT_SYMBOL)}
    for s in image.lookup(GOT_SYMBOL):
        i = image.section_at(s.address) if s.address else None
        if i is not None:
            origins.add(elf.shdrs[i].sh_addr)
    slots = set()
    for name in GOT_SECTIONS:
        i = elf.find_section(name)
        if i is None or elf.shdrs[i].sh_type != S.SHT_PROGBITS:
            continue
        data, base = elf.section_bytes(i), elf.shdrs[i].sh_addr
        if name == ".got":
            origins.add(base)
        for off in range(0, len(data) - 3, 4):
            if _WORD.unpack_from(data, off)[0] == address:
                slots.add(base + off)
    return origins, slots


def _holds(image: Image, slot: int, address: int) -> bool:
    """Does the loadable word at `slot` hold `address` at reset? (A GOT inside another output
    section: only the words the code points at are read, never the section.)"""
    i = image.section_at(slot)
    if i is None or image.elf.shdrs[i].sh_type != S.SHT_PROGBITS:
        return False
    word = image.elf.section_bytes(i, slot - image.elf.shdrs[i].sh_addr, 4)
    return len(word) == 4 and _WORD.unpack(word)[0] == address


def find_refs(code: CodeMap, address: int, spans: list[_Span]) -> list[CodeRef]:
    """Every place in `spans` (code and literal data of a code section) that holds `address`
    in one of the module's forms."""
    origins, slots = got_slots(code.image, address)
    out: list[CodeRef] = []
    section = cache(code.elf.section_bytes)      # each section's bytes, read once

    def ref(site, form, slot=None):
        out.append(CodeRef(site, form, code.unit_at(site), code.function_name(site), slot))

    got_users: dict[tuple, list[tuple[int, int]]] = {}   # (function, origin) -> (site, slot)
    got_based: set[tuple] = set()                       # (function, origin) it computes
    for span in spans:
        base = code.elf.shdrs[span.section].sh_addr
        data = section(span.section)
        if span.kind == "d":
            first, last = max((span.start + 3) & ~3, base), min(span.end, base + len(data))
            for at in range(first, last - 3, 4):
                word = _WORD.unpack_from(data, at - base)[0]
                if word == address:
                    ref(at, "literal pool")
                elif word in slots:
                    ref(at, "GOT", word)
            continue
        if span.kind != "t":
            continue
        for pc, kind, reg, value, site in _thumb_values(data, base, span.start, span.end):
            fn = code.function_at(pc) or span
            if kind == "movt" and value == address:
                ref(pc, "MOVW/MOVT")
            elif kind == "literal" and value == address:
                ref(site, "literal pool")
            elif kind == "addpc":
                if value == address:
                    ref(site, "pc-relative")
                elif value in slots:
                    ref(site, "GOT (pc-relative)", value)
                elif value in origins:
                    got_based.add((fn, value))
            elif kind == "literal":
                for origin in origins:
                    slot = (origin + value) & _MASK
                    if slot in slots or _holds(code.image, slot, address):
                        got_users.setdefault((fn, origin), []).append((site, slot))
    for key, uses in got_users.items():
        if key in got_based:                # the function does find the GOT: an offset into it
            for site, slot in uses:
                ref(site, "GOT", slot)
    return sorted(set(out), key=lambda r: r.site)


def _thumb_values(data: bytes, base: int, start: int, end: int):
    """Linear Thumb decode of [start, end): yields (pc, kind, register, value, site) for
    - "literal": `ldr rX, [pc, #n]` (16- and 32-bit), value the word loaded, site the literal;
    - "addpc": `add rX, pc` after a literal load into rX, value literal + pc + 4 (the address
      ARM's pc-relative forms compute), site the literal;
    - "movt": a MOVT completing a MOVW into the same register, value the 32-bit constant."""
    literal: dict[int, tuple[int, int]] = {}      # register -> (value, literal address)
    movw: dict[int, int] = {}
    for insn in thumb.instructions(data, base, max(start, base), min(end, base + len(data))):
        reg, lit, access = insn.rd, insn.address, insn.access
        if access and lit is not None and access.registers == (reg,) and access.size == 4:
            if base <= lit and lit + 4 <= base + len(data):
                value = _WORD.unpack_from(data, lit - base)[0]
                literal[reg] = (value, lit)
                movw.pop(reg, None)
                yield insn.pc, "literal", reg, value, lit
        elif insn.op in ("movw", "movt"):
            literal.pop(reg, None)
            if insn.op == "movw":
                movw[reg] = insn.imm
            elif reg in movw:
                yield insn.pc, "movt", reg, insn.imm << 16 | movw.pop(reg), insn.pc
        elif insn.op == "add" and insn.rm == thumb.PC and reg in literal:   # ADD Rdn, pc
            value, lit = literal.pop(reg)
            yield insn.pc, "addpc", reg, (value + insn.pc + 4) & _MASK, lit

"""C++ facts about an image's symbols that the findings need, from evidence a linked image
holds: which weak definitions are C++ vague linkage, and which names are class members.

Vague linkage (Itanium C++ ABI 5.2): inline functions and methods, vtables, VTTs, typeinfo,
template instantiations, guard variables and the static data of inline functions are emitted
in COMDAT groups by every object that uses them; ld keeps one copy of each group. They are
STB_WEAK in the image because of that, not because someone wrote a weak default to override.
A linked image no longer has the groups (ld drops SHT_GROUP from an executable), so this
module reads what is left, strongest evidence first:

1. the mangled name's kind: special names (`_ZTV`, `_ZTI`, `_ZTS`, `_ZTT`, `_ZGV`, thunks),
   local entities (`_ZZ`: a weak one belongs to an inline function), template arguments in
   the name or its scope, constructors and destructors;
2. the image's vtables: a function whose address is a vtable entry is a virtual method, and
   a weak virtual method is one defined in its class body;
3. the input object, where the map names it and its file is at hand: the definition's section
   is in a COMDAT group (an `inline` function defined in a .cc file and never inlined, which
   neither the map nor DWARF tells from a weak one). Without the objects, the map's
   "Discarded input sections": ld discards the other units' copies of a COMDAT
   group it already holds, so a `.text.<mangled name>` section discarded from an input is
   another unit's copy of the function (a C++ function defined in several units is one
   defined in a header: inline, ODR);
4. DWARF, where the defining unit has it: the subprogram's DW_AT_inline (declared inline),
   a method (DW_AT_object_pointer) defined where its class declares it, or a free function
   whose body is written in a header its unit includes (DW_AT_decl_file is not the unit's
   source file: GCC writes no DW_AT_inline for an inline function it never inlined, such as
   `std::abs(float)` from <cmath>; a non-inline function defined in a header would be a
   multiple definition in every unit but one, so a weak one there is inline);
5. a member of a class (the class shown to be one by the image's names: its vtable or
   typeinfo, a constructor, a const method, or the class used as a type in a parameter or
   template argument; a namespace never appears so). Without DWARF a method made weak by hand
   out of its class body (`__attribute__((weak)) void C::f() {}`) reads as an inline one:
   the image cannot tell them apart, and the report says so (ASSUMPTION).

A genuine C++ weak default (`__attribute__((weak)) void app::on_idle() {}` in its own .cpp)
has none of these: one copy, written in its unit's source file, not declared inline.

Class members are also never near misses: a method overrides nothing by name, a class is not a
namespace. The table is weaklink.analyze.symtable.GlobalSymbols.
"""
from __future__ import annotations

import re
from array import array
from collections import namedtuple
from functools import cached_property

from weaklink.analyze.cxxnames import NAME_TOKEN, CxxName, parse, special_kind
from weaklink.read import elfstructs as S

ASSUMED = "assumed defined in the class body"     # in the reasons that rest on ASSUMPTION
ASSUMPTION = ("a weak C++ method without DWARF is read as defined in its class body (vague "
              "linkage); a method made weak by hand outside its class reads the same")

# A constructor (C1-C3, CI1/CI2) or destructor (D0-D2) ends a nested name or precedes its
# template arguments; cv- or ref-qualified members start `_ZNK`, `_ZNV`, `_ZNR`, `_ZNO`.
_STRUCTOR = re.compile(rb"(?:C[123]|CI[12]|D[012])[EI]")
_QUALIFIED_MEMBER = (b"_ZNK", b"_ZNV", b"_ZNR", b"_ZNO")
# A nested name whose scope starts with one of the standard substitutions that stand for a
# class template specialization (Itanium C++ ABI 5.1.8: Ss std::basic_string<char, ...>, Si/So/Sd
# std::basic_istream/ostream/iostream<char, ...>): a member of an implicitly instantiated class
# template. The demangler prints the scope as `std::string`, which shows no template argument.
_STD_SPECIALIZATION_SCOPE = re.compile(r"_ZN[rVKRO]*S[sido]")


class FunctionFacts(namedtuple("FunctionFacts", "declared_inline member in_class")):
    """What DWARF says of a function definition: declared inline (DW_AT_inline 2 or 3 on it
    or its abstract origin), a class member (DW_AT_object_pointer, or declared in a class),
    defined where declared (a specification without DW_AT_decl_* of its own: for a member,
    in its class body). weaklink.read.dwarf.scan reads them; whether the body
    is written in a header is asked separately (`function_in_header`: it costs a
    line-program header)."""

    __slots__ = ()


def _parse(raw: str, text: str) -> CxxName | None:
    """The parts of a C++ function or variable name; None for C names, special names, and
    names the demangler could not decode (it returns them as they are)."""
    if not raw.startswith("_Z") or special_kind(raw) or text == raw:
        return None
    return parse(text)


class CxxFacts:
    """Lazily computed C++ facts of one table. `dwarf`: an object with
    `function_facts(address) -> FunctionFacts | None` and `function_in_header(address) ->
    bool | None` (weaklink.analyze.attribution), or None."""

    def __init__(self, table, dwarf=None, comdat=None):
        self.table = table
        self.dwarf = dwarf
        self.comdat = comdat          # (Symbol) -> bool | None: in a COMDAT group of its input
        self._parsed: dict[int, CxxName | None] = {}
        self._raw: dict[int, str] = {}
        self._dwarf_facts: dict[int, FunctionFacts | None] = {}

    # -- names --------------------------------------------------------------------------
    def raw(self, row: int) -> str:
        if row not in self._raw:
            self._raw[row] = self.table.names([row])[0]
        return self._raw[row]

    def prefetch(self, rows: list[int]) -> None:
        """Parse the names of many mangled rows at once (one demangled_names call)."""
        rows = [r for r in rows if r not in self._parsed]
        if not rows:
            return
        for r, raw, text in zip(rows, self.table.names(rows), self.table.demangled_names(rows)):
            self._raw[r] = raw
            self._parsed[r] = _parse(raw, text)

    def parsed(self, row: int) -> CxxName | None:
        """The parts of a mangled row's demangled name (None: not a C++ name, or special)."""
        if row not in self._parsed:
            raw = self.raw(row)
            text = self.table.demangled_names([row])[0] if raw.startswith("_Z") else raw
            self._parsed[row] = _parse(raw, text)
        return self._parsed[row]

    @cached_property
    def class_scopes(self) -> frozenset[str]:
        """Names the image shows to be classes (see the module docstring, point 4)."""
        table = self.table
        text = table.demangled_text().decode("utf-8", "replace")
        out = set(NAME_TOKEN.findall(text))        # complete names: types, and entities
        rows = table.mangled_rows
        raw = table.raw_names(rows)
        hits = [r for r, n in zip(rows, raw)
                if n.startswith(_QUALIFIED_MEMBER) or _STRUCTOR.search(n)]
        self.prefetch(hits)
        for r in hits:
            name = self.parsed(r)
            if name is not None and (name.structor or name.quals):
                out.add(name.scope)
        return frozenset(out)

    @cached_property
    def discarded_sections(self) -> frozenset[str]:
        """Names of the input sections the map lists as discarded (point 3)."""
        link_map = getattr(self.dwarf, "link_map", None)
        if link_map is None:
            return frozenset()
        return frozenset(d.section for d in link_map.discarded)

    @cached_property
    def virtual_addresses(self) -> frozenset[int]:
        """Every word of every vtable in the image, Thumb bit cleared: the addresses of the
        virtual methods (and of the offsets and typeinfo the vtables also hold)."""
        table, image = self.table, self.table.image
        rows = [r for r, n in zip(table.mangled_rows, table.raw_names(table.mangled_rows))
                if n.startswith(b"_ZTV")]
        out: set[int] = set()
        for r in rows:
            data = image.initial_bytes(image.symbol(int(table.cols.index[r])))
            if data:
                words = array("I", data[:len(data) // 4 * 4])
                out.update(w & ~1 for w in words)
        return frozenset(out)

    def _function_dwarf(self, row: int) -> FunctionFacts | None:
        if self.dwarf is None or self.table.cols.type[row] != S.STT_FUNC:
            return None
        if row not in self._dwarf_facts:
            self._dwarf_facts[row] = self.dwarf.function_facts(int(self.table.cols.address[row]))
        return self._dwarf_facts[row]

    # -- facts --------------------------------------------------------------------------
    def is_virtual(self, row: int) -> bool:
        c = self.table.cols
        return c.type[row] == S.STT_FUNC and int(c.address[row]) in self.virtual_addresses

    def is_member(self, row: int) -> bool:
        """A class member (method or static data member), by the evidence of points 2-4."""
        name = self.parsed(row)
        if name is None:
            return False
        if name.structor or (name.params is not None and name.quals) or self.is_virtual(row):
            return True
        facts = self._function_dwarf(row)
        if facts is not None and facts.member:
            return True
        return bool(name.scope) and name.scope in self.class_scopes

    def vague_linkage(self, row: int) -> str | None:
        """Why a weak definition is C++ vague linkage, or None when it is (as far as the
        image shows) a weak default."""
        raw = self.raw(row)
        if not raw.startswith("_Z"):
            return None
        kind = special_kind(raw)
        if kind is not None:
            return kind
        name = self.parsed(row)
        if name is None:
            return None
        if name.template:
            return "template instantiation"
        if _STD_SPECIALIZATION_SCOPE.match(raw):
            return "member of a standard class template specialization (template instantiation)"
        if name.structor:
            return "constructor or destructor"
        if self.is_virtual(row):
            return "virtual method defined in its class (a vtable entry)"
        if self.comdat is not None and self.comdat(
                self.table.image.symbol(int(self.table.cols.index[row]))):
            return "in a COMDAT group of its input object (vague linkage)"
        if name.params is not None and f".text.{raw}" in self.discarded_sections:
            return "inline function: the map discards another unit's copy (COMDAT)"
        facts = self._function_dwarf(row)
        if facts is not None:                          # DWARF decides where it speaks
            if facts.declared_inline:
                return "declared inline (DWARF)"
            if facts.member and facts.in_class:
                return "method defined in its class body (DWARF)"
            if not facts.member and self.dwarf.function_in_header(
                    int(self.table.cols.address[row])):
                return "inline function defined in a header (DWARF: its body is not in its unit's file)"
            return None
        if name.scope and name.scope in self.class_scopes:
            what = "method" if name.params is not None else "static data member"
            return f"{what} of class {name.scope} ({ASSUMED})"
        return None

    def pairable(self, row: int, weak: bool) -> bool:
        """Can this C++ row be one side of a near miss: a free function or variable, not a
        template, and (the weak side) not vague linkage?"""
        name = self.parsed(row)
        if name is None or name.template or self.is_member(row):
            return False
        return not weak or self.vague_linkage(row) is None

    def signature(self, row: int) -> tuple:
        """The key two C++ rows must share to pair: parameters and qualifiers (a variable
        has none)."""
        name = self.parsed(row)
        return name.signature if name is not None else (None, "")

    def override_mismatch(self, weak_row: int, strong_row: int) -> str | None:
        """Why a weak definition and a strong one with the same unqualified name are a
        plausible override that cannot bind (a C name against a C++ one, or two namespaces),
        or None when they are not a near miss: vague linkage, a class member on either side,
        a template or special name, or two different function signatures."""
        if self.vague_linkage(weak_row) is not None:
            return None
        names = []
        for row in (weak_row, strong_row):
            raw = self.raw(row)
            if not raw.startswith("_Z"):
                names.append(None)
                continue
            name = self.parsed(row)
            if name is None or name.template or self.is_member(row):
                return None
            names.append(name)
        weak, strong = names
        if weak is None or strong is None:
            c_side = self.raw(weak_row if weak is None else strong_row)
            return f'extern "C" mismatch: {c_side} has C linkage, the other C++ linkage'
        if weak.params is not None and strong.params is not None \
                and weak.signature != strong.signature:
            return None
        return (f"C++ namespace mismatch: {weak.scope or 'the global namespace'} and "
                f"{strong.scope or 'the global namespace'}")

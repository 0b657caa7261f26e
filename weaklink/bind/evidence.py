"""Does the backend read a variable? Decided from the evidence the inputs hold, strongest first.

A binding's pointer rule names the code that reads the pointer (`reader`, a glob such as
`*EthosUBackend*` over source files, objects and function names). Whether that code reads the
variable decides the base: a backend that never reads it passes 0/0 whatever the runner
defines. The sources, in the order they are asked:

1. relocations in the image itself (linked with --emit-relocs): every use of a global's
   address by code has one, so the reader's code having none against the name means it does
   not read it;
2. relocations in the link inputs (objects or archives given to `check`), by the same rule,
   over the inputs whose names match the reader;
3. DWARF (-g, DwarfReferences): a unit that uses a variable has a DIE for it; the answer
   counts only when a unit matching the reader is described at all (a Release image's DWARF
   is often only the C library's, which says nothing about the backend);
4. the code of the image (weaklink.bind.coderefs): a literal pool word, a GOT slot or a
   MOVW/MOVT pair holding the variable's address in the reader's code. Found, it is evidence
   that the code reads it; not found, it is no evidence either way.

With no evidence either way the answer is unknown (`reads` None): the caller assumes the
documented behaviour, that the backend reads it, and says so.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from functools import cache, cached_property


from npu.records import Record
from weaklink.bind.coderefs import CodeMap, find_refs
from weaklink.demangle import demangle_many, unqualified
from weaklink.errors import InputError, read_input
from weaklink.read import elfstructs as S
from weaklink.read.archive import Archive, is_archive
from weaklink.read.dwarf import Dwarf, dwarf_of
from weaklink.read.image import Image
from weaklink.read.objfile import ObjectFile


@dataclass(frozen=True)
class ReadEvidence(Record):
    reads: bool | None        # None: no evidence either way
    source: str               # relocations | link inputs | dwarf | code | none
    detail: str               # what decided, in one sentence


def matches(glob: str, name: str | None) -> bool:
    """Does a unit (a path, an object, an archive member, a function name) match the glob?"""
    if not name:
        return False
    return fnmatch.fnmatchcase(name, glob) or fnmatch.fnmatchcase(os.path.basename(name), glob)


class DwarfReferences:
    """Who mentions a symbol, from DWARF: the compilation units DWARF describes (`units`) and,
    called with a variable's name, the units that declare or define it (read when asked for).
    In DWARF (-g), a unit that declares or defines a variable has a DW_TAG_variable for it (a
    block-scope `extern` gives a declaration DIE, a definition a full one). ld's --cref table
    cannot answer this: a file that defines a name weakly after another file defined it is not
    listed at all, even when it also reads it (ld 2.40, measured on the fixtures)."""

    def __init__(self, dwarf: Dwarf):
        self._dwarf = dwarf

    @cached_property
    def units(self) -> tuple[str, ...]:
        return tuple(self._dwarf.unit_names())

    @cache
    def _mentions(self, name: str) -> list[str]:
        return self._dwarf.variable_units(name)

    def __call__(self, name: str) -> list[str]:
        direct = self._mentions(name)
        return direct + [u for u in self._mentions(unqualified(name)) if u not in direct]


class ReaderEvidence:
    """Evidence about who reads a variable in one image; `link_inputs` the paths of objects
    and archives of the link. Call it with a symbol name and the reader glob. The image's DWARF
    is read when a question needs it; corrupt DWARF is one InputError (DwarfError) then."""

    def __init__(self, image: Image, *, link_inputs=()):
        self.image = image
        self.link_inputs = tuple(str(p) for p in link_inputs)
        self._cache: dict[tuple[str, str], ReadEvidence] = {}

    def __call__(self, name: str, reader: str) -> ReadEvidence:
        key = (name, reader)
        if key not in self._cache:
            self._cache[key] = self._decide(name, reader)
        return self._cache[key]

    def _decide(self, name: str, reader: str) -> ReadEvidence:
        for source in (self._relocations, self._link_inputs, self._dwarf, self._code):
            found = source(name, reader)
            if found is not None:
                return found
        return ReadEvidence(None, "none", f"no relocation, DWARF or code of the image shows "
                            f"whether the {reader} code reads `{name}`")

    @cached_property
    def dwarf(self) -> DwarfReferences | None:
        """None when the image has no DWARF (then it cannot tell)."""
        dwarf = dwarf_of(self.image.elf)
        return DwarfReferences(dwarf) if dwarf.present else None

    # -- what the image says about its code -------------------------------------------------
    @cached_property
    def code(self) -> CodeMap:
        return CodeMap(self.image)

    def _reader_spans(self, reader: str):
        """The spans of the reader's code: by source file, else by function name."""
        code = self.code
        spans = [s for s in code.spans if matches(reader, s.unit)]
        if spans:
            return spans, "source file"

        functions = [(s, code.function_at(s.start)) for s in code.spans]
        names = demangle_many(fn.name for _, fn in functions if fn is not None)
        return [s for s, fn in functions if fn is not None and matches(reader, names[fn.name])], "function name"

    def _units(self, spans) -> str:
        names = sorted({s.unit for s in spans if s.unit})
        return ", ".join(names) if names else "functions matching the reader"

    # -- 1. relocations kept in the image (--emit-relocs) ---------------------------------------
    @cached_property
    def _image_relocations(self) -> list[tuple[int, str]] | None:
        """(place, symbol name) of every relocation applying to an allocated section; None
        when the image kept none."""
        elf = self.image.elf
        out, any_rel = [], False
        for i, sh in enumerate(elf.shdrs):
            if sh.sh_type not in (S.SHT_REL, S.SHT_RELA) or sh.sh_link != elf.symtab_index:
                continue
            if sh.sh_info >= len(elf.shdrs) or not elf.shdrs[sh.sh_info].sh_flags & S.SHF_ALLOC:
                continue
            any_rel = True
            entries = elf.relocation_entries(i)     # in the file: ElfFile checked its bounds
            syms = [e[1] >> 8 for e in entries]
            nsym = elf.symtab_span[1]
            if syms and max(syms) >= nsym:
                raise InputError(elf.name, f"relocation section {i} names symbol "
                                 f"{max(syms)}, past the symbol table ({nsym})",
                                 elf.shdr_offset(i))
            out += zip([e[0] for e in entries], self.image.names_of(syms))
        return out if any_rel else None

    def _relocations(self, name: str, reader: str) -> ReadEvidence | None:
        rels = self._image_relocations
        if rels is None:
            return None
        spans, how = self._reader_spans(reader)
        if not spans:
            return None
        sites = [p for p, n in rels if n == name and any(s.start <= p < s.end for s in spans)]
        if sites:
            fn = self.code.function_name(sites[0])
            return ReadEvidence(True, "relocations", f"relocation against `{name}` at "
                                f"{sites[0]:#x} in {self.code.unit_at(sites[0]) or how} code"
                                + (f" ({fn})" if fn else "") + " (image linked with --emit-relocs)")
        return ReadEvidence(False, "relocations", f"no relocation against `{name}` in the code "
                            f"of {self._units(spans)} (image linked with --emit-relocs)")

    # -- 2. relocations in the link inputs -------------------------------------------------------
    @cached_property
    def _objects(self) -> list[ObjectFile]:
        out = []
        for path in self.link_inputs:
            data = read_input(path, what="link input")
            if is_archive(data):
                ar = Archive(data, path)
                out += [ar.object(m.offset) for m in ar.members()]
            else:
                out.append(ObjectFile.from_bytes(data, path))
        return out

    def _link_inputs(self, name: str, reader: str) -> ReadEvidence | None:
        objs = [o for o in self._objects if matches(reader, o.name)]
        if not objs:
            return None
        users = [o.name for o in objs if name in o.relocated_names()]
        if users:
            return ReadEvidence(True, "link inputs", f"relocation against `{name}` in "
                                f"{', '.join(users)}")
        return ReadEvidence(False, "link inputs", f"no relocation against `{name}` in "
                            f"{', '.join(o.name for o in objs)}")

    # -- 3. DWARF ---------------------------------------------------------------------------------
    def _dwarf(self, name: str, reader: str) -> ReadEvidence | None:
        d = self.dwarf
        if d is None:
            return None
        units = [u for u in d.units if matches(reader, u)]
        if not units:
            return None
        users = [u for u in d(name) if matches(reader, u)]
        if users:
            return ReadEvidence(True, "dwarf", f"DWARF of {', '.join(users)} describes `{name}`")
        return ReadEvidence(False, "dwarf",
                            f"DWARF of {', '.join(units)} does not mention `{name}`")

    # -- 4. the code ------------------------------------------------------------------------------
    def _code(self, name: str, reader: str) -> ReadEvidence | None:
        syms = [s for s in self.image.lookup(name) if s.binding != S.STB_LOCAL]
        if not syms:
            return None
        spans, _ = self._reader_spans(reader)
        if not spans:
            return None
        refs = find_refs(self.code, syms[0].address, spans)
        if not refs:
            return None
        return ReadEvidence(True, "code", f"`{name}`'s address {refs[0].describe()}")


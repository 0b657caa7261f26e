"""The lld link driver: ld.lld 16's input processing (lld/ELF/Driver.cpp LinkerDriver::link),
as a flat list of passes.

  roots       -u / EXTERN enter as undefined before any file, so they extract wherever the
              archive sits
  inputs      left to right: objects are parsed (definitions and commons first, then
              references, ObjFile::initializeSymbols); archive members and --start-lib objects
              become lazy symbols, one lazy file per member, in member order; an extraction
              parses the member at once, its own extractions first (depth first, on an
              explicit stack: chains through many archives go thousands deep); --whole-archive
              loads every member
  entry       -u again, then the entry symbol extracts its lazy member ("--entry")
  postParse   COMDAT losers and duplicate definitions, after every file is read; a winning
              definition in a discarded COMDAT section becomes undefined
  stop        duplicates are reported and the link stops there (measured: no undefined
              symbol errors, no --why-extract file)
  scripts     --defsym and script assignments, then PROVIDE (LinkerScript::declareSymbols)
  reserved    the names lld defines itself when referenced (lld/linker_defined.py)
  report      backward references, --why-extract, then undefined symbols by relocation
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from weaklink.errors import InputError, UsageError
from weaklink.read.archive import Archive
from weaklink.read.elfstructs import ELF_MAGIC, SHN_ABS as ABS
from weaklink.read.objfile import K_COMMON, K_UNDEF, ObjectFile
from weaklink.resolve.cmdline import InputItem, flat
from weaklink.resolve.comdat import discard_copies
from weaklink.resolve.inputs import LLD_WORDING, InputFiles
from weaklink.resolve.lld import rules as R
from weaklink.resolve.lld.cmdline import LldOptions
from weaklink.resolve.lld.gc import LldGc
from weaklink.resolve.lld.linker_defined import lld_reserve
from weaklink.resolve.script import parse_script


@dataclass
class LoadedFile:
    """A parsed (non-lazy) input: an object, a whole-archive member or an extracted one."""
    name: str               # as lld's toString(file) prints it: a.o, lib.a(m.o)
    obj: ObjectFile
    group: int              # --warn-backrefs group id
    short: str              # file->getName(): the member name for archive members
    archive: str | None     # archive path, for ">>> ... in archive lib.a"


class LazyFile:
    """An archive member or --start-lib object whose definitions are lazy symbols. Archive
    members stay unread (not even their header) until extracted or named."""
    __slots__ = ("group", "archive", "path", "offset", "obj", "extracted")

    def __init__(self, group: int, archive: Archive | None, path: str, offset: int = 0,
                 obj: ObjectFile | None = None):
        self.group, self.archive, self.path, self.offset = group, archive, path, offset
        self.obj, self.extracted = obj, False

    @property
    def short(self) -> str:
        """file->getName(): the member's name, or the object's path."""
        return self.archive.member(self.offset).name if self.archive is not None else self.path

    @property
    def name(self) -> str:
        """toString(file): lib.a(m.o) (the member's base name), or the object's path."""
        if self.archive is None:
            return self.path
        return f"{self.path}({os.path.basename(self.short)})"

    def load(self) -> ObjectFile:
        return self.obj if self.obj is not None else self.archive.object(self.offset)


@dataclass
class LldState:
    opts: LldOptions
    table: R.SymbolTable
    files: list = field(default_factory=list)          # LoadedFile, in parse order
    lazies: list = field(default_factory=list)         # LazyFile
    extracted: list = field(default_factory=list)      # (reference, member name, symbol)
    kept_groups: dict = field(default_factory=dict)    # COMDAT signature -> file id
    dead: dict = field(default_factory=dict)           # file id -> discarded section indices
    duplicates: list = field(default_factory=list)     # (name, winner fid, fid, shndx, value)
    backrefs: dict = field(default_factory=dict)       # name -> (ref fid, lazy id)
    entry: str | None = None
    roots: tuple = ()
    stopped: bool = False                              # duplicates ended the link
    gc: object = None                                  # LldGc when --gc-sections
    swap: dict = field(default_factory=dict)           # --wrap: name a reference uses -> name it
                                                       # resolves to (foo -> __wrap_foo, ...)
    linker_defined: dict = field(default_factory=dict)  # name -> output section (or None)
    reserved_errors: list = field(default_factory=list)  # (symbol, file, message)


class LldLinker:
    def __init__(self, opts: LldOptions, cwd: str | None = None):
        self.s = LldState(opts, R.SymbolTable(self._extract))
        self.s.table.on_defined_lazy = lambda sym: self.s.backrefs.pop(sym.name, None)
        self.inputs = InputFiles(opts.ld.search_dirs, cwd, LLD_WORDING)
        self._fs = self.inputs.fs
        self.next_group = 0
        self.in_group = False
        self.parsing = False            # a parse is under way: an extraction waits for it
        self.pending = None             # the extraction the last reference asked for

    # -- passes, in the order lld runs them ------------------------------------------------------
    def run(self) -> LldState:
        ld = self.s.opts.ld
        scripts = [self._script(p) for p in ld.scripts]
        self._enter_roots(scripts)
        self._walk(ld.inputs)
        self._handle_entry()
        self._add_wrapped()
        self._post_parse()
        if self.s.duplicates and not ld.muldefs:
            self.s.stopped = True
            return self.s
        self._declare_symbols(ld.inputs, scripts)
        self.s.reserved_errors = lld_reserve(self.s, scripts)
        if ld.gc_sections:                       # markLive: after the symbols are final
            self.s.gc = LldGc(self.s, scripts).run()
        return self.s

    def _enter_roots(self, scripts):
        ld, table = self.s.opts.ld, self.s.table
        entry = ld.entry or next((sc.entry for sc in reversed(scripts) if sc.entry), None)
        self.s.entry = entry or "_start"
        roots = [*ld.undefined, *(s for sc in scripts for s in sc.extern)]
        for name in roots:                       # Driver.cpp: "Handle -u before input files"
            sym = table.get(name)
            if sym.kind == R.NEW:
                sym.kind = R.UNDEF
            sym.referenced = True
        self.s.roots = tuple(roots)

    def _handle_entry(self):
        """handleUndefined: -u names and the entry symbol extract a lazy member that is still
        lazy (only a weakly bound one can be), recorded as "--undefined" / "--entry"."""
        table = self.s.table
        for name, why in [*((n, "--undefined") for n in self.s.roots), (self.s.entry, "--entry")]:
            sym = table.get(name) if name in table.syms or name in table.pending else None
            if sym is not None and sym.kind == R.LAZY:
                self._extract(sym, sym.lazy, why, -1, True)

    def _add_wrapped(self):
        """addWrappedSymbols: lld resolves every name as written, then for each --wrap=foo
        whose name is in the table adds __wrap_foo (with foo's binding: a weakly bound foo
        does not extract a lazy __wrap_foo, measured) and, if __real_foo is there, foo again;
        references to foo then land on __wrap_foo and references to __real_foo on foo."""
        table = self.s.table
        for name in self.s.opts.wrap:
            if name not in table.syms and name not in table.pending:
                continue
            sym = table.get(name)
            if sym.kind == R.NEW:
                continue
            wrap, real = "__wrap_" + name, "__real_" + name
            table.unused_undefined(table.get(wrap), sym.weak)
            if real in table.syms or real in table.pending:
                table.unused_undefined(sym, sym.weak)    # foo keeps its binding (measured)
            self.s.swap[name] = wrap
            self.s.swap[real] = name

    # -- inputs -----------------------------------------------------------------------------------
    def _walk(self, items):
        """Inputs left to right; --defsym and -T assignments wait for declareSymbols."""
        in_lib = 0
        for item in items:
            if item.kind not in ("file", "library", "group"):
                continue
            block = item.lazy if item.kind != "group" else 0
            if block != in_lib:                  # a --start-lib block shares one group id
                if in_lib:
                    self.next_group += 1
                in_lib, self.in_group = block, bool(block)
            if item.kind == "group":            # only --warn-backrefs sees groups: one group id
                self.in_group = True
                self._walk(item.children)
                self.in_group = False
                self.next_group += 1
            elif item.kind in ("file", "library"):
                self._open(item)
        if in_lib:
            self.in_group = False
            self.next_group += 1

    def _group_id(self) -> int:
        gid = self.next_group
        if not self.in_group:
            self.next_group += 1
        return gid

    def _open(self, item: InputItem):
        path, ar, data = self.inputs.open(item)
        if ar is None:
            self._open_nonarchive(data, path, item)
            return
        if item.whole:
            for m in ar.members():
                self.load(ar.object(m.offset), self._group_id(), m.name, path)
            return
        self._lazy_archive(ar, path)

    def _open_nonarchive(self, data: bytes, path: str, item: InputItem):
        if data[:4] != ELF_MAGIC:
            if b"\0" in data[:4096]:
                raise InputError(path, "unknown file type", 0)
            sc = _no_inputs(parse_script(data.decode("utf-8", "replace"), path,  # implicit
                                         self.s.opts.ld.search_dirs, self._fs))
            self.inputs.scripts[path] = sc
            for name in sc.extern:
                sym = self.s.table.get(name)
                sym.kind, sym.referenced = sym.kind or R.UNDEF, True
            return
        obj = ObjectFile.from_bytes(data, path)
        if item.lazy:                            # --start-lib: one lazy file per object
            lid = len(self.s.lazies)
            self.s.lazies.append(LazyFile(self._group_id(), None, path, obj=obj))
            lazy, get = self.s.table.lazy, self.s.table.get
            for name, kind, *_ in obj.rows:
                if kind != K_UNDEF and lazy(get(name), lid):
                    break                        # ObjFile::parseLazy stops once extracted
        else:
            self.load(obj, self._group_id(), path, None)

    def _lazy_archive(self, ar: Archive, path: str):
        """Every member becomes a lazy file in member order, all with one group id. Its lazy
        names are its defined globals in symbol-table order: GNU ar's index lists exactly
        those, member by member, so it is used when present (members are parsed only when
        extracted); without an index (lld does not need one) every member is read."""
        if ar.has_index:
            entries = list(zip(ar.armap_offsets, ar.armap_names))
            if any(a[0] > b[0] for a, b in zip(entries, entries[1:])):
                entries.sort(key=lambda e: e[0])          # stable: symbol order kept
        else:
            entries = [(m.offset, r[0]) for m in ar.members()
                       for r in ar.object(m.offset).rows if r[1] != K_UNDEF]
        gid = self._group_id()
        lazies, table = self.s.lazies, self.s.table
        syms, pending, lazy = table.syms, table.pending, table.lazy
        prev, lid, done = -1, -1, False
        for off, name in entries:
            if off != prev:                      # the next member: a new lazy file
                prev, done, lid = off, False, len(lazies)
                lazies.append(LazyFile(gid, ar, path, off))
            elif done:
                continue
            sym = syms.get(name)
            if sym is None:                      # the common case: a new name, now lazy
                pending.setdefault(name, lid)    # (5): the first lazy definition stays
            elif lazy(sym, lid):
                done = True                      # ObjFile::parseLazy stops once extracted

    def _extract(self, sym: R.Sym, lid: int, ref, backref_from: int, record_owner: bool):
        """Parse a lazy file now (during a parse: after the reference that asked, before the
        next one); record it for --why-extract after its own extractions. `ref` is the
        referencing file id, an option name, or None (<internal>). lld records the extracted
        file when a lazy symbol met a reference, but the symbol's owner after the extraction
        when a reference (or -u, --entry) met a lazy symbol (`record_owner`)."""
        lf = self.s.lazies[lid]
        if lf.extracted:
            return
        lf.extracted = True
        job = self._extraction(lid, sym, ref, backref_from, record_owner)
        if self.parsing:
            self.pending = job
        else:
            self._run(job)

    def _run(self, job) -> None:
        """Run a parse and the extractions it causes, depth first: each parse stops after a
        reference that extracts, until that member (with its own extractions) is parsed."""
        self.parsing, stack = True, [job]
        try:
            while stack:
                if next(stack[-1], None) is None:
                    stack.pop()
                else:
                    stack.append(self.pending)
                    self.pending = None
        finally:
            self.parsing = False

    def _extraction(self, lid: int, sym: R.Sym, ref, backref_from: int, record_owner: bool):
        lf = self.s.lazies[lid]
        yield from self._parse(lf.load(), lf.group, lf.short, lf.path if lf.archive is not None else None)
        member = lf.name
        if record_owner and sym.kind in (R.DEFINED, R.COMMON) and sym.file >= 0:
            member = self.s.files[sym.file].name
        self.s.extracted.append((ref, member, sym.name))
        if backref_from >= 0 and self.s.opts.warn_backrefs and not sym.weak \
                and lf.group < self.s.files[backref_from].group:
            self.s.backrefs.setdefault(sym.name, (backref_from, lid))

    def load(self, obj: ObjectFile, group: int, short: str, archive: str | None) -> int:
        """Parse an object, with the extractions it causes; its file id."""
        fid = len(self.s.files)
        self._run(self._parse(obj, group, short, archive))
        return fid

    def _parse(self, obj: ObjectFile, group: int, short: str, archive: str | None):
        """ObjFile::parse: COMDAT groups, then definitions and commons, then references (so
        that a reference never extracts a member for a name this file defines). Yields after
        each reference that extracts a member (`pending`)."""
        s = self.s
        fid = len(s.files)
        name = obj.name if archive is None else f"{archive}({os.path.basename(short)})"
        s.files.append(LoadedFile(name, obj, group, short, archive))
        discard_copies(obj, fid, s.kept_groups, s.dead)
        table = s.table
        syms, get = table.syms, table.get
        common, defined = table.common, table.defined
        refs = []
        for row in obj.rows:
            name, kind, weak, size, shndx, value = row
            if kind == K_UNDEF:
                refs.append(row)
            elif kind == K_COMMON:
                common(syms.get(name) or get(name), fid, size)
            else:
                defined(syms.get(name) or get(name), fid, weak, size, shndx, value)
        undefined = table.undefined
        for name, _, weak, *_ in refs:
            undefined(syms.get(name) or get(name), fid, weak)
            if self.pending is not None:
                yield True

    # -- after all input ------------------------------------------------------------------------------
    def _post_parse(self):
        """ObjFile::postParse for every file in parse order: duplicates are two non-weak
        definitions where the winner is still a definition from a file; a winning definition
        in a discarded COMDAT section becomes an undefined symbol (reported as "relocation
        refers to a symbol in a discarded section")."""
        s, syms = self.s, self.s.table.syms
        demote = []
        for fid, f in enumerate(s.files):
            dead = s.dead.get(fid, ())
            for name, kind, weak, size, shndx, value in f.obj.rows:
                if kind == K_UNDEF or kind == K_COMMON:
                    continue
                sym = syms[name]
                if sym.kind != R.DEFINED or sym.file < 0:
                    continue
                if shndx in dead:
                    if sym.file == fid:
                        demote.append((sym, fid))
                    continue
                if sym.file == fid or sym.weak or weak:
                    continue
                s.duplicates.append((name, sym.file, fid, shndx, value))
        for sym, fid in demote:
            sym.kind, sym.discarded = R.UNDEF, fid
        # reportDuplicate looks at the final symbol: none if it was demoted above; two
        # absolute copies with the same non-zero value are fine (GNU ld compatibility)
        s.duplicates = [d for d in s.duplicates if syms[d[0]].kind == R.DEFINED and not (
            syms[d[0]].absolute and d[3] == ABS and d[4] and d[4] == syms[d[0]].value)]

    def _script(self, path: str):
        return _no_inputs(self.inputs.script(path))

    def _declare_symbols(self, items, scripts):
        """--defsym and script assignments in command-line order, then PROVIDE for names that
        exist and are not defined (a lazy name counts as not defined)."""
        table, swap = self.s.table, self.s.swap
        for item in flat(items):
            if item.kind == "defsym":
                values = {item.arg: item.value}
            elif item.kind == "script":
                sc = self._script(item.arg)
                values = {n: sc.values.get(n) for n in sc.assigned}
            else:
                continue
            for name, value in values.items():
                # declared before --wrap swaps the names, assigned after (measured: with
                # --wrap=foo, --defsym foo=V makes foo absolute 0 and __wrap_foo V)
                target = swap.get(name, name)
                if target != name:
                    table.assign(table.get(name), 0)
                table.assign(table.get(target), value or 0, evaluated=value is not None)
        traced = set(self.s.opts.ld.trace)       # -y puts a placeholder in lld's table
        for sc in scripts:                       # a lazy name counts as not defined
            for name in sc.provide:
                name = swap.get(name, name)
                sym = table.syms.get(name)
                if name in table.pending or (sym is None and name in traced) or (
                        sym is not None and sym.kind in (R.NEW, R.UNDEF, R.LAZY)):
                    table.assign(table.get(name), 0, evaluated=False)


def _no_inputs(sc):
    if sc.inputs:
        raise UsageError(f"{sc.name}: INPUT/GROUP in a linker script is not modelled for lld")
    return sc

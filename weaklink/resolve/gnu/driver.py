"""The link driver: GNU ld's input processing, left to right (ld/ldlang.c open_input_bfds).

  roots     -u, -e / ENTRY, --require-defined, EXTERN enter as undefined before any file
  objects   loaded unconditionally, symbols resolved in symbol-table order (rules.py)
  archives  armap passes until a pass adds no undefined symbol (elf_link_add_archive_symbols)
  groups    rescan the group's archives (and re-evaluate its assignments) until ld's
            undefined list stops growing
  --defsym  assigned at its position, like a -T script's assignments; a PROVIDE fires where
            its script sits if the name is undefined then, else at the end
  linker    the names ld defines on its own once every input is open (gnu/linker_defined.py:
            `_GLOBAL_OFFSET_TABLE_` when an object needs a GOT, `__start_SEC`/`__stop_SEC`)
  end       assignments evaluated again (they win); outcome.py words the diagnostics
"""
from __future__ import annotations

from weaklink.errors import InputError
from weaklink.read.archive import Archive
from weaklink.read.elfstructs import ELF_MAGIC
from weaklink.read.objfile import K_COMMON, K_UNDEF, ObjectFile
from weaklink.resolve.gnu import linker_defined
from weaklink.resolve.gnu import rules as R
from weaklink.resolve.cmdline import InputItem, LinkOptions, flat
from weaklink.resolve.comdat import discard_copies
from weaklink.resolve.gnu.default_script import default_script
from weaklink.resolve.inputs import GNU_WORDING, InputFiles
from weaklink.resolve.script import ScriptSymbols, find_file, parse_script
from weaklink.resolve.wrap import Wrap


class ArchiveInstance:
    """One command-line occurrence of an archive (a group rescans the same instance)."""

    def __init__(self, archive: Archive, whole: bool):
        self.archive = archive
        self.whole = whole
        self.loaded: set = set()        # member offsets extracted from it
        self.last_scan_seq = -1


class LinkState:
    """Everything the driver decided, for result.py and explain.py to read."""

    def __init__(self, opts: LinkOptions, table: R.SymbolTable, wrap: Wrap):
        self.opts = opts
        self.table = table
        self.wrap = wrap
        self.files: list = []                  # display names, index = file id
        self.objects: list = []                # ObjectFile per file id
        self.dead: dict = {}                   # file id -> discarded section indices
        self.extracted: list = []              # (member file id, ref file id, symbol)
        self.instances: list = []              # ArchiveInstance, in scan order
        self.kept_groups: dict = {}            # COMDAT signature -> file id
        self.roots: tuple = ()
        self.entry: str | None = None
        self.provide: tuple = ()
        self.provided: set = set()             # PROVIDEs that have fired
        self.collected: dict = {}              # file id -> sections --gc-sections drops
        self.default: ScriptSymbols | None = None   # ld's built-in script (no -T)
        self.scripts: list = []                # every script read, -T ones first
        self.assigned_by: dict = {}            # name -> ("script"|"absolute", value)
        self.gc_removed: list = []             # (file id, section) as --print-gc-sections
        self.linker_defined: dict = {}         # name -> (owner file id, section)

    def ignored_sections(self, fid: int) -> frozenset:
        """Sections of a file whose relocations ld never processes: discarded COMDAT
        copies and, with --gc-sections, collected sections."""
        dead = self.dead.get(fid, frozenset())
        gone = self.collected.get(fid)
        return dead | gone if gone else dead


class Linker:
    def __init__(self, opts: LinkOptions, watch: frozenset[str] = frozenset(),
                 cwd: str | None = None):
        self.s = LinkState(opts, R.SymbolTable(opts.muldefs, watch, opts.plugin),
                           wrap=Wrap(opts.wrap))
        self.inputs = InputFiles(opts.search_dirs, cwd, GNU_WORDING)
        self._fs = self.inputs.fs
        self._script = self.inputs.script

    # -- passes, in the order ld runs them -----------------------------------------------------
    def run(self) -> LinkState:
        self._enter_roots()                       # ldlang.c lang_place_undefineds
        self._walk(self.s.opts.inputs)            # open_input_bfds, left to right
        linker_defined.define_got(self.s)         # ldemul_after_open: check_relocs, the GOT
        linker_defined.define_tls_base(self.s)
        if self.s.default is not None:            # ld parses its built-in script last
            self._apply_script(self.s.default)
        self._provide(self.s.provide)             # final pass: PROVIDE for undefined names
        for item in flat(self.s.opts.inputs):     # lang_do_assignments: --defsym wins at the end
            if item.kind in ("defsym", "script"):
                self._assign(item)
        if self.s.default is not None:
            self._apply_script(self.s.default)
        linker_defined.define_start_stop(self.s)
        return self.s

    def _assign(self, item: InputItem):
        """A --defsym, or a -T script's assignments, where the item sits."""
        if item.kind == "defsym":
            self.s.table.assign(self.s.table.get(item.arg), item.value)
            self.s.assigned_by[item.arg] = ("absolute", item.value)
        else:
            self._apply_script(self._script(item.arg))

    def _enter_roots(self):
        opts, table = self.s.opts, self.s.table
        scripts = [self._script(p) for p in opts.scripts]
        if not scripts:                           # no -T: ld's built-in script (ld.info -T)
            self.s.default = default_script(opts.emulation)
            scripts = [self.s.default]
        self.s.scripts = scripts
        entry = opts.entry or next((sc.entry for sc in reversed(scripts) if sc.entry), None)
        extern = [s for sc in scripts for s in sc.extern]
        roots = [*opts.undefined, *extern, *([entry] if entry else []), *opts.require_defined]
        for name in roots:
            table.root(table.get(name))
        self.s.roots, self.s.entry = tuple(roots), entry
        self.s.provide = tuple((p, sc.values.get(p)) for sc in scripts for p in sc.provide)

    def _apply_script(self, sc):
        """A script's assignments where it sits; a PROVIDE there only for a name that is
        undefined at that moment (ldexp.c exp_fold_tree_1, etree_provide)."""
        table, by = self.s.table, self.s.assigned_by
        for name in sc.assigned:
            table.assign(table.get(name), sc.values.get(name) or 0)
            by[name] = ("script", sc.values.get(name))
        self._provide([(p, sc.values.get(p)) for p in sc.provide])

    def _provide(self, pairs):
        """PROVIDE defines a name only while it is undefined; once it has fired it is a plain
        assignment from then on (ldexp.c turns etree_provide into etree_provided)."""
        table, fired = self.s.table, self.s.provided
        for name, value in pairs:
            sym = table.syms.get(name)
            if sym is None:
                continue
            if name in fired or sym.state in (R.UNDEF, R.UNDEFWEAK):
                fired.add(name)
                table.assign(sym, value or 0)
                self.s.assigned_by[name] = ("script", value)

    def _script_inputs(self, sc, rescan):
        """INPUT / GROUP of a script, read at the script's place (ld.info INPUT, GROUP)."""
        groups: dict[int, list] = {}
        items = []
        for f in sc.inputs:
            if f.name.startswith("-l"):
                item = InputItem("library", f.name[2:])
            else:
                found = find_file(f.name, self.s.opts.search_dirs, self._fs)
                item = InputItem("file", found or f.name)
            if f.group is None:
                items.append(item)
            else:
                if f.group not in groups:
                    groups[f.group] = []
                    items.append(f.group)
                groups[f.group].append(item)
        items = [InputItem("group", children=tuple(groups[i])) if isinstance(i, int) else i
                 for i in items]
        self._walk(items, rescan)

    def _walk(self, items, rescan: list | None = None):
        for item in items:
            if item.kind == "group":
                self._group(item.children)
            elif item.kind in ("defsym", "script"):   # -T: its assignments, at its place
                self._assign(item)
                if rescan is not None:
                    rescan.append(item)
                if item.kind == "script" and (sc := self._script(item.arg)).inputs:
                    self._script_inputs(sc, rescan)
            else:
                inst = self._open(item)
                if rescan is not None and inst is not None and not inst.whole:
                    rescan.append(inst)

    def _group(self, children):
        """ldlang.c open_input_bfds, lang_group_statement_enum: repeat while the undefined
        list grows; objects load once, archives (not whole-archive) are searched again and
        --defsym / -T script assignments inside the group are evaluated again (measured)."""
        table = self.s.table
        mark = table.undefs
        rescan: list = []                  # ArchiveInstance, or a defsym / script InputItem
        self._walk(children, rescan)
        while table.undefs != mark:
            mark = table.undefs
            for step in rescan:
                if isinstance(step, ArchiveInstance):
                    self._scan(step)
                else:
                    self._assign(step)

    # -- files ------------------------------------------------------------------------------------
    def _open(self, item: InputItem) -> ArchiveInstance | None:
        path, ar, data = self.inputs.open(item)
        if ar is None:
            self._open_nonarchive(data, path)
            return None
        inst = ArchiveInstance(ar, item.whole)
        self.s.instances.append(inst)
        if item.whole:                            # --whole-archive: every member, as objects;
            for m in ar.members():                # the map lists each as "(--whole-archive)"
                fid = self.load(ar.object(m.offset))
                self.s.extracted.append((fid, -1, "--whole-archive"))
        else:
            self._scan(inst)
        return inst

    def _open_nonarchive(self, data: bytes, path: str):
        if data[:4] == ELF_MAGIC:
            self.load(ObjectFile.from_bytes(data, path))
            return
        if b"\0" in data[:4096]:
            raise InputError(path, "file format not recognized", 0)
        # ld: "file format not recognized; treating as linker script" — read at its position
        sc = parse_script(data.decode("utf-8", "replace"), path, self.s.opts.search_dirs,
                          self._fs)
        names = [*sc.extern, *([sc.entry] if sc.entry and not self.s.opts.entry else [])]
        for name in names:
            self.s.table.root(self.s.table.get(name))
        self.s.provide += tuple((p, sc.values.get(p)) for p in sc.provide)
        self.s.scripts.append(sc)
        self._apply_script(sc)
        if sc.inputs:
            self._script_inputs(sc, None)

    def load(self, obj: ObjectFile) -> int:
        """Add one object's global symbols (elf_link_add_object_symbols)."""
        s = self.s
        fid = len(s.files)
        s.files.append(obj.name)
        s.objects.append(obj)
        dead = discard_copies(obj, fid, s.kept_groups, s.dead)
        table = s.table
        table.seq += 1
        syms, get = table.syms, table.get
        undefined, common, defined = table.undefined, table.common, table.defined
        rename = s.wrap.rename if s.wrap else None
        for name, kind, weak, size, shndx, value in obj.rows:
            if kind == K_UNDEF or (dead and shndx in dead):   # discarded group: undefined
                if rename is not None:                        # --wrap renames references
                    name = rename(name)
                undefined(syms.get(name) or get(name), fid, weak)
                continue
            sym = syms.get(name) or get(name)
            if kind == K_COMMON:
                if name == "__gnu_lto_slim":          # GCC's mark of a slim LTO IR object
                    raise InputError(obj.name, "LTO IR objects are not modelled")
                common(sym, fid, size)
            else:
                defined(sym, fid, weak, size, shndx, value)
        return fid

    # -- archives ---------------------------------------------------------------------------------
    def _scan(self, inst: ArchiveInstance):
        """bfd/elflink.c elf_link_add_archive_symbols: whole passes over the armap, repeated
        while an included member added an undefined symbol."""
        ar, table = inst.archive, self.s.table
        if not ar.has_index and ar.members():
            raise InputError(ar.name, "error adding symbols: archive has no index; "
                             "run ranlib to add one")
        names, offs, syms = ar.armap_names, ar.armap_offsets, table.syms
        done = [False] * len(names)
        loaded = inst.loaded
        undef, common, undefweak = R.UNDEF, R.COMMON, R.UNDEFWEAK
        while True:
            mark = table.undefs
            for i, name in enumerate(names):
                if done[i]:
                    continue
                off = offs[i]
                if off in loaded:
                    done[i] = True
                    continue
                sym = syms.get(name)
                if sym is None:
                    continue
                state = sym.state
                if state != undef and state != common:
                    if state != undefweak:        # defined: never needed from this archive
                        done[i] = True
                    continue
                if not R.member_wanted(sym, lambda: ar.object(off).is_global_data_definition(name)):
                    continue
                ref = sym.file if state == common else sym.ref_file
                loaded.add(off)
                done[i] = True
                fid = self.load(ar.object(off))
                self.s.extracted.append((fid, ref, name))
            if table.undefs == mark:
                break
        inst.last_scan_seq = table.seq


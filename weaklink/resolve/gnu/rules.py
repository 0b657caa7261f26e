"""GNU ld's symbol resolution rules, written once: one resolve function per incoming kind.

The state of a name is the BFD hash-entry type (bfd/linker.c `link_action` table, refined by
bfd/elflink.c `_bfd_elf_merge_symbol`). Rows below are "incoming \\ existing"; every row has a
test in tests/link/test_rules.py (docs/linker-semantics.md §1.2, §2.1, §7).

  incoming       | NEW        | UNDEF      | UNDEFWEAK  | DEFWEAK     | DEFINED        | COMMON
  ---------------+------------+------------+------------+-------------+----------------+------------
  undefined      | UNDEF  (u) | keep       | UNDEF  (u) | keep        | keep           | keep
  undefined weak | UNDEFWEAK  | keep       | keep       | keep        | keep           | keep
  common         | COMMON (u) | COMMON     | COMMON     | COMMON (1)  | keep           | max size (2)
  defined weak   | DEFWEAK    | DEFWEAK    | DEFWEAK    | skip (3)    | skip (3)       | keep
  defined        | DEFINED    | DEFINED    | DEFINED    | DEFINED     | error (4)      | DEFINED
  --defsym       | ABSOLUTE   | ABSOLUTE   | ABSOLUTE   | ABSOLUTE    | ABSOLUTE (5)   | ABSOLUTE

  (u) appended to ld's list of undefined symbols (bfd/linker.c UND and COM actions): makes an
      archive pass or a group loop repeat. A new common counts, a new weak undefined does not.
  (1) common beats an earlier weak definition (GNU ld and lld; mold differs).
  (2) size = max; the owner changes only to a strictly larger common (ties keep the first).
  (3) _bfd_elf_merge_symbol skips a weak definition of an already defined name: the file is
      not even noticed (no -y line, no --cref entry).
  (4) ``multiple definition``, first kept; silent with muldefs, or when both are absolute with
      the same value (ldmain.c multiple_definition).
  (5) assignments override silently (measured, docs/linker-semantics.md §3.4) and are applied
      again at the end. Over an undefined/common name the assignment is soft (bfd/linker.c
      `ldscript_def`: treated as undefined, a later definition takes it over without error);
      over a name an object defined it is hard: any later definition is a multiple
      definition (measured on ld 2.40; see SymbolTable.assign).
  (6) measured on ld 2.40: a second strong definition gets no -y line and no --cref entry.
  (7) with a plugin loaded (the gcc driver's collect2 loads the LTO plugin), ld/plugin.c
      plugin_notice records the first file that references a -u/-e root as its referrer
      (the map's "reference by file"); without one, a root keeps no referrer (measured).
      The plugin also turns on notice_all, so -y under --wrap behaves as with --cref.
"""
from __future__ import annotations

from weaklink.read.elfstructs import SHN_ABS, SHN_COMMON
from weaklink.read.objfile import K_COMMON, K_UNDEF

NEW, UNDEF, UNDEFWEAK, DEFWEAK, DEFINED, COMMON = range(6)

# How a --defsym / script assignment holds a name (SymbolTable.assign)
SCRIPT_NONE, SCRIPT_SOFT, SCRIPT_HARD = 0, 1, 2

# --cref / -y notice kinds
N_REF, N_DEF, N_COMMON = 0, 1, 2


class Sym:
    """Mutable resolution state of one name (internal to the model; results are frozen)."""
    __slots__ = ("name", "state", "file", "size", "value", "shndx", "absolute", "ref_file",
                 "notices", "history", "script_def")

    def noticed(self) -> list[tuple[int, int]]:
        """(file, N_*) pairs, decoded from the packed `notices` (ints: no GC-tracked tuples)."""
        return [(n >> 2, n & 3) for n in self.notices]

    def __init__(self, name: str):
        self.name = name
        self.state = NEW
        self.file = -1          # owner file index (-1: none / linker-defined)
        self.size = 0
        self.value = 0
        self.shndx = 0
        self.absolute = False
        self.ref_file = -1      # bfd u.undef.abfd: the file that made it (strongly) undefined
        self.notices: list[int] = []   # file << 2 | N_*, in load order, as ld notices them
        self.history = None     # [(seq, state, file)] for watched symbols
        self.script_def = SCRIPT_NONE   # set by --defsym: see SymbolTable.assign


class SymbolTable:
    """Names → Sym, with ld's undefined-list counter and the diagnostics rules raise."""

    def __init__(self, muldefs: bool = False, watch: frozenset[str] = frozenset(),
                 plugin: bool = False):
        self.syms: dict[str, Sym] = {}
        self.plugin = plugin        # ld loaded a plugin (gcc's collect2 always loads LTO's)
        self.undefs = 0             # appends to bfd's undefs list (undefs_tail moves)
        self.muldefs = muldefs
        self.watch = watch
        self.seq = 0                # files loaded so far: orders events for explanations
        self.multiple: list[tuple] = []   # (name, file, first owner, first is absolute)

    def get(self, name: str) -> Sym:
        sym = self.syms.get(name)
        if sym is None:
            sym = self.syms[name] = Sym(name)
            if name in self.watch:
                sym.history = []
        return sym

    def _set(self, sym: Sym, state: int, file: int):
        sym.state, sym.file = state, file
        if sym.history is not None:
            sym.history.append((self.seq, state, file))

    # -- one function per incoming kind ---------------------------------------------------------
    def undefined(self, sym: Sym, file: int, weak: bool):
        sym.notices.append(file << 2 | N_REF)
        if self.plugin and sym.ref_file < 0 and sym.state in (UNDEF, UNDEFWEAK):
            sym.ref_file = file        # (7) a root's first referrer, when a plugin is loaded
        if weak:
            if sym.state == NEW:                     # WEAK action: not on the undefs list
                sym.ref_file = file
                self._set(sym, UNDEFWEAK, -1)
            return
        if sym.state in (NEW, UNDEFWEAK):            # UND action: u.undef.abfd = this file
            sym.ref_file = file
            self._set(sym, UNDEF, -1)
            self.undefs += 1

    def common(self, sym: Sym, file: int, size: int):
        sym.notices.append(file << 2 | N_COMMON)
        st = UNDEF if sym.script_def else sym.state  # ldscript_def: COM as over an undefined
        if st == DEFINED:                            # CREF: a definition beats a common
            return
        if st == COMMON:                             # BIG: largest size, first on a tie
            if size > sym.size:
                sym.size, sym.file = size, file
                if sym.history is not None:
                    sym.history.append((self.seq, COMMON, file))
            return
        if st == NEW:                                # COM on a new name joins the undefs list
            self.undefs += 1
        sym.size, sym.shndx, sym.absolute = size, SHN_COMMON, False   # COM, also over DEFWEAK
        sym.script_def = SCRIPT_NONE
        self._set(sym, COMMON, file)

    def defined(self, sym: Sym, file: int, weak: bool, size: int, shndx: int, value: int):
        absolute = shndx == SHN_ABS
        if sym.script_def == SCRIPT_HARD:            # (5): any definition clashes, not noticed
            if not self.muldefs:
                self.multiple.append((sym.name, file, -1, True))
            return
        state = UNDEF if sym.script_def else sym.state   # ldscript_def counts as undefined (5)
        if weak:
            if state in (DEFINED, DEFWEAK):          # elf_merge_symbol: skip, not noticed
                return
            sym.notices.append(file << 2 | N_DEF)
            if state == COMMON:                      # DEFW over COM: NOACT
                return
            self._own(sym, DEFWEAK, file, size, shndx, value, absolute)
            return
        if state == DEFINED:                         # MDEF: reported, not noticed (6)
            same_abs = absolute and sym.absolute and value == sym.value
            if not (self.muldefs or same_abs):
                self.multiple.append((sym.name, file, sym.file, sym.absolute))
            return
        sym.notices.append(file << 2 | N_DEF)
        if sym.history is None:                      # hot path of _own, inlined
            sym.size, sym.shndx, sym.value, sym.absolute = size, shndx, value, absolute
            sym.script_def, sym.state, sym.file = SCRIPT_NONE, DEFINED, file
            return
        self._own(sym, DEFINED, file, size, shndx, value, absolute)

    def root(self, sym: Sym):
        """-u / -e / ENTRY / EXTERN / --require-defined: undefined, no referencing file."""
        if sym.state in (NEW, UNDEFWEAK):
            self._set(sym, UNDEF, -1)
            self.undefs += 1

    def assign(self, sym: Sym, value: int):
        """--defsym / script assignment: overrides silently (ldexp.c exp_fold_tree_1).

        Measured on ld 2.40: over a name that an input file has defined (strong or weak, even
        if a common won since), the assignment is hard: any later definition, even a weak
        one, is a multiple definition. Otherwise it is soft (`ldscript_def`): a later
        definition takes it over silently. Either way a later common takes it over."""
        by_object = any(n & 3 == N_DEF for n in sym.notices)   # elf def_regular
        self._own(sym, DEFINED, -1, 0, SHN_ABS, value, True)
        sym.script_def = SCRIPT_HARD if by_object else SCRIPT_SOFT

    def _own(self, sym, state, file, size, shndx, value, absolute):
        sym.size, sym.shndx, sym.value, sym.absolute = size, shndx, value, absolute
        sym.script_def = SCRIPT_SOFT if file < 0 else SCRIPT_NONE
        self._set(sym, state, file)

    def resolve(self, sym: Sym, file: int, kind: int, weak: bool, size: int, shndx: int,
                value: int = 0):
        """Dispatch one incoming global symbol of a loaded file (driver.load inlines this)."""
        if kind == K_UNDEF:
            self.undefined(sym, file, weak)
        elif kind == K_COMMON:
            self.common(sym, file, size)
        else:
            self.defined(sym, file, weak, size, shndx, value)


def member_wanted(sym: Sym | None, defines_global_data) -> bool:
    """bfd/elflink.c elf_link_add_archive_symbols: does this armap entry pull its member?

    Only a strong undefined name pulls (an undefined weak never does, a defined or weakly
    defined name blocks); a common pulls only a member whose own definition is STB_GLOBAL,
    non-function, non-common data (`defines_global_data()`, evaluated lazily)."""
    if sym is None:
        return False
    if sym.state == UNDEF:
        return True
    if sym.state == COMMON:
        return defines_global_data()
    return False

"""ld.lld 16's symbol resolution rules, written once: one function per incoming symbol kind.

lld keeps one slot per name whose kind is overwritten in place (lld/ELF/Symbols.h): a
placeholder (NEW), Undefined, Lazy (an archive member or --start-lib object not loaded yet),
Defined, Common. Rows are "incoming \\ existing"; every row is measured on ld.lld-16 and has a
test in tests/link/test_lld_rules.py.

  incoming       | NEW       | UNDEF            | LAZY                | DEFINED weak | DEFINED  | COMMON
  ---------------+-----------+------------------+---------------------+--------------+----------+---------
  undefined      | UNDEF (1) | binding (2)      | extract (3)         | keep         | keep     | keep
  undefined weak | UNDEF w   | binding (2)      | LAZY, weak (4)      | keep         | keep     | keep
  lazy           | LAZY      | extract (3) / (4)| keep: first lazy (5)| keep (6)     | keep (6) | keep (7)
  common         | COMMON    | COMMON           | COMMON (7)          | COMMON (8)   | keep     | max (9)
  defined weak   | DEFINED w | DEFINED w        | DEFINED w (6)       | keep (10)    | keep     | keep (8)
  defined        | DEFINED   | DEFINED          | DEFINED (6)         | DEFINED (10) | dup (11) | DEFINED

  (1) the first file that references a name is its Undefined's file: --why-extract names it
      as the reference even when its own reference was weak (measured).
  (2) the binding is weak only if the first reference is weak and every later one is too:
      a strong reference makes it strong, a weak one after the first never weakens it.
  (3) a strong reference meeting a lazy symbol extracts its member at once (recursively: the
      member's own references extract before the reference that pulled it is recorded, so
      --why-extract lists a chain innermost first). The archive's place on the command line
      does not matter: lazy symbols are remembered wherever the archive sits. When the
      reference comes after the lazy symbol, --why-extract names the file that defines the
      symbol once the extraction is over, which is another member when the extracted one
      pulled in a stronger definition (measured).
  (4) a weak reference never extracts; the lazy symbol stays, with weak binding, and a later
      strong reference still extracts it (Symbols.h, comment on LazySymbol).
  (5) the first lazy definition of a name wins, also when it is weak and a later archive has
      a strong one (same as GNU ld's first-found rule).
  (6) a definition already there blocks extraction: the weak-default pitfall holds under lld
      too; a definition arriving over a lazy symbol replaces it without extracting.
  (7) LLVM 16 defaults to --no-fortran-common (its --help text still says the opposite): a
      common does not extract an archive member that defines the name (GNU ld does:
      docs/linker-semantics.md §2.1 item 7), and a common replaces a lazy symbol.
  (8) a common beats a weak definition, in either order.
  (9) commons merge: size = max; the owner changes only to a strictly larger common.
  (10) a strong definition replaces a weak one; a second weak one is ignored (first wins).
  (11) the first strong definition stays; the second is a duplicate, found after all input
       is read (ObjFile::postParse) and reported unless either copy is weak, the later copy
       sits in a discarded COMDAT section, or the winner is not a definition (a common).
"""
from __future__ import annotations

from weaklink.read.elfstructs import SHN_ABS, SHN_COMMON

NEW, UNDEF, LAZY, DEFINED, COMMON = range(5)
SCRIPT_VALUE, SCRIPT_EXPR = 1, 2    # a --defsym number; a script expression (not evaluated)


class Sym:
    """Mutable resolution state of one name (internal to the model; results are frozen)."""
    __slots__ = ("name", "kind", "weak", "file", "lazy", "size", "shndx", "value", "absolute",
                 "referenced", "script", "discarded")

    def __init__(self, name: str):
        self.name = name
        self.kind = NEW
        self.weak = False
        self.file = -1          # loaded file id: first referencer, definer or common owner
        self.lazy = -1          # LAZY: index of the lazy file that would define it
        self.size = 0
        self.shndx = 0
        self.value = 0
        self.absolute = False
        self.referenced = False
        self.script = 0         # defined by --defsym (SCRIPT_VALUE) or a script (SCRIPT_EXPR)
        self.discarded = -1     # file whose discarded COMDAT copy won: undefined (postParse)


class SymbolTable:
    """Names → Sym, and the hooks the driver provides: extract(lazy id, reference)."""

    def __init__(self, extract):
        self.syms: dict[str, Sym] = {}
        # Names whose only mention so far is a lazy definition: name -> lazy file. Kept
        # apart so that the many archive names nobody references cost a dict entry, not a
        # Sym; get() turns one into a LAZY Sym on its first real use.
        self.pending: dict[str, int] = {}
        # extract(sym, lazy id, reference, backref_from, record_owner): see driver._extract
        self.extract = extract

    def get(self, name: str) -> Sym:
        sym = self.syms.get(name)
        if sym is None:
            sym = self.syms[name] = Sym(name)
            lid = self.pending.pop(name, -1)
            if lid >= 0:
                sym.kind, sym.lazy = LAZY, lid
        return sym

    # -- one function per incoming kind ---------------------------------------------------------
    def undefined(self, sym: Sym, file: int, weak: bool):
        kind = sym.kind
        if kind == NEW:                                  # (1)
            sym.kind, sym.file, sym.weak = UNDEF, file, weak
        elif kind == LAZY:
            if weak:                                     # (4)
                sym.weak = True
            else:                                        # (3): the reference is this file
                self.extract(sym, sym.lazy, file, file, True)
        elif kind == UNDEF:                              # (2)
            if not weak or not sym.referenced:
                sym.weak = weak
        sym.referenced = True

    def unused_undefined(self, sym: Sym, weak: bool):
        """SymbolTable::addUnusedUndefined (--wrap's __wrap_/real names): an undefined with
        no file that does not count as a reference; a strong one extracts a lazy member."""
        if sym.kind == NEW:
            sym.kind, sym.file, sym.weak = UNDEF, -1, weak
        elif sym.kind == LAZY:
            if weak:
                sym.weak = True
            else:
                self.extract(sym, sym.lazy, None, -1, True)
        elif sym.kind == UNDEF and (not weak or not sym.referenced):
            sym.weak = weak

    def lazy(self, sym: Sym, lazy_id: int) -> bool:
        """A lazy definition; True when it extracted its own file (the caller stops)."""
        kind = sym.kind
        if kind == NEW:
            sym.kind, sym.lazy, sym.weak = LAZY, lazy_id, False
        elif kind == UNDEF:
            if sym.weak:                                 # (4)
                sym.kind, sym.lazy = LAZY, lazy_id
            else:                                        # (3): the reference is the Undefined's file
                self.extract(sym, lazy_id, sym.file if sym.file >= 0 else None, -1, False)
                return True
        elif kind == DEFINED:                            # (6) also dismisses a backward reference
            self.on_defined_lazy(sym)
        return False

    def on_defined_lazy(self, sym: Sym):
        """Hook: a later lazy definition of a defined name (--warn-backrefs sandwich)."""

    def common(self, sym: Sym, file: int, size: int):
        kind = sym.kind
        if kind == DEFINED and not sym.weak:
            return
        if kind == COMMON:                               # (9)
            if size > sym.size:
                sym.size, sym.file = size, file
            return
        sym.kind, sym.file, sym.size, sym.weak = COMMON, file, size, False   # (7) (8)
        sym.shndx, sym.absolute, sym.lazy = SHN_COMMON, False, -1

    def defined(self, sym: Sym, file: int, weak: bool, size: int, shndx: int, value: int):
        kind = sym.kind
        if kind == COMMON:
            if weak:                                     # (8)
                return
        elif kind == DEFINED:
            if weak or not sym.weak:                     # (10) (11)
                return
        sym.kind, sym.file, sym.weak, sym.lazy = DEFINED, file, weak, -1     # (6)
        sym.size, sym.shndx, sym.value = size, shndx, value
        sym.absolute = shndx == SHN_ABS
        sym.script = 0

    def assign(self, sym: Sym, value: int, evaluated: bool = True):
        """--defsym / a script assignment: applied after all input is read and duplicates are
        checked (LinkerScript::declareSymbols), so it neither blocks nor causes extraction,
        and silently overrides any definition (measured)."""
        sym.kind, sym.file, sym.weak, sym.lazy = DEFINED, -1, False, -1
        sym.size, sym.shndx, sym.value, sym.absolute = 0, SHN_ABS, value, True
        sym.script, sym.discarded = SCRIPT_VALUE if evaluated else SCRIPT_EXPR, -1

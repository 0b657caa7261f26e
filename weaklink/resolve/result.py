"""The result of a modelled link: immutable records, rendered as JSON (docs/json-contract.md)
or as a readable table. Compute once, format many."""
from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Callable
from functools import cached_property

from npu.records import Record, to_json
from weaklink.plaintext import aligned
from weaklink.resolve.cmdline import NoEffect

SCHEMA_VERSION = 1

# Diagnostic kinds and ld's wording (ld/ldmain.c, ld/ldlang.c; docs/linker-semantics.md §3).
UNDEFINED_REFERENCE = "undefined-reference"
MULTIPLE_DEFINITION = "multiple-definition"
REQUIRED_UNDEFINED = "required-symbol-undefined"
ENTRY_NOT_FOUND = "entry-not-found"          # warnings only
DISCARDED_SECTION = "defined-in-discarded-section"   # a /DISCARD/ed definition is referenced
LINKER_SYMBOL_REDEFINED = "linker-symbol-redefined"  # lld: an input defines a name it reserves
NOT_MODELLED = "not-modelled"


# The records of a link (named tuples: one SymbolInfo is built per global symbol), serialized
# by npu.records under their field names.
Diagnostic = namedtuple("Diagnostic", "kind symbol file message")
# One row of the map's "Archive member included to satisfy reference by file (symbol)".
Extraction = namedtuple("Extraction", "member file symbol")
# A section --gc-sections removes (ld: "removing unused section 'S' in file 'F'").
Collected = namedtuple("Collected", "file section")
# The winner for one name. binding: global | weak | common | absolute | script | linker (ld's
#   own, such as _GLOBAL_OFFSET_TABLE_) | undefined | undefined-weak; file and section: where it
#   is defined (None when nowhere); value: absolute (--defsym) and script values, None when ld
#   computes them; kept: False when --gc-sections removes the defining section.
SymbolInfo = namedtuple("SymbolInfo", "binding file size section value kept", defaults=(None, True))
# A definition of SYM present in the inputs that did not win, and the reason.
WhyNot = namedtuple("WhyNot", "symbol file reason detail")


class LinkResult(Record):
    """What a link decides, computed by link(). The per-symbol table (one record per global
    name, the bulk of the work on large links) is built on first access of `symbols`, by
    calling `symbol_table`; `symbol_count`, when given, counts those names without building
    their records (the summary line needs only the number)."""

    schema_version = SCHEMA_VERSION
    JSON = ("schema_version", "flavor", "ok", "errors", "warnings", "loaded", "extracted",
            "symbols=sorted_symbols", "collected", "options_without_effect=no_effect",
            "ld_args?", "trace?", "why_not?")

    def __init__(self, ok: bool, errors: tuple[Diagnostic, ...], warnings: tuple[Diagnostic, ...],
                 loaded: tuple[str, ...], extracted: tuple[Extraction, ...],
                 symbol_table: Callable[[], dict[str, SymbolInfo]] = dict,
                 cref: dict[str, tuple[str, ...]] | None = None, trace: tuple[str, ...] = (),
                 why_not: tuple[WhyNot, ...] = (), collected: tuple[Collected, ...] = (),
                 gc_sections: bool = False, print_gc_sections: bool = False,
                 ld_args: tuple[str, ...] | None = None, flavor: str = "gnu",
                 symbol_count: Callable[[], int] | None = None,
                 no_effect: tuple[NoEffect, ...] = ()):
        self.ok = ok
        self.errors = errors
        self.warnings = warnings
        self.loaded = loaded
        self.extracted = extracted
        self.symbol_table = symbol_table
        self.symbol_count = symbol_count
        self.cref = {} if cref is None else cref
        self.trace = trace
        self.why_not = why_not
        self.collected = collected              # --gc-sections, in --print-gc-sections order
        self.gc_sections = gc_sections
        self.print_gc_sections = print_gc_sections  # the ld line asked for --print-gc-sections
        self.ld_args = ld_args                  # the ld command line modelled (driver lines)
        self.flavor = flavor                    # whose rules: "gnu" (GNU ld) or "lld" (ld.lld)
        # each ld option that changes nothing the model decides, with ld's help text
        # (weaklink/data/gnu_ld_options.txt, resolution "none")
        self.no_effect = no_effect

    @cached_property
    def symbols(self) -> dict[str, SymbolInfo]:
        return self.symbol_table()

    @property
    def sorted_symbols(self) -> dict[str, SymbolInfo]:
        return dict(sorted(self.symbols.items()))

    def dumps(self, extras: bool = False) -> str:
        """The JSON; `trace` and `why_not` only with `extras` (--trace-symbol, --why-not)."""
        doc = to_json(self)
        if not extras:
            doc.pop("trace", None)
            doc.pop("why_not", None)
        return json.dumps(doc, indent=2)

    def table(self) -> str:
        """Readable symbol table: one row per symbol, stable column headers."""
        rows = [("SYMBOL", "BINDING", "FILE", "SIZE", "SECTION")]
        gc = self.gc_sections
        if gc:          # a weak default that won but was collected is not in the image
            rows[0] += ("IN IMAGE",)
        for name, s in sorted(self.symbols.items()):
            row = (name, s.binding, s.file or "-", str(s.size), s.section or "-")
            rows.append(row + (("yes" if s.kept else "no, collected"),) if gc else row)
        return "\n".join(aligned(rows))

    def summary(self) -> str:
        """One line: what the link loads, extracts and collects (the table needs --symbols)."""
        gc = f", {len(self.collected)} sections collected" if self.gc_sections else ""
        built = self.symbol_count is None or "symbols" in self.__dict__
        count = len(self.symbols) if built else self.symbol_count()
        return (f"{len(self.loaded)} files loaded ({len(self.extracted)} archive members "
                f"extracted), {count} global symbols{gc}; --symbols prints them")

    def no_effect_line(self) -> str | None:
        """The ld options accepted as having no effect on resolution, in one line."""
        if not self.no_effect:
            return None
        return "no effect on resolution: " + ", ".join(o for o, _ in self.no_effect)

    def why_extract_lines(self) -> list[str]:
        """The map table layout (ldmain.c add_archive_element): pad the member to 30 columns."""
        out = []
        for x in self.extracted:
            pad = "\n" + " " * 30 if len(x.member) >= 29 else " " * (30 - len(x.member))
            ref = f"{x.file} " if x.file else ""
            out.append(f"{x.member}{pad}{ref}({x.symbol})")
        return out

"""The result of a modelled link: immutable records, rendered as JSON (docs/json-contract.md)
or as a readable table. Compute once, format many."""
from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Callable
from functools import cached_property

SCHEMA_VERSION = 1

# Diagnostic kinds and ld's wording (ld/ldmain.c, ld/ldlang.c; docs/linker-semantics.md §3).
UNDEFINED_REFERENCE = "undefined-reference"
MULTIPLE_DEFINITION = "multiple-definition"
REQUIRED_UNDEFINED = "required-symbol-undefined"
ENTRY_NOT_FOUND = "entry-not-found"          # warnings only
DISCARDED_SECTION = "defined-in-discarded-section"   # a /DISCARD/ed definition is referenced
LINKER_SYMBOL_REDEFINED = "linker-symbol-redefined"  # lld: an input defines a name it reserves
NOT_MODELLED = "not-modelled"


class Diagnostic(namedtuple("Diagnostic", "kind symbol file message")):
    __slots__ = ()

    def to_json(self) -> dict:
        return {"kind": self.kind, "symbol": self.symbol, "file": self.file,
                "message": self.message}


class Extraction(namedtuple("Extraction", "member file symbol")):
    """One row of the map's "Archive member included to satisfy reference by file (symbol)"."""
    __slots__ = ()

    def to_json(self) -> dict:
        return {"member": self.member, "file": self.file, "symbol": self.symbol}


class Collected(namedtuple("Collected", "file section")):
    """A section --gc-sections removes (ld: "removing unused section 'S' in file 'F'")."""
    __slots__ = ()

    def to_json(self) -> dict:
        return {"file": self.file, "section": self.section}


# binding: global | weak | common | absolute | script | linker (ld's own, such as
#   _GLOBAL_OFFSET_TABLE_) | undefined | undefined-weak; file and section: where it is defined
#   (None when nowhere); value: absolute (--defsym) and script values, None when ld computes
#   them; kept: False when --gc-sections removes the defining section.
class SymbolInfo(namedtuple("SymbolInfo", "binding file size section value kept",
                            defaults=(None, True))):
    """The winner for one name (a named tuple: one is built per global symbol)."""
    __slots__ = ()

    def to_json(self) -> dict:
        return {"binding": self.binding, "file": self.file, "size": self.size,
                "section": self.section, "value": self.value, "kept": self.kept}


class WhyNot(namedtuple("WhyNot", "symbol file reason detail")):
    """A definition of SYM present in the inputs that did not win, and the reason."""
    __slots__ = ()

    def to_json(self) -> dict:
        return {"symbol": self.symbol, "file": self.file, "reason": self.reason,
                "detail": self.detail}


class LinkResult:
    """What a link decides, computed by link(). The per-symbol table (one record per global
    name, the bulk of the work on large links) is built on first access of `symbols`, by
    calling `symbol_table`; `symbol_count`, when given, counts those names without building
    their records (the summary line needs only the number)."""

    def __init__(self, ok: bool, errors: tuple[Diagnostic, ...], warnings: tuple[Diagnostic, ...],
                 loaded: tuple[str, ...], extracted: tuple[Extraction, ...],
                 symbol_table: Callable[[], dict[str, SymbolInfo]] = dict,
                 cref: dict[str, tuple[str, ...]] | None = None, trace: tuple[str, ...] = (),
                 why_not: tuple[WhyNot, ...] = (), collected: tuple[Collected, ...] = (),
                 gc_sections: bool = False, print_gc_sections: bool = False,
                 ld_args: tuple[str, ...] | None = None, flavor: str = "gnu",
                 symbol_count: Callable[[], int] | None = None,
                 no_effect: tuple[tuple[str, str], ...] = ()):
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
        # (option as given, ld's help text) of each ld option that changes nothing the model
        # decides (weaklink/data/gnu_ld_options.txt, resolution "none")
        self.no_effect = no_effect

    @cached_property
    def symbols(self) -> dict[str, SymbolInfo]:
        return self.symbol_table()

    def to_json(self, extras: bool = False) -> dict:
        out = {
            "schema_version": SCHEMA_VERSION,
            "flavor": self.flavor,
            "ok": self.ok,
            "errors": [e.to_json() for e in self.errors],
            "warnings": [w.to_json() for w in self.warnings],
            "loaded": list(self.loaded),
            "extracted": [x.to_json() for x in self.extracted],
            "symbols": {k: v.to_json() for k, v in sorted(self.symbols.items())},
            "collected": [c.to_json() for c in self.collected],
            "options_without_effect": [{"option": o, "help": h} for o, h in self.no_effect],
        }
        if self.ld_args is not None:
            out["ld_args"] = list(self.ld_args)
        if extras and self.trace:
            out["trace"] = list(self.trace)
        if extras and self.why_not:
            out["why_not"] = [w.to_json() for w in self.why_not]
        return out

    def dumps(self, extras: bool = False) -> str:
        return json.dumps(self.to_json(extras), indent=2)

    def table(self) -> str:
        """Readable symbol table: one row per symbol, stable column headers."""
        rows = [("SYMBOL", "BINDING", "FILE", "SIZE", "SECTION")]
        gc = self.gc_sections
        if gc:          # a weak default that won but was collected is not in the image
            rows[0] += ("IN IMAGE",)
        for name, s in sorted(self.symbols.items()):
            row = (name, s.binding, s.file or "-", str(s.size), s.section or "-")
            rows.append(row + (("yes" if s.kept else "no, collected"),) if gc else row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)

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

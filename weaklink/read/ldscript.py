"""GNU ld linker scripts: syntax only (ld.info "Linker Scripts"; ld/ldgram.y, ld/ldlex.l).

`parse(text, name)` returns a `Script`: the statements that decide resolution and garbage
collection, in source order. What the statements mean for a link is resolve/script.py.

Tokens and expressions are weaklink/read/ldlex.py.

Read: ENTRY, EXTERN, INPUT, GROUP, AS_NEEDED, INCLUDE, SEARCH_DIR, STARTUP, assignments
(`=`, `+=`, …), PROVIDE, PROVIDE_HIDDEN, HIDDEN, ASSERT, and SECTIONS with output sections,
`/DISCARD/`, KEEP, file and section globs, EXCLUDE_FILE, the SORT wrappers and
INPUT_SECTION_FLAGS. Skipped as a balanced block: MEMORY, PHDRS, VERSION, OVERLAY bodies and
other commands that only place sections.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

from weaklink.read.ldlex import NAME, OPS, WILD, Expr, Lexer, unquote


# -- the statements -----------------------------------------------------------------------------
class Assignment(namedtuple("Assignment", "name value op provide hidden section alias",
                            defaults=("=", False, False, None, None))):
    """`name = expr;` (op '=', '+=', …), PROVIDE / PROVIDE_HIDDEN / HIDDEN forms.
    `value` is the constant when the expression folds without addresses, else None;
    `section` the output section it sits in (None at script level); `alias`, for
    `sym = other (+/- constant)`, the one symbol it reads."""
    __slots__ = ()


class InputFile(namedtuple("InputFile", "name group as_needed", defaults=(None, False))):
    """One name in INPUT/GROUP/STARTUP (`-lNAME` is a library); `group` numbers a GROUP."""
    __slots__ = ()


class SectionPattern(namedtuple("SectionPattern", "pattern exclude_files", defaults=((),))):
    __slots__ = ()


class InputSectionRule(namedtuple("InputSectionRule",
                                  "file exclude_files sections keep output")):
    """`FILE(SECTIONS…)` inside an output section; KEEP(...) sets keep."""
    __slots__ = ()


class Script:
    """What a script says, as the parser meets it."""

    def __init__(self, name: str, entry: str | None = None):
        self.name = name
        self.entry = entry
        self.extern: list[str] = []
        self.inputs: list[InputFile] = []
        self.search_dirs: list[str] = []
        self.assignments: list[Assignment] = []
        self.rules: list[InputSectionRule] = []


# -- the parser -----------------------------------------------------------------------------------
_ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "<<=", ">>=", "&=", "|=", "^=")
_SORTS = ("SORT", "SORT_BY_NAME", "SORT_BY_ALIGNMENT", "SORT_BY_INIT_PRIORITY", "SORT_NONE",
          "REVERSE")
_SKIP_BLOCKS = ("MEMORY", "PHDRS", "VERSION")
_IGNORED_CALLS = ("OUTPUT_FORMAT", "OUTPUT_ARCH", "TARGET", "OUTPUT", "REGION_ALIAS",
                  "NOCROSSREFS", "NOCROSSREFS_TO", "LD_FEATURE", "ASSERT", "FORCE_GROUP_ALLOCATION",
                  "INSERT")
_DATA = ("BYTE", "SHORT", "LONG", "QUAD", "SQUAD", "FILL", "ASCIZ")
_IGNORED_WORDS = ("CREATE_OBJECT_SYMBOLS", "CONSTRUCTORS", "FORCE_COMMON_ALLOCATION",
                  "INHIBIT_COMMON_ALLOCATION")


class Parser:
    def __init__(self, text: str, name: str, include: Callable[[str], tuple[str, str]] | None,
                 depth: int = 0, script: Script | None = None):
        self.lex = Lexer(text, name)
        self.include = include
        self.depth = depth
        self.s = script or Script(name)
        self.consts: dict[str, int | None] = {}
        self._groups = 0

    def parse(self) -> Script:
        while self.lex.peek(NAME) is not None:
            self.statement(None)
        return self.s

    # -- statements at script level, in SECTIONS and in output sections ------------------------
    def statement(self, section: str | None, in_sections: bool = False):
        lex = self.lex
        lex._skip()
        start = lex.pos
        tok = lex.take(NAME)
        if tok == ";":
            return
        if tok in ("PROVIDE", "PROVIDE_HIDDEN", "HIDDEN"):
            lex.expect("(")
            name = unquote(lex.take(NAME))
            lex.expect("=")
            self._assign(name, "=", section, provide=tok != "HIDDEN", hidden=tok != "PROVIDE")
            lex.expect(")")
            lex.accept(";")
        elif tok == "ENTRY":
            lex.expect("(")
            self.s.entry = unquote(lex.take(NAME))
            lex.expect(")")
        elif tok == "EXTERN":
            lex.expect("(")
            while not lex.accept(")", WILD):
                t = lex.take(WILD)
                if t != ",":
                    self.s.extern.append(unquote(t))
        elif tok in ("INPUT", "GROUP", "STARTUP"):
            self._inputs(tok)
        elif tok == "INCLUDE":
            self._include(unquote(lex.take(WILD)), section, in_sections)
        elif tok == "SEARCH_DIR":
            lex.expect("(")
            self.s.search_dirs.append(unquote(lex.take(WILD)))
            lex.expect(")")
        elif tok == "SECTIONS" and section is None and not in_sections:
            lex.expect("{")
            while not lex.accept("}", NAME):
                self.statement(None, in_sections=True)
        elif tok in _SKIP_BLOCKS and section is None:
            self._skip_balanced("{", "}")
        elif tok in _IGNORED_CALLS or tok in _DATA or tok in _IGNORED_WORDS:
            if lex.peek() == "(":
                self._skip_balanced("(", ")")
            elif tok == "INSERT":
                lex.take(NAME)
                lex.take(NAME)
            lex.accept(";")
        elif lex.peek() in _ASSIGN_OPS:
            self._assign(unquote(tok), lex.take(), section)
        elif section is not None:               # a pattern: re-read it with `:` and `=` chars
            if tok not in ("KEEP", "EXCLUDE_FILE", "INPUT_SECTION_FLAGS", *_SORTS):
                lex.pos = start
                tok = lex.take(WILD)
            self._input_rule(tok, section)
        elif in_sections:
            self._output_section(tok)
        else:
            raise lex.error(f"unexpected '{tok}' (expected a command, an assignment or "
                            "SECTIONS)", back=len(tok))

    def _assign(self, name: str, op: str, section, provide=False, hidden=False):
        expr = Expr(self.lex, self.consts)
        self.lex._skip()
        start = self.lex.pos
        value = expr.parse()
        plain = self.lex.text[start:self.lex.pos].strip()
        alias = plain if expr.names == [plain] else None   # `x = bar;` only (measured)
        if op != "=":                            # `a += 4`: folds only from a known a
            old, fold = self.consts.get(name), OPS.get(op[:-1])
            value = None if old is None or value is None or fold is None else fold(old, value)
        if name != ".":                          # `.` moves the location counter only
            if not provide:
                self.consts[name] = value
            self.s.assignments.append(Assignment(name, value, op, provide, hidden, section,
                                                 alias if op == "=" else None))
        if not provide:
            self.lex.accept(";")

    def _inputs(self, cmd: str):
        lex = self.lex
        lex.expect("(")
        group = None
        if cmd == "GROUP":
            self._groups += 1
            group = self._groups
        as_needed = False
        while True:
            t = lex.take(WILD)
            if t == ")":
                if as_needed:
                    as_needed = False
                    continue
                break
            if t == ",":
                continue
            if t == "AS_NEEDED":
                lex.expect("(")
                as_needed = True
                continue
            self.s.inputs.append(InputFile(unquote(t), group, as_needed))

    def _include(self, path: str, section, in_sections):
        if self.include is None:
            raise self.lex.error(f"INCLUDE {path}: no include resolver")
        if self.depth > 16:
            raise self.lex.error(f"INCLUDE {path}: nested too deeply")
        text, name = self.include(path)
        sub = Parser(text, name, self.include, self.depth + 1, self.s)
        sub.consts = self.consts
        while sub.lex.peek(NAME) is not None:
            sub.statement(section, in_sections)

    def _skip_balanced(self, open_: str, close: str):
        self.lex.expect(open_, WILD)
        depth = 1
        while depth:
            t = self.lex.take(WILD)
            depth += (t == open_) - (t == close)

    # -- SECTIONS ---------------------------------------------------------------------------------
    def _output_section(self, name: str):
        lex = self.lex
        name = unquote(name)
        if name == "OVERLAY":
            self._skip_until("{")
            self._skip_balanced("{", "}")
            self._section_tail()
            return
        self._skip_until(":")                   # address, (NOLOAD) / (TYPE = …)
        lex.expect(":")
        while lex.peek(WILD) != "{":            # AT(...), ALIGN(...), SUBALIGN, ONLY_IF_*
            t = lex.take(WILD)
            if lex.peek() == "(" and t in ("AT", "ALIGN", "SUBALIGN", "ALIGN_WITH_INPUT"):
                self._skip_balanced("(", ")")
        lex.expect("{", WILD)
        while not lex.accept("}", NAME):
            self.statement(name)
        self._section_tail()

    def _skip_until(self, stop: str):
        lex = self.lex
        while lex.peek(WILD) != stop:
            if lex.peek(WILD) is None:
                raise lex.error(f"expected '{stop}'")
            t = lex.take(WILD)
            if t == "(":
                depth = 1
                while depth:
                    t = lex.take(WILD)
                    depth += (t == "(") - (t == ")")

    def _section_tail(self):
        """`> REGION`, `AT> REGION`, `:PHDR`, `= FILL`, `,` after an output section."""
        lex = self.lex
        while True:
            t = lex.peek(WILD)
            if t in (">", "AT>", "AT"):
                lex.take(WILD)
                if t == "AT":
                    lex.expect(">")
                lex.take(WILD)
            elif t == "," or (t is not None and len(t) > 1 and t[0] in ">:"):
                lex.take(WILD)                  # `,`, `>REGION`, `:PHDR` as one token
            elif t == ":":
                lex.take(WILD)
                lex.take(WILD)
            elif t is not None and t.startswith("="):
                lex.take(WILD)
                if t == "=":
                    Expr(lex, self.consts).parse()
            else:
                return

    def _input_rule(self, tok: str, section: str):
        lex = self.lex
        keep = tok == "KEEP"
        if keep:
            lex.expect("(")
            tok = lex.take(WILD)
        if tok == "INPUT_SECTION_FLAGS":
            self._skip_balanced("(", ")")
            tok = lex.take(WILD)
        excl: tuple[str, ...] = ()
        if tok == "EXCLUDE_FILE":
            excl = self._names_in_parens()
            tok = lex.take(WILD)
        file = unquote(tok)
        if tok in _SORTS:                       # SORT(file-pattern)(…)
            lex.expect("(")
            file = unquote(lex.take(WILD))
            lex.expect(")")
        sections: list[SectionPattern] = []
        if lex.accept("(", WILD):               # optional: ld 2.40 accepts SORT(CONSTRUCTORS)
            sections = self._section_patterns()
        if keep:
            lex.expect(")", WILD)
        self.s.rules.append(InputSectionRule(file, excl, tuple(sections), keep, section))
        lex.accept(";", WILD)

    def _names_in_parens(self) -> tuple[str, ...]:
        lex = self.lex
        lex.expect("(", WILD)
        out = []
        while not lex.accept(")", WILD):
            out.append(unquote(lex.take(WILD)))
        return tuple(out)

    def _section_patterns(self) -> list[SectionPattern]:
        lex, out, excl = self.lex, [], ()
        while True:
            t = lex.take(WILD)
            if t == ")":
                return out
            if t == ",":
                continue
            if t == "EXCLUDE_FILE":
                excl = self._names_in_parens()
                continue
            if t in _SORTS or t == "INPUT_SECTION_FLAGS":
                lex.expect("(", WILD)
                inner = self._section_patterns()
                if t != "INPUT_SECTION_FLAGS":
                    out += inner
                continue
            out.append(SectionPattern(unquote(t), excl))
            excl = ()


def parse(text: str, name: str, include: Callable[[str], tuple[str, str]] | None = None
          ) -> Script:
    """Parse a script. `include(path)` returns (text, display name) for INCLUDE."""
    return Parser(text, name, include).parse()

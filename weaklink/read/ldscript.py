"""GNU ld linker scripts: syntax only (ld.info "Linker Scripts"; ld/ldgram.y, ld/ldlex.l).

`parse(text, name)` returns a `Script`: the statements that decide resolution and garbage
collection, in source order. What the statements mean for a link is resolve/script.py.

Like ld's lexer, tokens depend on where the parser is (ldlex.l start states): an expression
splits `a-b` into three tokens, while a file name or an input-section pattern keeps
`*crtbegin?.o` or `.text.*` whole. The parser asks the lexer for the mode it needs.

Read: ENTRY, EXTERN, INPUT, GROUP, AS_NEEDED, INCLUDE, SEARCH_DIR, STARTUP, assignments
(`=`, `+=`, …), PROVIDE, PROVIDE_HIDDEN, HIDDEN, ASSERT, and SECTIONS with output sections,
`/DISCARD/`, KEEP, file and section globs, EXCLUDE_FILE, the SORT wrappers and
INPUT_SECTION_FLAGS. Skipped as a balanced block: MEMORY, PHDRS, VERSION, OVERLAY bodies and
other commands that only place sections.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from weaklink.errors import InputError

# -- tokens ---------------------------------------------------------------------------------------
_SPACE = re.compile(r"(?:\s+|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"([^"]*)"')
_EXPR_NAME = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*")
_NUMBER = re.compile(r"(?:0[xX][0-9A-Fa-f]+|\$[0-9A-Fa-f]+|[0-9][0-9A-Fa-f]*[hHoObBdDxX]?)[KkMm]?")
_OPERATOR = re.compile(r"<<=|>>=|&&|\|\||<<|>>|==|!=|<=|>=|[-+*/&|^]=|[-+*/%&|^~!<>?:=(){},;]")
# ldlex.l WILDCHAR: an input-section pattern or a file name in a command
_WILD = re.compile(r"[A-Za-z0-9_.$/\\~\-+:\[\]?*^!=]+")
_NAME = re.compile(r"[A-Za-z0-9_.$/\\~\-*?\[\]!^]+")     # statement start: a name or keyword

EXPR, WILD, NAME = "expr", "wild", "name"
_MODES = {WILD: _WILD, NAME: _NAME}


class Lexer:
    def __init__(self, text: str, name: str):
        self.text, self.name, self.pos = text, name, 0

    def _skip(self):
        self.pos = _SPACE.match(self.text, self.pos).end()
        if self.text.startswith("/*", self.pos):
            raise self.error("unterminated comment")

    def peek(self, mode: str = EXPR) -> str | None:
        self._skip()
        tok, _ = self._scan(mode)
        return tok

    def take(self, mode: str = EXPR) -> str:
        self._skip()
        tok, end = self._scan(mode)
        if tok is None:
            raise self.error("unexpected end of script")
        self.pos = end
        return tok

    def _scan(self, mode: str) -> tuple[str | None, int]:
        text, pos = self.text, self.pos
        if pos >= len(text):
            return None, pos
        if text[pos] == '"':
            m = _STRING.match(text, pos)
            if not m:
                raise self.error("unterminated string")
            return text[pos:m.end()], m.end()
        if mode == EXPR:
            for rx in (_EXPR_NAME, _NUMBER, _OPERATOR):
                m = rx.match(text, pos)
                if m:
                    return m.group(), m.end()
        else:
            m = _MODES[mode].match(text, pos)
            if m:
                return m.group(), m.end()
            m = _OPERATOR.match(text, pos)
            if m:
                return m.group(), m.end()
        raise self.error(f"unexpected character {text[pos]!r}")

    def expect(self, want: str, mode: str = EXPR) -> str:
        tok = self.take(mode)
        if tok != want:
            raise self.error(f"expected '{want}', found '{tok}'", back=len(tok))
        return tok

    def accept(self, want: str, mode: str = EXPR) -> bool:
        if self.peek(mode) == want:
            self.take(mode)
            return True
        return False

    def error(self, what: str, back: int = 0) -> InputError:
        pos = max(0, self.pos - back)
        line = self.text.count("\n", 0, pos) + 1
        return InputError(self.name, f"line {line}: {what}", pos)


def unquote(tok: str) -> str:
    return tok[1:-1] if tok.startswith('"') and tok.endswith('"') else tok


# -- the statements -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Assignment:
    """`name = expr;` (op '=', '+=', …), PROVIDE / PROVIDE_HIDDEN / HIDDEN forms.
    `value` is the constant when the expression folds without addresses, else None."""
    name: str
    value: int | None
    op: str = "="
    provide: bool = False
    hidden: bool = False
    section: str | None = None       # the output section it sits in, None at script level


@dataclass(frozen=True, slots=True)
class InputFile:
    """One name in INPUT/GROUP/STARTUP (`-lNAME` is a library); `group` numbers a GROUP."""
    name: str
    group: int | None = None
    as_needed: bool = False


@dataclass(frozen=True, slots=True)
class SectionPattern:
    pattern: str
    exclude_files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InputSectionRule:
    """`FILE(SECTIONS…)` inside an output section; KEEP(...) sets keep."""
    file: str
    exclude_files: tuple[str, ...]
    sections: tuple[SectionPattern, ...]
    keep: bool
    output: str


@dataclass
class Script:
    name: str
    entry: str | None = None
    extern: list[str] = field(default_factory=list)
    inputs: list[InputFile] = field(default_factory=list)
    search_dirs: list[str] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    rules: list[InputSectionRule] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)      # output section names, in order


# -- expressions --------------------------------------------------------------------------------
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
_OPS = {"||": lambda a, b: int(bool(a) or bool(b)), "&&": lambda a, b: int(bool(a) and bool(b)),
        "|": int.__or__, "^": int.__xor__, "&": int.__and__, "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
        ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
        ">=": lambda a, b: int(a >= b), "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
        "+": int.__add__, "-": int.__sub__, "*": int.__mul__,
        "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None}
_FOLDABLE = {"ABSOLUTE": lambda a: a[0], "MAX": max, "MIN": min}


def number(tok: str) -> int:
    """ld.info "Constants": 0x.. hex, $.. or ..h hex, ..o octal, ..b binary, K/M suffixes."""
    mult = 1
    if tok[-1] in "Kk":
        mult, tok = 1024, tok[:-1]
    elif tok[-1] in "Mm":
        mult, tok = 1024 * 1024, tok[:-1]
    low = tok.lower()
    if low.startswith("0x"):
        v = int(low, 16)
    elif low.startswith("$"):
        v = int(low[1:], 16)
    elif low[-1] in "hx":
        v = int(low[:-1], 16)
    elif low[-1] == "o":
        v = int(low[:-1], 8)
    elif low[-1] == "b" and set(low[:-1]) <= {"0", "1"}:
        v = int(low[:-1], 2)
    elif low[-1] == "d":
        v = int(low[:-1], 10)
    elif low.startswith("0") and len(low) > 1 and low.isdigit():
        v = int(low, 8)
    else:
        v = int(low, 10)
    return v * mult


class _Expr:
    """Folds an expression to an int when it needs no address (else None)."""

    def __init__(self, lex: Lexer, consts: dict[str, int | None]):
        self.lex, self.consts = lex, consts

    def parse(self, level: int = 0) -> int | None:
        if level == len(_BINARY):
            return self.unary()
        if level == 0:
            cond = self.parse(1)
            if self.lex.accept("?"):
                a = self.parse(0)
                self.lex.expect(":")
                b = self.parse(0)
                return None if cond is None or a is None or b is None else (a if cond else b)
            return cond
        left = self.parse(level + 1)
        while self.lex.peek() in _BINARY[level]:
            op = self.lex.take()
            right = self.parse(level + 1)
            left = None if left is None or right is None else _OPS[op](left, right)
        return left

    def unary(self) -> int | None:
        lex = self.lex
        tok = lex.take()
        if tok in ("-", "!", "~", "+"):
            v = self.unary()
            if v is None:
                return None
            return {"-": -v, "!": int(not v), "~": ~v, "+": v}[tok]
        if tok == "(":
            v = self.parse()
            lex.expect(")")
            return v
        if tok[0].isdigit() or (tok[0] == "$" and len(tok) > 1):
            try:
                return number(tok)
            except ValueError:
                raise lex.error(f"bad number '{tok}'", back=len(tok)) from None
        if tok.startswith('"'):
            return None
        if not _EXPR_NAME.fullmatch(tok):
            raise lex.error(f"expected an expression, found '{tok}'", back=len(tok))
        if lex.peek() == "(":                     # a builtin: ALIGN, ADDR, SIZEOF, …
            lex.take()
            args = []
            if not lex.accept(")"):
                while True:
                    if lex.peek(WILD) and tok in ("ADDR", "LOADADDR", "SIZEOF", "ALIGNOF",
                                                   "ORIGIN", "LENGTH", "DEFINED",
                                                   "SEGMENT_START", "CONSTANT", "NEXT",
                                                   "SIZEOF_HEADERS") and not args:
                        lex.take(WILD)
                        args.append(None)
                    else:
                        args.append(self.parse())
                    if lex.accept(")"):
                        break
                    lex.expect(",")
            fold = _FOLDABLE.get(tok)
            if fold and args and None not in args:
                return fold(args)
            return None
        if tok == ".":
            return None
        return self.consts.get(tok)


# -- the parser -----------------------------------------------------------------------------------
_ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "<<=", ">>=", "&=", "|=", "^=")
_SORTS = ("SORT", "SORT_BY_NAME", "SORT_BY_ALIGNMENT", "SORT_BY_INIT_PRIORITY", "SORT_NONE",
          "REVERSE")
_SKIP_BLOCKS = ("MEMORY", "PHDRS", "VERSION")
_IGNORED_CALLS = ("OUTPUT_FORMAT", "OUTPUT_ARCH", "TARGET", "OUTPUT", "REGION_ALIAS",
                  "NOCROSSREFS", "NOCROSSREFS_TO", "LD_FEATURE", "ASSERT", "FORCE_GROUP_ALLOCATION",
                  "INSERT")
_DATA = ("BYTE", "SHORT", "LONG", "QUAD", "SQUAD", "FILL", "ASCIZ")


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
        elif tok in _IGNORED_CALLS or tok in _DATA or tok == "CREATE_OBJECT_SYMBOLS" \
                or tok == "CONSTRUCTORS" or tok == "FORCE_COMMON_ALLOCATION" \
                or tok == "INHIBIT_COMMON_ALLOCATION":
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
        value = _Expr(self.lex, self.consts).parse()
        if op != "=":                            # `a += 4`: folds only from a known a
            old, fold = self.consts.get(name), _OPS.get(op[:-1])
            value = None if old is None or value is None or fold is None else fold(old, value)
        if name != ".":                          # `.` moves the location counter only
            if not provide:
                self.consts[name] = value
            self.s.assignments.append(Assignment(name, value, op, provide, hidden, section))
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
            self._skip_balanced_body()
            self._section_tail()
            return
        self._skip_until(":")                   # address, (NOLOAD) / (TYPE = …)
        lex.expect(":")
        while lex.peek(WILD) != "{":            # AT(...), ALIGN(...), SUBALIGN, ONLY_IF_*
            t = lex.take(WILD)
            if lex.peek() == "(" and t in ("AT", "ALIGN", "SUBALIGN", "ALIGN_WITH_INPUT"):
                self._skip_balanced("(", ")")
        lex.expect("{", WILD)
        self.s.outputs.append(name)
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

    def _skip_balanced_body(self):
        self._skip_balanced("{", "}")

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
            elif t is not None and t.startswith(">") and len(t) > 1:
                lex.take(WILD)
            elif t is not None and t.startswith(":") and len(t) > 1:
                lex.take(WILD)
            elif t == ":":
                lex.take(WILD)
                lex.take(WILD)
            elif t is not None and t.startswith("="):
                lex.take(WILD)
                if t == "=":
                    _Expr(lex, self.consts).parse()
            elif t == ",":
                lex.take(WILD)
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
        if lex.accept("(", WILD):
            sections = self._section_patterns()
        if file in _SORTS and not sections:     # ld 2.40 accepts SORT(CONSTRUCTORS)
            pass
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

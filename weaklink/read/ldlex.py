"""GNU ld linker-script tokens and expressions (ld/ldlex.l, ld/ldexp.c), for ldscript.py.

Like ld's lexer, tokens depend on where the parser is (ldlex.l start states): an expression
splits `a-b` into three tokens, while a file name or an input-section pattern keeps
`*crtbegin?.o` or `.text.*` whole. The parser asks the lexer for the mode it needs.
Expressions are folded to a constant when they need no address (ld.info "Expressions").
"""
from __future__ import annotations

import re

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
_MODES = {EXPR: (_EXPR_NAME, _NUMBER, _OPERATOR), WILD: (_WILD, _OPERATOR),
          NAME: (_NAME, _OPERATOR)}


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
        for rx in _MODES[mode]:
            m = rx.match(text, pos)
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


# -- expressions --------------------------------------------------------------------------------
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]
OPS = {"||": lambda a, b: int(bool(a) or bool(b)), "&&": lambda a, b: int(bool(a) and bool(b)),
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


class Expr:
    """Folds an expression to an int when it needs no address (else None). `names` are the
    symbols it reads, `calls` counts builtins (ALIGN, ADDR, …) it uses."""

    def __init__(self, lex: Lexer, consts: dict[str, int | None]):
        self.lex, self.consts = lex, consts
        self.names: list[str] = []
        self.calls = 0

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
            left = None if left is None or right is None else OPS[op](left, right)
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
            self.calls += 1
            fold = _FOLDABLE.get(tok)
            if fold and args and None not in args:
                return fold(args)
            return None
        if tok == ".":
            self.calls += 1                       # the location counter: an address
            return None
        self.names.append(tok)
        return self.consts.get(tok)

"""The parts of a demangled C++ name: scope, unqualified name, parameter list, qualifiers.

`parse("ns::Foo::bar(int) const")` gives scope `ns::Foo`, name `bar`, params `int`, quals
`const`. The text is what the Itanium demangler prints (c++filt, __cxa_demangle): template
functions are printed with their return type first (`void ns::f<int>(int)`), operators keep
their symbols (`operator<<`, `operator()`), anonymous namespaces read `(anonymous namespace)`
and lambdas `{lambda(int)#1}`. Special names (vtables, typeinfo, guard variables, thunks) and
local entities (`f()::x`) are told apart by their mangled prefix first (SPECIAL_PREFIXES); this
module parses the names of functions and variables.
"""
from __future__ import annotations

import re
from collections import namedtuple

# Itanium C++ ABI 5.1.4 special names, and 5.1.6 local entities (`_ZZ`): data and code the
# compiler emits on its own. Each is weak in an image only because it sits in a COMDAT group
# (vague linkage, ABI 5.2): several objects define it and ld keeps one.
SPECIAL_PREFIXES = (
    ("_ZTV", "vtable"), ("_ZTT", "VTT"), ("_ZTI", "typeinfo"), ("_ZTS", "typeinfo name"),
    ("_ZTC", "construction vtable"), ("_ZTh", "thunk"), ("_ZTv", "thunk"), ("_ZTc", "thunk"),
    ("_ZTW", "TLS wrapper function"), ("_ZTH", "TLS init function"),
    ("_ZGV", "guard variable"), ("_ZGR", "reference temporary"), ("_ZGTt", "transaction clone"),
    ("_ZZ", "static data of an inline function"),
)

_BRACKETS = {"(": ")", "<": ">", "[": "]", "{": "}"}
_ANONYMOUS = "(anonymous namespace)"
_OPERATOR_SYMBOLS = set("<>=!+-*/%^&|~,")
# A complete name in a demangled text: identifiers (or anonymous namespaces) joined by `::`.
NAME_TOKEN = re.compile(r"(?:\(anonymous namespace\)|[A-Za-z_]\w*)"
                        r"(?:::(?:\(anonymous namespace\)|[A-Za-z_]\w*))*")


class CxxName(namedtuple("CxxName", "scope name params quals template inner")):
    """scope: the enclosing namespaces or classes (`""` at global scope), inner: the last of
    them (`Foo<int>` in `ns::Foo<int>::bar`); name: the
    unqualified name with its template arguments; params: the parameter list text of a
    function, None for data; quals: what follows the parameter list (`const`, `&`, ...);
    template: template arguments appear in the name or its scope (an instantiation)."""

    __slots__ = ()

    @property
    def structor(self) -> bool:
        """A constructor or destructor: named after its class (without template args)."""
        if not self.scope:
            return False
        cls = _strip_template(self.inner)
        return self.name in (cls, "~" + cls)

    @property
    def signature(self) -> tuple[str | None, str]:
        """What must match for one function to stand in for another: parameters and
        qualifiers (a data name has none)."""
        return self.params, self.quals


_SPECIAL_STARTS = tuple(p for p, _ in SPECIAL_PREFIXES)


def special_kind(raw: str) -> str | None:
    """What a special or local mangled name is (SPECIAL_PREFIXES), None for the others."""
    if not raw.startswith(_SPECIAL_STARTS):
        return None
    return next(what for prefix, what in SPECIAL_PREFIXES if raw.startswith(prefix))


def _strip_template(text: str) -> str:
    cut = text.find("<")
    return text if cut < 0 else text[:cut]


def _close(text: str, i: int) -> int:
    """Index of the bracket that closes the one at `i`, -1 when unbalanced. A `>` closes only
    a `<` (`A<(1>2)>` holds a `>` inside parentheses)."""
    stack = []
    for j in range(i, len(text)):
        c = text[j]
        if c in _BRACKETS:
            stack.append(_BRACKETS[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return j
    return -1


def _operator_end(text: str, i: int) -> int:
    """End of an operator name whose `operator` keyword ends at `i`."""
    n = len(text)
    if text.startswith("()", i) or text.startswith("[]", i):
        return i + 2
    if text.startswith('""', i):                          # operator"" _x: a literal operator
        j = i + 2 + (text.startswith(" ", i + 2))
        while j < n and (text[j].isalnum() or text[j] == "_"):
            j += 1
        return j
    if i < n and text[i] in _OPERATOR_SYMBOLS:
        j = i
        while j < n and text[j] in _OPERATOR_SYMBOLS:
            j += 1
        if text.startswith("->*", i):
            j = i + 3
        return j
    # new, delete, new[], delete[], or a conversion `operator Foo<int>`: up to the parameters
    j = i
    while j < n and text[j] != "(":
        if text[j] in "<[{":
            k = _close(text, j)
            if k < 0:
                return n
            j = k
        j += 1
    return j


_PLAIN = re.compile(r"[\w:]+")             # a name without templates, operators, spaces


def parse(text: str) -> CxxName | None:
    """The parts of a demangled function or variable name; None when the text is not one
    (unbalanced brackets)."""
    cut = text.find("(")
    head = text if cut < 0 else text[:cut]
    if _PLAIN.fullmatch(head) and "operator" not in head:     # most names: split them
        scope, _, name = head.rpartition("::")
        inner = scope.rpartition("::")[2]
        if cut < 0:
            return CxxName(scope, name, None, "", False, inner)
        end = _close(text, cut)
        if end < 0:
            return None
        return CxxName(scope, name, text[cut + 1:end], text[end + 1:].strip(), False, inner)
    comps, cur, template, i, n = [], "", False, 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("::", i):
            comps.append(cur)
            cur, i = "", i + 2
        elif not cur and text.startswith(_ANONYMOUS, i):
            cur, i = _ANONYMOUS, i + len(_ANONYMOUS)
        elif not cur and text.startswith("operator", i) and not (
                i + 8 < n and (text[i + 8].isalnum() or text[i + 8] == "_")):
            j = _operator_end(text, i + 8)
            if text.startswith(" <", j):                  # `operator< <int>`: template args
                j += 1
            cur, i = text[i:j], j
        elif c in "<[{":
            j = _close(text, i)
            if j < 0:
                return None
            template |= c == "<"
            cur, i = cur + text[i:j + 1], j + 1
        elif c == "(":
            j = _close(text, i)
            if j < 0:
                return None
            return CxxName("::".join(comps), cur, text[i + 1:j], text[j + 1:].strip(), template,
                           comps[-1] if comps else "")
        elif c == " ":
            # a space outside brackets ends a return type (template functions print one)
            comps, cur, i = [], "", i + 1
        else:
            cur, i = cur + c, i + 1
    return CxxName("::".join(comps), cur, None, "", template, comps[-1] if comps else "")

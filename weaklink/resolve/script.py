"""The little of a GNU ld linker script that decides symbol resolution.

Only these commands are read; everything else in the script (MEMORY, SECTIONS layout,
plain assignments) is ignored:
  ENTRY(sym)          the entry symbol, entered as undefined like -e (ld.info "Entry Point")
  EXTERN(sym ...)     entered as undefined like -u
  PROVIDE(sym = ...)  defined at the end only if referenced and not defined by any input
  PROVIDE_HIDDEN      (a common counts as defined; linker_semantics.md §3.4)
  sym = expr;         a plain assignment (anywhere outside MEMORY, also HIDDEN(sym = expr)):
                      like --defsym at the script's place on the command line (ld evaluates
                      script assignments while it opens the inputs, ldlang.c open_input_bfds).
                      The value is not evaluated (reported as 0).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from weaklink.errors import read_input

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_ENTRY = re.compile(r"\bENTRY\s*\(\s*([^\s()]+)\s*\)")
_EXTERN = re.compile(r"\bEXTERN\s*\(([^)]*)\)")
_PROVIDE = re.compile(r"\bPROVIDE(?:_HIDDEN)?\s*\(\s*([A-Za-z_.$][\w.$]*)\s*=")
_PROVIDE_CALL = re.compile(r"\bPROVIDE(?:_HIDDEN)?\s*\([^)]*\)")
_MEMORY = re.compile(r"\bMEMORY\s*\{[^}]*\}")
_ASSIGN = re.compile(r"(?<![\w.$])([A-Za-z_$][\w.$]*)\s*=(?!=)[^;]*;")


@dataclass(frozen=True, slots=True)
class ScriptSymbols:
    entry: str | None
    extern: tuple[str, ...]
    provide: tuple[str, ...]
    assigned: tuple[str, ...] = ()


def read_script(path: str | Path) -> ScriptSymbols:
    text = read_input(path, text=True, what="linker script file")
    return parse_script(text)


def parse_script(text: str) -> ScriptSymbols:
    text = _COMMENT.sub(" ", text)
    entries = _ENTRY.findall(text)
    extern = tuple(s for group in _EXTERN.findall(text) for s in group.replace(",", " ").split())
    plain = _MEMORY.sub(" ", _PROVIDE_CALL.sub(" ", text))
    assigned = tuple(dict.fromkeys(_ASSIGN.findall(plain)))
    return ScriptSymbols(entries[-1] if entries else None, extern, tuple(_PROVIDE.findall(text)),
                         assigned)

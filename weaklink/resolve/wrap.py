"""GNU ld's --wrap=SYM: which hash-table name an undefined reference resolves through.

bfd/linker.c bfd_wrapped_link_hash_lookup, called only for undefined symbols of an input
(elflink.c _bfd_elf_merge_symbol looks definitions and commons up unwrapped). Verified on
arm-none-eabi-ld 2.40:
  - an undefined reference (strong or weak) to SYM is entered as `__wrap_SYM`;
  - an undefined reference to `__real_SYM` is entered as `SYM`;
  - the wrap test comes first: with --wrap=foo --wrap=__real_foo, `__real_foo` → `__wrap___real_foo`;
  - definitions, commons and -u/-e/--require-defined roots are never renamed (so a call
    inside the file that defines SYM is not wrapped);
  - archive extraction sees the renamed name (a member defining `__wrap_SYM` is pulled);
  - ld reports undefined references under the renamed name;
  - -y: ld's notice callback fires only if the object's own name is traced (or --cref is on:
    notice_all), and prints the line only if the renamed name is traced (ldmain.c notice).
"""
from __future__ import annotations

from collections.abc import Iterable

WRAP_PREFIX = "__wrap_"
REAL_PREFIX = "__real_"


class Wrap:
    """The --wrap set of one link; `rename(name)` is the name an undefined reference uses."""

    def __init__(self, symbols: Iterable[str] = ()):
        self.symbols = frozenset(symbols)

    def __bool__(self) -> bool:
        return bool(self.symbols)

    def rename(self, name: str) -> str:
        if name in self.symbols:
            return WRAP_PREFIX + name
        if name.startswith(REAL_PREFIX) and name[len(REAL_PREFIX):] in self.symbols:
            return name[len(REAL_PREFIX):]
        return name

    def originals(self, renamed: str) -> tuple[str, ...]:
        """The names an undefined reference may have had in its object to land on `renamed`."""
        out = [renamed] if self.rename(renamed) == renamed else []
        if renamed.startswith(WRAP_PREFIX) and renamed[len(WRAP_PREFIX):] in self.symbols:
            out.append(renamed[len(WRAP_PREFIX):])
        if renamed in self.symbols:
            out.append(REAL_PREFIX + renamed)
        return tuple(out)

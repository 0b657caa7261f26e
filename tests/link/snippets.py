"""Tiny ARM assembly builders for link scenarios, and the toolchain skip marker."""
from __future__ import annotations

import pytest

from weaklink import toolchain

needs_toolchain = pytest.mark.skipif(
    not toolchain.available(),
    reason="arm-none-eabi toolchain not installed (apt-get install gcc-arm-none-eabi "
           "binutils-arm-none-eabi); differential tests need the real ld")


def data(sym: str, weak: bool = False, size: int = 4) -> str:
    bind = ".weak" if weak else ".global"
    return f".data\n{bind} {sym}\n.type {sym},%object\n.size {sym},{size}\n{sym}: .space {size}\n"


def func(sym: str, weak: bool = False) -> str:
    bind = ".weak" if weak else ".global"
    return f".text\n{bind} {sym}\n.type {sym},%function\n{sym}: bx lr\n"


def comm(sym: str, size: int) -> str:
    return f".comm {sym},{size},4\n"


def ref(sym: str, weak: bool = False) -> str:
    return (f".weak {sym}\n" if weak else "") + f".text\n.word {sym}\n"


def start(*refs: str, weak: tuple[str, ...] = ()) -> str:
    """A main object: defines _start and references `refs` (strongly) and `weak` (weakly)."""
    body = ".text\n.global _start\n.type _start,%function\n_start: bx lr\n"
    return body + "".join(ref(r) for r in refs) + "".join(ref(w, True) for w in weak)

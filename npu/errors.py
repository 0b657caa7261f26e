"""Bad input for the emulator: the same shape as :class:`weaklink.errors.InputError`.

Re-exported so that ``npu`` callers catch one type, whichever package raised it.
"""
from __future__ import annotations

from weaklink.errors import InputError

__all__ = ["InputError"]

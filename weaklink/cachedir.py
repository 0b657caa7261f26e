"""Where weaklink keeps what it builds or derives: the fixture builds, ld's default scripts.

A bottom module (it imports nothing of weaklink) so that any layer can find the cache without
importing the code that fills it.
"""
from __future__ import annotations

import os
from pathlib import Path

# The checkout (or the site-packages directory of an installed package).
REPO = Path(__file__).resolve().parent.parent


def cache_dir(root: str | Path | None = None) -> Path:
    """Where builds go: `root`, $WEAKLINK_CACHE, the checkout's .cache/, or (an installed
    package, whose directory is not ours to write) $XDG_CACHE_HOME/weaklink."""
    default = REPO / ".cache"
    if not (REPO / "fixtures").is_dir():
        default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "weaklink"
    base = Path(root or os.environ.get("WEAKLINK_CACHE") or default)
    return base / "fixtures"

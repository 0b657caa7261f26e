"""`python -m weaklink.analyze ARGS` = `weaklink analyze ARGS`, loading no other subcommand
(a lean entry point for scripts and CI loops that run analyze many times)."""
from __future__ import annotations

import sys

from weaklink.cli import main

if __name__ == "__main__":
    sys.exit(main(["analyze", *sys.argv[1:]], commands=("analyze",)))

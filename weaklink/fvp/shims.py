"""`weaklink fvp --install-shims DIR`: executables named as the FVPs, so that the frameworks'
scripts run unmodified with DIR on PATH. Each execs this weaklink's interpreter on this
weaklink (its package directory first on PYTHONPATH), with the model it stands for."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from weaklink.errors import UsageError
from weaklink.fvp.params import MODELS

SCRIPT = """#!/bin/sh
# {model}, run on QEMU's mps3-an547 with the Ethos-U emulated (weaklink fvp; docs/fvp.md).
PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} exec {python} -m weaklink.cli fvp --model {model} "$@"
"""


def install(directory: str) -> list[Path]:
    where = Path(directory)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--install-shims {directory}: {e.strerror}") from None
    root = Path(__file__).resolve().parents[2]
    written = []
    for model in MODELS:
        path = where / model
        path.write_text(SCRIPT.format(model=model, root=shlex.quote(str(root)),
                                      python=shlex.quote(sys.executable)))
        path.chmod(0o755)
        written.append(path)
    return written


"""The cyclic garbage collector paused while a link is modelled."""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic collector: the model allocates many small acyclic records, and
    collector passes over them only cost time (reference counting frees them)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

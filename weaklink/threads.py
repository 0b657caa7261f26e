"""A few functions run at once, one thread each, without concurrent.futures: its import pulls
in logging, about 8 ms of a command's start-up. numpy's column work releases the GIL, so two
such threads share the machine's cores."""
from __future__ import annotations

import threading
from collections.abc import Callable


def run_all(*functions: Callable[[], object]) -> list:
    """Call each function in its own thread and return their results in argument order. If
    any raised, the exception of the first of them (in argument order) is raised here."""
    results: list = [None] * len(functions)
    errors: list = [None] * len(functions)

    def work(k: int, function) -> None:
        try:
            results[k] = function()
        except BaseException as exc:      # handed to the caller's thread
            errors[k] = exc

    threads = [threading.Thread(target=work, args=(k, f), daemon=True)
               for k, f in enumerate(functions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results

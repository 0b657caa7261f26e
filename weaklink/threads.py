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


def in_order(function: Callable[[int, object], object], count: int, *, lanes: int = 2,
             ahead: int = 2, state: Callable[[], object] = lambda: None,
             release: Callable[[object], object] = lambda state: None):
    """function(k, state) for k in 0..count-1, yielded in order of k, computed by `lanes`
    threads: thread i takes every k with k % lanes == i, with a `state` of its own (scratch
    memory, given to `release` when the thread is done), and runs at most `ahead` results
    in front of the consumer, so that what was consumed can be freed and its memory used
    again. An exception in a thread is raised here when its turn comes; a consumer that
    stops early stops the threads."""
    import queue
    outs = [queue.Queue(maxsize=ahead) for _ in range(lanes)]
    stop = threading.Event()

    def work(lane: int) -> None:
        mine = state()
        for k in range(lane, count, lanes):
            if stop.is_set():
                return
            try:
                item = (function(k, mine), None)
            except BaseException as exc:      # handed to the consumer, in its turn
                item = (None, exc)
            while not stop.is_set():
                try:
                    outs[lane].put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if item[1] is not None:
                return
        release(mine)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(lanes)]
    for t in threads:
        t.start()
    try:
        for k in range(count):
            result, exc = outs[k % lanes].get()
            if exc is not None:
                raise exc
            yield result
    finally:
        stop.set()
        for t in threads:
            t.join()

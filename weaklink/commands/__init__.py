"""The `weaklink` subcommands, one module each (see weaklink.cli), and the process settings
they share."""
from __future__ import annotations

# Fresh memory an analysis touches per .symtab entry of a large image (numpy's columns, the
# JSON blocks): about 170 bytes (68 MB of page faults for the 400k entries of the 200k-symbol
# benchmark image). The heap warmed for it is capped: at 800k symbols more cost more RSS than
# they saved time.
HEAP_PER_ENTRY = 160
HEAP_MOST = 128 << 20


def prepare_for_images(*paths) -> list:
    """Process settings for a command that analyses linked images (analyze, diff): one BLAS
    thread and, when an image is large enough for numpy's engine, the heap its analysis will
    use faulted in on a spare core while numpy is imported (weaklink.heap). Returns the images
    read (weaklink.read.image.Image), to be analysed without reading them again; an image
    that cannot be read is left for the command to report, and the list stops before it.

    One BLAS thread: at numpy's import OpenBLAS starts a thread per core, and they spin for a
    while waiting for work. Measured on a 2-core machine, importing numpy cost 0.24 s of CPU
    for 0.14 s of wall, against 0.14 s with one BLAS thread: CPU taken from the column work
    and the JSON threads, for linear algebra these commands never do. A user's own setting is
    kept; it has no effect once numpy is imported (a caller of weaklink.cli.main in a process
    that already uses numpy)."""
    import os
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from weaklink.errors import InputError
    from weaklink.read.image import Image
    images, entries = [], 0
    for path in paths:
        try:
            image = Image.from_path(path)
            entries += image.elf.symtab_span[1] if image.large else 0
        except InputError:
            break
        images.append(image)
    if entries:
        from weaklink import heap
        heap.warm(min(HEAP_PER_ENTRY * entries, HEAP_MOST))
    return images

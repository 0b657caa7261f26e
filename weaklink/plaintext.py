"""Human report text: aligned columns and byte sizes, written once for every command's table."""
from __future__ import annotations


def aligned(rows, indent: str = "") -> list[str]:
    """Rows of cells as lines, each column as wide as its widest cell, two spaces apart."""
    widths = [max(len(c) for c in col) for col in zip(*rows)]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def size_text(n: int | None) -> str:
    if n is None:
        return "size unknown"
    return f"{n // 1024} KB" if n and n % 1024 == 0 else f"{n} B"

"""The analyze fields of one changed symbol (`before` / `after`), built from the compared
columns: the same facts as `weaklink analyze --symbol` (weaklink.analyze.analysis.Query), without
a name lookup over the whole symbol table per symbol."""
from __future__ import annotations

from weaklink.demangle import demangle
from weaklink.analyze.analysis import Query
from weaklink.analyze.values import PointsTo
from weaklink.diff.columns import Columns


class Sides:
    """Query records for rows of one analysed image. `attribute` is how many rows may still
    get a defining unit from DWARF or the map (one lookup each); the rest get none."""

    def __init__(self, report, cols: Columns, attribution, attribute: int):
        self.report, self.cols, self.attribution = report, cols, attribution
        self.budget = attribute
        self.unattributed = 0

    def query(self, row: int) -> Query:
        c, table = self.cols, self.report.table
        image = table.image
        sym = image.symbol(int(table.cols.index[row]))
        sec = int(c.section[row])
        reg = int(c.region[row])
        t = c.target
        points = None
        if t.kind[row]:
            name = t.name(row)
            points = PointsTo(name.decode("utf-8", "replace") if name is not None else None,
                              int(t.offset[row]), c.region_names[int(t.region[row])]
                              if t.region[row] >= 0 else None)
        return Query(sym.name, True, sym.name, demangle(sym.name),
                     "weak" if c.weak[row] else "global", sym.type_name, sym.address, sym.size,
                     c.section_names[sec] if sec < len(c.section_names) else None,
                     c.region_names[reg] if reg >= 0 else None,
                     int(c.value[row]) if c.has_value[row] else None, points,
                     self.defined_in(sym), image.segment_at(sym.address))

    def defined_in(self, sym) -> str | None:
        if self.budget <= 0:
            self.unattributed += 1
            return None
        self.budget -= 1
        return self.attribution.defined_in(sym)

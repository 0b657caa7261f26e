"""`--plot FILE.png`: the memory map as a picture.

One horizontal bar per region, each drawn to its own length (region sizes span five orders
of magnitude on Corstone-320, so a shared axis would hide the small ones). The largest
allocated sections are placed and labelled above the bar, the queried symbols below it, and
a queried pointer draws an arrow to its target when that target is in a region.
"""
from __future__ import annotations

from weaklink.analyze.analysis import AnalysisReport
from weaklink.errors import require

SECTIONS_PER_REGION = 4
MIN_WIDTH = 0.006          # fraction of the bar: tiny sections stay visible
ROW = 1.4                  # vertical distance between region bars (bar height 0.36)
LABEL_GAP = 0.14           # fraction of the bar between two section labels
COLORS = ("#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd")


def _frac(region, address: int) -> float:
    return (address - region.origin) / region.length if region.length else 0.0


def _draw_region(ax, y, region, use, color_of) -> None:
    ax.barh(y, 1.0, height=0.36, color="#eeeeee", edgecolor="#888888", linewidth=0.8)
    used = use.used if use else 0
    ax.text(-0.02, y, f"{region.name}\n{region.origin:#010x}\n{used:#x} / {region.length:#x}",
            ha="right", va="center", fontsize=8, family="monospace")
    biggest = use.sections[:SECTIONS_PER_REGION] if use else ()
    label_x = -1.0
    for name, addr, size in sorted(biggest, key=lambda s: s[1]):
        left, width = _frac(region, addr), max(size / region.length, MIN_WIDTH)
        ax.barh(y, width, left=left, height=0.36, color=color_of(name), alpha=0.85)
        # Labels go left to right in address order, never closer than LABEL_GAP.
        label_x = max(left, label_x + LABEL_GAP)
        ax.annotate(f"{name} {size:#x}", (left + width / 2, y + 0.18),
                    xytext=(label_x, y + 0.36), textcoords="data", ha="left", va="bottom",
                    fontsize=7, arrowprops=dict(arrowstyle="-", color="#999999", lw=0.5))


def _draw_symbols(ax, ys, report: AnalysisReport) -> None:
    placed: dict[str, int] = {}
    for q in report.queried.values():
        region = report.regions.find(q.region) if q.found and q.region else None
        if region is None:
            continue
        x, y = _frac(region, q.address), ys[region.name]
        k = placed[region.name] = placed.get(region.name, -1) + 1
        ax.plot([x], [y], marker="v", color="black", markersize=7, zorder=5)
        # Labels fan out to the right, below the bar, with a leader line to the marker.
        ax.annotate(f"{q.demangled or q.name} [{q.binding}]\n{q.address:#010x} size {q.size:#x}",
                    (x, y - 0.05),
                    xytext=(0.03 + 0.25 * (k % 4), y - 0.42 - 0.05 * (k // 4)),
                    textcoords="data", ha="left", va="top", fontsize=7.5, fontweight="bold",
                    arrowprops=dict(arrowstyle="-", color="#555555", lw=0.6))
        p = q.points_to
        target = report.regions.find(p.region) if p and p.region else None
        if target is not None:
            tx = _frac(target, q.value & ~1)
            ax.annotate("", (tx, ys[target.name] + 0.18), (x, y + 0.18), zorder=4,
                        arrowprops=dict(arrowstyle="->", color="#c44e52", lw=1.4,
                                        connectionstyle="arc3,rad=-0.5"))


def plot(report: AnalysisReport, path: str) -> None:
    matplotlib = require("matplotlib", "--plot", "plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regions = report.regions.regions
    fig, ax = plt.subplots(figsize=(12, 1.6 * max(len(regions), 1) + 1.2))
    ys = {r.name: ROW * (len(regions) - 1 - i) for i, r in enumerate(regions)}
    palette: dict[str, str] = {}

    def color_of(name: str) -> str:
        return palette.setdefault(name, COLORS[len(palette) % len(COLORS)])

    for r in regions:
        _draw_region(ax, ys[r.name], r, report.usage.get(r.name), color_of)
    _draw_symbols(ax, ys, report)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.9, ROW * (len(regions) - 1) + 0.8)
    ax.set_yticks([])
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["origin", "25%", "50%", "75%", "end"])
    ax.set_xlabel("offset within each region (each bar drawn to its own length)")
    ax.set_title(f"{report.file}  —  regions from {report.regions.source}", fontsize=10)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.subplots_adjust(left=0.16, right=0.98)
    fig.savefig(path, dpi=110)
    plt.close(fig)

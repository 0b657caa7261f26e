"""``npu run --plot``: a timeline of kernel operations and DMA, one lane per AXI port."""
from __future__ import annotations

from pathlib import Path

from npu.report import RunResult
from npu.errors import require

COLOURS = {"CONV": "#4c72b0", "DEPTHWISE": "#55a868", "POOL": "#c44e52", "ELEMENTWISE": "#8172b2",
           "RESIZE": "#ccb974", "DMA": "#dd8452"}


def draw_timeline(ax, result: RunResult) -> None:
    """Draw the run on `ax`: one lane for kernels, one for DMA, one per AXI port."""
    from matplotlib.patches import Patch

    ports = sorted({p for t in result.timeline for p in t["ports"]})
    lanes = ["NPU kernels", "DMA"] + [f"{p} port" for p in ports]
    scale = 1e6 / result.core_clock if result.core_clock else 1.0     # cycles -> microseconds
    for t in result.timeline:
        span = ((t["start"] * scale, max(t["end"] - t["start"], 1) * scale),)
        colour = COLOURS.get(t["op"], "grey")
        rows = [1 if t["op"] == "DMA" else 0] + [2 + ports.index(p) for p in t["ports"]]
        for row in rows:
            ax.broken_barh(span, (row - 0.4, 0.8), facecolors=colour, edgecolors="white", linewidth=0.3)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel(f"time (µs at {result.core_clock / 1e6:.0f} MHz)")
    title = f"{result.accelerator} / {result.system_config} / {result.memory_mode} on {result.soc}: {result.status}"
    ax.set_title(title, fontsize=10)
    used = sorted({t["op"] for t in result.timeline})
    ax.legend(handles=[Patch(color=COLOURS.get(o, "grey"), label=o) for o in used],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.grid(axis="x", alpha=0.3)


def plot_timeline(result: RunResult, path: str | Path) -> Path:
    matplotlib = require("matplotlib", "--plot", "plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lanes = 2 + len({p for t in result.timeline for p in t["ports"]})
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.6 * lanes))
    draw_timeline(ax, result)
    if result.status != "ok" and result.diagnosis:
        fig.text(0.01, 0.01, result.diagnosis[:200], fontsize=7, color="darkred", va="bottom")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)

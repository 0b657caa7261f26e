"""`weaklink check --plot FILE.png`: where the NPU's regions landed, and what the NPU then did.

Top: one bar per SoC memory (each drawn to its own length), with every base-address region
placed as a span [base, base + size) and labelled with the symbol it came from; a base that
falls in no memory (0 for a missing fast scratch) is drawn in red beside the bars. Bottom: the
NPU timeline (kernels, DMA, AXI ports) from the emulator, with the verdict.
"""
from __future__ import annotations

import textwrap

from npu.plot import draw_timeline
from npu.socfile import load_soc
from weaklink.check.report import CheckReport
from weaklink.errors import require

REGION_COLOURS = ("#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#dd8452", "#937860")
MIN_WIDTH = 0.008


def _label(base) -> str:
    src = base.symbol.name if base.symbol else base.note.split(":")[0]
    return f"r{base.region} {base.name}: {base.address:#010x} +{base.size:#x} ({src})"


def _memory_panel(ax, report: CheckReport) -> None:
    from matplotlib.patches import Patch

    soc = load_soc(report.soc)
    memories = list(soc.memories)
    ys = {m.name: len(memories) - 1 - i for i, m in enumerate(memories)}
    for m in memories:
        y = ys[m.name]
        ax.barh(y, 1.0, height=0.5, color="#eeeeee", edgecolor="#888888", linewidth=0.8)
        ports = ", ".join(m.ports) or "CPU only"
        ax.text(-0.01, y, f"{m.name} {m.origin:#010x}\n{m.length:#x}  [{ports}]", ha="right",
                va="center", fontsize=7.5, family="monospace")
    handles, stray, tags = [], 0, {}
    # Largest first, so that a small region drawn over a large one in the same memory shows.
    for base in sorted(report.table.bases, key=lambda b: -b.size):
        colour = REGION_COLOURS[base.region % len(REGION_COLOURS)]
        handles.append(Patch(color=colour, label=_label(base)))
        memory = soc.memory_at(base.address) if base.address or base.size else None
        if memory is None:
            y = -1 - 0.7 * stray
            stray += 1
            ax.plot([0.0], [y], marker="X", color=colour, markersize=9)
            ax.text(0.015, y, f"r{base.region} at {base.address:#x}: no memory at this address",
                    va="center", fontsize=8, color="#c44e52", fontweight="bold")
            continue
        y = ys[memory.name]
        left = (base.address - memory.origin) / memory.length
        width = max(base.size / memory.length, MIN_WIDTH)
        ax.barh(y, width, left=left, height=0.5, color=colour, alpha=0.9)
        k = tags[memory.name] = tags.get(memory.name, -1) + 1   # stagger tags in one memory
        ax.text(left + 0.004 + 0.035 * k, y + 0.3, f"r{base.region}", fontsize=8,
                fontweight="bold", color=colour, va="bottom")
    handles.sort(key=lambda h: h.get_label())
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.02 - 0.12 * max(stray, 0)),
              fontsize=7.5, frameon=False, ncol=1)
    ax.set_xlim(-0.005, 1.005)
    ax.set_ylim(-0.6 - 0.7 * stray, len(memories) - 0.3)
    ax.set_yticks([])
    ax.set_xticks([])
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"{report.file}: NPU base addresses on {report.soc} ({report.memory_mode}), "
                 "each memory drawn to its own length", fontsize=9)


def _stall_note(ax, report: CheckReport) -> None:
    if report.verdict == "ok":
        return
    reason = report.run.diagnosis.split(": ", 1)[0] if report.run.diagnosis else ""
    text = "NPU verdict UNKNOWN: cannot tell" if report.verdict == "unknown" \
        else f"NPU {report.verdict.upper()} at {reason}"
    ax.text(0.5, 0.5, text, transform=ax.transAxes,
            ha="center", va="center", fontsize=10, color="#c44e52", fontweight="bold")


def plot(report: CheckReport, path) -> None:
    matplotlib = require("matplotlib", "--plot", "plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 10), gridspec_kw={"height_ratios": [3, 2]})
    _memory_panel(top, report)
    draw_timeline(bottom, report.run)
    _stall_note(bottom, report)
    if report.diagnosis:
        fig.text(0.01, 0.005, textwrap.fill(report.diagnosis, 190), fontsize=6.5,
                 color="#c44e52", va="bottom")
    fig.subplots_adjust(left=0.2, right=0.9, hspace=0.55, bottom=0.11, top=0.95)
    fig.savefig(path, dpi=110)
    plt.close(fig)

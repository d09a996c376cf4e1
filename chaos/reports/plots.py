"""PNG plots for pasting into an issue: the saturation heatmap and the night-over-night trend.

matplotlib with the Agg backend (no display, no GUI toolkit). Each function returns False and
writes nothing when there is nothing to plot (no race cell, fewer than two nights).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.colors import LinearSegmentedColormap

# the same scale as the HTML: green at the consume-once ideal (1/k), red when every racer fired
EXCESS = LinearSegmentedColormap.from_list("excess", ["#b9e4b9", "#f3dc8c", "#ef8f7a", "#d8432e"])


def saturation_png(path: Path, maps: list, title: str = "") -> bool:
    if not maps:
        return False
    fig, axes = plt.subplots(
        1,
        len(maps),
        figsize=(max(4.5, 1.3 * max(len(m.jitters) for m in maps) + 2.5) * len(maps), 1.0 + 0.75 * max(len(m.ks) for m in maps)),
        squeeze=False,
    )
    for ax, m in zip(axes[0], maps, strict=True):
        data = [[(m.at(k, j).excess if m.at(k, j) and m.at(k, j).excess is not None else float("nan")) for j in m.jitters] for k in m.ks]
        ax.imshow(data, cmap=EXCESS, vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(m.jitters)), [f"{j:g}" for j in m.jitters])
        ax.set_yticks(range(len(m.ks)), [str(k) for k in m.ks])
        ax.set_xlabel("jitter (ms)")
        ax.set_ylabel("k racers")
        ax.set_title(f"saturation: {m.title}", fontsize=10)
        for yi, k in enumerate(m.ks):
            for xi, j in enumerate(m.jitters):
                hc = m.at(k, j)
                if hc is None:
                    continue
                sat = hc.saturation
                txt = "no valid\ntrial" if sat is None else f"{sat:.2f}" + ("\nDUPLICATE" if hc.status == "violated" else "")
                ax.text(xi, yi, txt, ha="center", va="center", fontsize=8, fontweight="bold" if hc.status == "violated" else "normal")
    if title:
        fig.suptitle(f"{title}: mean fires / k (1/k = consume-once)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def trend_png(path: Path, nights: list[dict]) -> bool:
    """Saturation per race cell and verdict counts, one point per night (oldest first)."""
    if len(nights) < 2:
        return False
    labels = [n["date"] for n in nights]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    series: dict[str, list] = {}
    for i, n in enumerate(nights):
        for key, sat in (n.get("saturation") or {}).items():
            series.setdefault(key, [None] * len(nights))[i] = sat
    for key, ys in sorted(series.items()):
        xs = [i for i, y in enumerate(ys) if y is not None]
        ax1.plot(xs, [ys[i] for i in xs], marker="o", label=key)
    ax1.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    ax1.set_ylim(0, 1.05)
    ax1.set_ylabel("saturation (mean fires / k)")
    ax1.set_title("saturation per race cell", fontsize=10)
    if series and len(series) <= 12:
        ax1.legend(fontsize=6, loc="lower left")
    bottoms = [0] * len(nights)
    for status, colour in (("violated", "#d8432e"), ("unknown", "#e0b84a"), ("holds", "#5cb85c")):
        vals = [n["verdict_counts"].get(status, 0) for n in nights]
        ax2.bar(range(len(nights)), vals, bottom=bottoms, color=colour, label=status)
        bottoms = [b + v for b, v in zip(bottoms, vals, strict=True)]
    ax2.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    ax2.set_title("verdicts per night", fontsize=10)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True

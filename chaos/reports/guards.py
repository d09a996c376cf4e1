"""Guards beside stock: each guarded cell paired with its stock twin, verdicts and overhead side by side.

Why: a team adopting a guard (``target.guard``) asks two questions of one run: does the fix hold
where stock fails, and what does it cost? A pair is a guarded cell and the cell of the same matrix axes
(a case's without its name), kind, framework, backend, durability, workload, k, jitter and resume
without a guard (for an app-level guard, whose guarded app is another factory, the one such cell
whatever its workload). The overhead is the
ratio of their median wall time per valid trial (same run, same machine); a ratio below 1 means the
guarded trials were shorter, e.g. because the guard turned racers away before they ran a node.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from chaos.records import CellResult, RunResults
from chaos.targets import is_no_guard

MIN_TRIALS = 3  # valid trials per cell for an overhead ratio


@dataclass(frozen=True)
class GuardPair:
    guarded: CellResult
    stock: CellResult

    @property
    def overhead(self) -> float | None:
        """None when either cell has fewer than ``MIN_TRIALS`` valid trials: a median of one or two
        trials carries the racers' cold start (the first cell of a run pays it), not the guard's cost."""
        if min(self.guarded.valid_trials, self.stock.valid_trials) < MIN_TRIALS:
            return None
        g, s = self.guarded.wall_s_median, self.stock.wall_s_median
        return g / s if g is not None and s else None

    def line(self) -> str:
        def verdicts(c: CellResult) -> str:
            return " ".join(f"{v.property}:{v.status}" for v in c.verdicts) or "-"

        def wall(c: CellResult) -> str:
            return "-" if c.wall_s_median is None else f"{c.wall_s_median:.3f}s"

        ratio = "-" if self.overhead is None else f"{self.overhead:.2f}"
        return (
            f"{self.guarded.cell_id} ({self.guarded.guard}) vs {self.stock.cell_id}: {verdicts(self.guarded)} vs "
            f"{verdicts(self.stock)}; median trial {wall(self.guarded)} vs {wall(self.stock)}, overhead ratio {ratio}"
        )


def _shape(c: CellResult, workload: bool = True) -> str:
    """What a cell is apart from its guard: its matrix axes (a case's without its name) and its
    kind, framework, backend, durability, workload, k, jitter and resume."""
    axes = {k: v for k, v in c.axes.items() if k != "guard"}
    if isinstance(axes.get("case"), dict):
        axes["case"] = {k: v for k, v in axes["case"].items() if k not in ("name", "guard") and (workload or k != "workload")}
    if not workload:
        axes.pop("workload", None)
    fields = (c.kind, c.framework, c.backend, c.durability, c.workload if workload else "", c.k, c.jitter_ms, c.resume, c.version)
    return json.dumps([axes, fields], sort_keys=True, default=str)


def guard_pairs(results: RunResults) -> list[GuardPair]:
    """Every guarded cell with its stock twin: the cell of the same shape without a guard (the same
    axes but the guard), or, when none runs the same workload (an app-level guard lives in the
    app's code, so the guarded app is another factory), the only stock cell of that shape."""
    stock: dict[str, CellResult] = {}
    loose: dict[str, list[CellResult]] = {}
    for c in results.cells:
        if is_no_guard(c.guard):
            stock.setdefault(_shape(c), c)
            loose.setdefault(_shape(c, workload=False), []).append(c)
    pairs = []
    for c in results.cells:
        if is_no_guard(c.guard):
            continue
        twin = stock.get(_shape(c))
        if twin is None and len(others := loose.get(_shape(c, workload=False), [])) == 1:
            twin = others[0]
        if twin is not None:
            pairs.append(GuardPair(c, twin))
    return pairs


def markdown(results: RunResults, esc: Callable[[object], str] = str) -> list[str]:
    """The report's "Guards beside stock" section (empty when no cell has a stock twin); ``esc``
    makes a user's text (cell ids, guard references) inert in markdown."""
    pairs = guard_pairs(results)
    if not pairs:
        return []
    out = [
        "## Guards beside stock",
        "",
        f"overhead = median wall time of a guarded trial / of its stock twin's, same run (cells of {MIN_TRIALS}+ valid trials).",
        "",
        "| guarded cell | guard | stock cell | guarded verdicts | stock verdicts | refused {n:trials} | median trial s | overhead |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in pairs:
        g, s = p.guarded, p.stock
        refused = ", ".join(f"{n}:{t}" for n, t in (g.summary.get("refused") or {}).items()) or "-"
        times = f"{g.wall_s_median or 0:.3f} / {s.wall_s_median or 0:.3f}"
        ratio = "-" if p.overhead is None else f"{p.overhead:.2f}"
        gv = ", ".join(f"{v.property} {v.status}" for v in g.verdicts)
        sv = ", ".join(f"{v.property} {v.status}" for v in s.verdicts)
        out.append(f"| {esc(g.cell_id)} | {esc(g.guard)} | {esc(s.cell_id)} | {gv} | {sv} | {refused} | {times} | {ratio} |")
    out.append("")
    return out

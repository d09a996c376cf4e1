"""report.html: a static page per run (and an index per nightly) that opens from disk.

Rendered with Jinja2 templates (``chaos/reports/templates``) with autoescaping on, so every string that
comes from a run (reasons, effect values, racer output) is escaped. No script, no server, no
network: the page is HTML and inline SVG only, and the PNG plots sit beside it.

What a person sees first is which cells duplicate effects: the verdict banner, the saturation
heatmap (k x jitter, one per framework and backend) and the contract matrix (cells x properties),
all coloured by verdict. Below: per-kill-point tables, a plain-language explanation of every
duplicate effect and per-trial timelines of racers, barriers, kills and effects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from chaos.kinds import get_kind, property_names
from chaos.kinds.growth import words as growth_words
from chaos.records import CellResult, RunResults, TrialRecord, Verdict
from chaos.reports.explain import DuplicateGroups, Timeline, explain_duplicates, timeline
from chaos.reports.guards import guard_pairs

PROPERTY_ORDER = ["EO", "PC", "CO", "FD", "CV", "RD", "FI", "FCL", "LIVENESS"]
RANK = {"holds": 0, "unknown": 1, "violated": 2}
MAX_TIMELINES = 12

_env: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _env
    if _env is None:
        _env = jinja2.Environment(
            loader=jinja2.PackageLoader("chaos.reports", "templates"),
            autoescape=True,  # every template, whatever its extension
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        _env.filters["heat"] = heat_colour
        _env.globals["PROPERTY_NAMES"] = property_names()
        _env.globals["section_of"] = section_of
        _env.globals["growth_words"] = growth_words
    return _env


# ------------------------------------------------------------------------------ view models


def section_of(kind: str) -> str:
    """The report section of a cell's kind (``chaos.kinds.base.Kind.section``)."""
    return get_kind(kind).section


def heat_colour(excess: float | None) -> str:
    """Green at the consume-once ideal (1/k), through amber, to red when every racer fired."""
    if excess is None:
        return "#e0e0e0"
    e = min(max(excess, 0.0), 1.0)
    return f"hsl({round(120 * (1 - e))}, 75%, {round(86 - 28 * e)}%)"


@dataclass
class HeatCell:
    k: int
    jitter_ms: float
    fires: dict[int, int] = field(default_factory=dict)
    status: str = "unknown"
    sources: list[str] = field(default_factory=list)
    trials: int = 0
    valid: int = 0

    @property
    def saturation(self) -> float | None:
        n = sum(self.fires.values())
        return None if n == 0 else sum(f * c for f, c in self.fires.items()) / n / self.k

    @property
    def excess(self) -> float | None:
        s = self.saturation
        if s is None:
            return None
        return 0.0 if self.k <= 1 else (s - 1 / self.k) / (1 - 1 / self.k)

    @property
    def fires_text(self) -> str:
        return ", ".join(f"{f} fire{'s' if f != 1 else ''}: {n}" for f, n in sorted(self.fires.items()))


@dataclass
class Heatmap:
    framework: str
    backend: str
    ks: list[int]
    jitters: list[float]
    grid: dict[tuple[int, float], HeatCell]

    @property
    def title(self) -> str:
        return f"{self.framework} / {self.backend}"

    def at(self, k: int, j: float) -> HeatCell | None:
        return self.grid.get((k, j))


def heatmaps(cells: Iterable[tuple[str, CellResult]]) -> list[Heatmap]:
    """Saturation cells pooled per (framework, backend) into k x jitter grids (trials of equal points add up)."""
    groups: dict[tuple[str, str], dict[tuple[int, float], HeatCell]] = {}
    for label, c in cells:
        if section_of(c.kind) != "saturation":
            continue
        g = groups.setdefault((c.framework, c.backend), {})
        hc = g.setdefault((c.k, float(c.jitter_ms)), HeatCell(k=c.k, jitter_ms=float(c.jitter_ms)))
        for f, n in c.fires.items():
            hc.fires[int(f)] = hc.fires.get(int(f), 0) + n
        co = next((v.status for v in c.verdicts if v.property == "CO"), "unknown")
        hc.status = co if not hc.sources else max(hc.status, co, key=RANK.__getitem__)
        hc.sources.append(f"{label} {c.cell_id}".strip())
        hc.trials += c.trials
        hc.valid += c.valid_trials
    out = []
    for (fw, be), grid in sorted(groups.items()):
        out.append(Heatmap(fw, be, sorted({k for k, _ in grid}), sorted({j for _, j in grid}), grid))
    return out


@dataclass
class MatrixRow:
    label: str
    cell: CellResult
    link: str | None
    verdicts: dict[str, Verdict]


def contract_matrix(cells: Iterable[tuple[str, CellResult, str | None]]) -> tuple[list[str], list[MatrixRow]]:
    rows = [MatrixRow(label, c, link, {v.property: v for v in c.verdicts}) for label, c, link in cells]
    present = {p for r in rows for p in r.verdicts}
    props = [p for p in PROPERTY_ORDER if p in present] + sorted(present - set(PROPERTY_ORDER))
    return props, rows


def run_status(results: RunResults, interrupted: bool = False) -> str:
    if interrupted or results.exit_code == 3:
        return "failed"
    return {0: "holds", 1: "violated", 2: "unknown"}.get(results.exit_code, "failed")


@dataclass
class TrialView:
    record: TrialRecord
    explanations: list[str]
    timeline: Timeline | None


@dataclass
class Shown:
    """What the report shows of a run's trials, gathered in one pass that keeps only what it shows:
    timelines of the trials that duplicated an effect (capped) and one sample per other cell, and
    the first explanations (capped), with the totals."""

    views: list[TrialView]
    n_dup_trials: int
    duplicates: DuplicateGroups


def gather(records: Iterable[TrialRecord]) -> Shown:
    dup: list[TrialView] = []
    sample: dict[int, TrialRecord] = {}
    groups = DuplicateGroups()
    n_dup = 0
    for r in records:
        ex = explain_duplicates(r)
        groups.add(r, ex)
        if ex:
            n_dup += 1
            if len(dup) < MAX_TIMELINES:
                dup.append(TrialView(r, ex, timeline(r)))
        elif r.cell_index not in sample and r.valid and not r.trial_id.endswith("-dry"):
            sample[r.cell_index] = r
    views = list(dup)
    dup_cells = {v.record.cell_index for v in dup}
    for r in sample.values():
        if len(views) >= MAX_TIMELINES + 4:
            break
        if r.cell_index not in dup_cells:
            views.append(TrialView(r, [], timeline(r)))
    return Shown(views, n_dup, groups)


# ---------------------------------------------------------------------------------- render


def render_run_html(
    results: RunResults, meta: dict, records: Iterable[TrialRecord], *, plots: Sequence[str] = (), shown: Shown | None = None
) -> str:
    cells = results.cells
    props, rows = contract_matrix((c.cell_id, c, f"#cell-{c.cell_index}") for c in cells)
    shown = shown or gather(records)
    views, n_dup_trials = shown.views, shown.n_dup_trials
    violated_cells = [c for c in cells if any(v.status == "violated" for v in c.verdicts)]
    return (
        env()
        .get_template("run.html.j2")
        .render(
            r=results,
            meta=meta,
            status=run_status(results, bool(meta.get("interrupted"))),
            heatmaps=heatmaps(("", c) for c in cells),
            props=props,
            rows=rows,
            views=views,
            n_dup_trials=n_dup_trials,
            groups=shown.duplicates.ordered(),
            n_explanations=shown.duplicates.n_explanations,
            violated_cells=violated_cells,
            guard_pairs=guard_pairs(results),  # target.guard: each guarded cell beside its stock twin
            plots=list(plots),
            files=[f for f in ("results.json", "journal.jsonl", "report.md", "junit.xml", "run.json")],
        )
    )


def write_run_html(run_dir: Path, results: RunResults, meta: dict, records: Iterable[TrialRecord], shown: Shown | None = None) -> Path:
    plots = []
    maps = heatmaps(("", c) for c in results.cells)
    if maps:  # matplotlib only for a plot: its import is most of a `chaos run` process's start (about 0.7 s of CPU)
        from chaos.reports.plots import saturation_png

        if saturation_png(run_dir / "saturation.png", maps, title=results.scenario):
            plots.append("saturation.png")
    path = Path(run_dir) / "report.html"
    from chaos.running.runfolder import write_atomic  # masked, atomic: as every file of a run folder

    write_atomic(path, render_run_html(results, meta, records, plots=plots, shown=shown))
    return path


def render_nightly_html(summary: dict, entries: list, hist: list[dict], *, plots: Sequence[str] = ()) -> str:
    cells = []
    for e in entries:
        if e.results is None:
            continue
        rel = str(Path(summary_run_dir(summary, e.scenario) or "")).rstrip("/")
        for c in e.results.cells:
            cells.append((e.scenario, c, f"{rel}/report.html#cell-{c.cell_index}" if rel else None))
    props, rows = contract_matrix((f"{s} / {c.cell_id}", c, link) for s, c, link in cells)
    status = {0: "holds", 1: "violated", 2: "unknown", 3: "failed", 4: "regressed"}.get(summary["exit_code"], "failed")
    return (
        env()
        .get_template("nightly.html.j2")
        .render(
            s=summary,
            status=status,
            trend=summary.get("trend") or {},
            runs=summary["runs"],
            props=props,
            rows=rows,
            heatmaps=heatmaps((s, c) for s, c, _ in cells),
            history=hist,
            plots=list(plots),
        )
    )


def summary_run_dir(summary: dict, scenario: str) -> str | None:
    return next((r["run_dir"] for r in summary["runs"] if r["scenario"] == scenario), None)


def write_nightly_html(night_dir: Path, summary: dict, entries: list, hist: list[dict]) -> Path:
    plots = []
    maps = heatmaps([(e.scenario, c) for e in entries if e.results for c in e.results.cells])
    if maps or len(hist) >= 2:  # matplotlib only for a plot (a heatmap, or a trend of two nights or more)
        from chaos.reports.plots import saturation_png, trend_png

        if saturation_png(night_dir / "saturation.png", maps, title=f"nightly {summary['date']}"):
            plots.append("saturation.png")
        if trend_png(night_dir / "trend.png", hist):
            plots.append("trend.png")
    path = Path(night_dir) / "index.html"
    from chaos.running.runfolder import write_atomic

    write_atomic(path, render_nightly_html(summary, entries, hist, plots=plots))
    return path

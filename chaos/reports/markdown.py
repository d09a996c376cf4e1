"""report.md: the tables a person reads first, rendered from results (and run.json).

The top says what was run (scenario, seed, versions) and what it concluded (verdict counts, exit
code); then the cells grouped by their kind's ``section`` (``chaos.kinds.base.Kind``): one
saturation table, one contract table, and a per-kill-point table per sweep cell that names the
boundaries where an effect was duplicated; then why those are duplicates, grouped by cause and
effect with how often each happened and one example trial (``chaos.reports.explain``), as
report.html says it.
"""

from __future__ import annotations

import html
import re

from chaos.kinds import all_kinds, get_kind, property_names
from chaos.kinds.growth import words as growth_words
from chaos.records import CellResult, RunResults
from chaos.reports.explain import DuplicateGroups
from chaos.reports.guards import markdown as guard_section

MARK = {"holds": "holds", "violated": "**VIOLATED**", "unknown": "unknown"}


def _v(cell_or_point, prop: str) -> str:
    for v in cell_or_point.verdicts:
        if v.property == prop:
            return "vacuous" if v.vacuous else MARK[v.status]
    return "-"


def _fires(c: CellResult) -> str:
    return ", ".join(f"{k}:{n}" for k, n in c.fires.items()) or "-"


def _sat(c: CellResult) -> str:
    return "-" if c.saturation is None else f"{c.saturation:.3f}"


def _window(c: CellResult) -> str:
    w = c.window
    if w is None:
        return "-"
    bound = "" if w.read_source == "read" else " (upper bound)"
    return f"{w.median_ms:.1f} [{w.p10_ms:.1f}-{w.p90_ms:.1f}] n={w.n}{bound}"


def _predicted(c: CellResult) -> str:
    w = c.window
    if w is None or w.predicted_saturation is None:
        return "-"
    others = ", ".join(f"{j} ms: {v:.2f}" for j, v in w.predicted_by_jitter_ms.items() if v is not None and float(j) != c.jitter_ms)
    return f"{w.predicted_saturation:.3f}" + (f" ({others})" if others else "")


def _tally(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} x{n}" if isinstance(n, int) else f"{k}={n}" for k, n in v.items())
    return str(v)


def _esc(text: object) -> str:
    """Text copied from a run (an about, a reason, a cell id), made inert: HTML (``<script>``) as
    text, no table cell broken by ``|``, one line."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


# the one HTML tag report.md writes itself: a verdict's anchor
_OWN_TAG = re.compile(r'<a id="v-\d+-[A-Za-z0-9_]+"></a>')


def inert(markdown: str) -> str:
    """The whole report made inert at once: every ``<`` that is not one of report.md's own anchors
    becomes ``&lt;``, so no text copied from a run (a field escaped or not, in a code span or not)
    reaches a Markdown renderer as HTML (``<script>``, ``<img onerror>``, ``<!--``)."""
    out: list[str] = []
    pos = 0
    for m in _OWN_TAG.finditer(markdown):
        out.append(markdown[pos : m.start()].replace("<", "&lt;"))
        out.append(m.group(0))
        pos = m.end()
    out.append(markdown[pos:].replace("<", "&lt;"))
    return "".join(out)


def _versions(c: CellResult) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.versions.items() if v) or "-"


MATRIX_ORDER = ("EO", "PC", "FD", "CV", "CO", "RD", "FI", "LIVENESS", "FCL")


def _anchor(cell: CellResult, prop: str) -> str:
    return f"v-{cell.cell_index}-{prop}"


def contract_matrix(results: RunResults) -> list[str]:
    """Frameworks x properties, first: each entry counts the cells behind it and links to the
    verdict row (and so the evidence) of the first cell that decided it."""
    frameworks: dict[str, list[CellResult]] = {}
    for c in results.cells:
        label = c.framework + (f" {c.version}" if getattr(c, "version", None) else "")
        frameworks.setdefault(label, []).append(c)
    props = [p for p in MATRIX_ORDER if any(v.property == p for c in results.cells for v in c.verdicts)]
    props += sorted({v.property for c in results.cells for v in c.verdicts} - set(props))
    if not props:
        return []
    out = [
        "## Contract matrix",
        "",
        "Each entry: the worst verdict over the cells that measured the property (violated, then unknown, then holds), "
        "how many cells it covers, and a link to the verdict row with its reason and evidence.",
        "",
        "| framework | " + " | ".join(props) + " |",
        "|---|" + "---|" * len(props),
    ]
    for label, cells in frameworks.items():
        row = []
        for p in props:
            found = [(c, v) for c in cells for v in c.verdicts if v.property == p]
            if not found:
                row.append("-")
                continue
            for status in ("violated", "unknown", "holds"):
                hits = [(c, v) for c, v in found if v.status == status]
                if hits:
                    c0, _ = hits[0]
                    row.append(f"[{MARK[status]}](#{_anchor(c0, p)}) {len(hits)}/{len(found)}")
                    break
        out.append(f"| {label} | " + " | ".join(row) + " |")
    out.append("")
    return out


def duplicate_findings(groups: DuplicateGroups) -> list[str]:
    """ "Why these are duplicates": one numbered finding per cause and effect, with its count and an
    example trial; the other trials' ids follow (their own sentences are in report.html)."""
    found = groups.ordered()
    if not found:
        return []
    lines = [
        "## Why these are duplicates",
        "",
        f"{groups.n_explanations} explanation(s), grouped by cause and effect into {len(found)} finding(s); report.html "
        "lists every trial's own explanation.",
        "",
    ]
    for i, g in enumerate(found, 1):
        lines.append(f"{i}. **{_esc(g.cell_id)}**: {_esc(g.gist)}: **{_esc(g.count)}**.")
        lines.append(f"   Example, `{g.example_trial}`: {_esc(g.example)}")
        others = sorted({t for t, _, _ in g.members} - {g.example_trial})
        if others:
            shown = ", ".join(f"`{t}`" for t in others[:30]) + (" ..." if len(others) > 30 else "")
            lines.append(f"   Also: {shown}")
    lines.append("")
    return lines


def render_markdown(results: RunResults, meta: dict, duplicates: DuplicateGroups | None = None) -> str:
    lines: list[str] = []
    add = lines.append
    add(f"# chaos report: {_esc(results.scenario)}")
    add("")
    about = (meta.get("scenario") or {}).get("about")
    if about:
        add(f"> {_esc(about)}")
        add("")
    vers = ", ".join(f"{k} {v}" for k, v in (meta.get("versions") or {}).items() if v)
    add(f"- run: `{results.run_id}`  seed: `{results.seed}`")
    add(f"- versions: {vers}")
    add(
        f"- verdicts: {results.verdict_counts.get('violated', 0)} violated, {results.verdict_counts.get('unknown', 0)} unknown, "
        f"{results.verdict_counts.get('holds', 0)} hold; exit code {results.exit_code}"
    )
    sm = results.summary
    add(
        f"- trials: {sm.trials} ({sm.valid} valid, {sm.unknown} unknown, {sm.hung} hung, {sm.errored} errored, "
        f"{sm.environment} environment faults ({sm.retried} repeats), {sm.app_error} app errors); "
        f"fault fired in {sm.fault_fired}, did not fire in {sm.fault_not_fired}; "
        f"kills confirmed by exit status {sm.kills_confirmed}, unconfirmed {sm.kills_unconfirmed}"
        + (f"; recovered from recorded crash states {sm.recorded_states} (crash_states: recorded)" if sm.recorded_states else "")
    )
    for c in results.cells:  # a sweep that asked for recorded crash states: what it used, and why not where it did not
        cs = c.crash_states
        if cs is not None:
            why = f" ({_esc(cs.reason)})" if cs.reason else ""
            add(f"- cell {_esc(c.cell_id)}: crash states {cs.used} (asked {cs.asked}; {cs.recorded} recorded, {cs.killed} killed){why}")
    load = meta.get("load") or {}
    if load:
        add(
            f"- machine: {meta.get('host', '?')}, {load.get('cpus', '?')} CPUs, load average {load.get('start', '?')} at the start, "
            f"{load.get('end', '?')} at the end (race saturation at jitter > 0 moves with load: compare runs at similar load)"
        )
    if meta.get("resumes"):
        add(f"- resumed {len(meta['resumes'])} time(s) from its journal")
    if meta.get("interrupted"):
        add("- **the run was interrupted**: the tables cover the trials journaled before it stopped")
    if meta.get("failed"):
        add(f"- **the run failed**: {_esc(meta['failed'])}; the tables cover the trials journaled before it stopped")
    add("")
    lines.extend(contract_matrix(results))
    app = [(c, e) for c in results.cells for e in c.app_errors]
    if app:
        add("## App errors (the workload's own code raised: those trials are unknown, never a framework verdict)")
        add("")
        for c, e in app:
            reason, _, tb = e.partition("\n")
            add(f"- cell {_esc(c.cell_id)}: {_esc(reason)}")
            if tb:
                add("")
                add("  ```")
                lines.extend("  " + line.replace("```", "` ` `") for line in tb.splitlines())
                add("  ```")
        add("")
    races = [c for c in results.cells if get_kind(c.kind).section == "saturation"]
    sweeps = [c for c in results.cells if get_kind(c.kind).section == "sweep"]
    contract = [c for c in results.cells if get_kind(c.kind).section == "contract"]
    if races:
        add("## Saturation (k racers resume one pending interrupt)")
        add("")
        add("saturation = mean(gated-effect fires over valid trials) / k; consume-once demands 1/k.")
        add(
            "window = per firing racer, its first read of the pending interrupt to its resumed checkpoint's commit "
            "(median [p10-p90] ms); predicted = the saturation that window predicts at the cell's jitter (and at 0, 5, 25 ms)."
        )
        add("")
        add(
            "| cell | backend | k | jitter ms | valid/trials | saturation | predicted | window ms | fires {n:trials} | max | racer errors "
            "| release spread ms (median/max) | CO | liveness |"
        )
        add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for c in races:
            spread = "-" if not c.release_spread_ms else f"{c.release_spread_ms['median']:.2f}/{c.release_spread_ms['max']:.2f}"
            add(
                f"| {_esc(c.cell_id)} | {c.backend} | {c.k} | {c.jitter_ms:g} | {c.valid_trials}/{c.trials} | {_sat(c)} | {_predicted(c)} | "
                f"{_window(c)} | {_fires(c)} | "
                f"{c.max_fires if c.max_fires is not None else '-'} | {c.racer_errors} | {spread} | {_v(c, 'CO')} | {_v(c, 'LIVENESS')} |"
            )
        add("")
    lines.extend(guard_section(results, _esc))  # target.guard: each guarded cell beside its stock twin
    if contract:
        add(f"## Resume contract ({', '.join(k.title.lower() for k in all_kinds() if k.section == 'contract')})")
        add("")
        add("| cell | kind | workload | backend | durability | valid/trials | what happened | verdicts |")
        add("|---|---|---|---|---|---|---|---|")
        for c in contract:
            seen = "; ".join(f"{k}: {_tally(v)}" for k, v in c.summary.items() if v) or (c.failure or "-")
            verdicts = ", ".join(f"{v.property} {MARK[v.status]}" for v in c.verdicts)
            add(
                f"| {_esc(c.cell_id)} | {c.kind} | {_esc(c.workload)} | {c.backend} | {c.durability} | {c.valid_trials}/{c.trials} | "
                f"{_esc(seen)} | {verdicts} |"
            )
        add("")
    for c in sweeps:
        title = get_kind(c.kind).title
        add(
            f"## {title}: {_esc(c.workload)}, resume `{_esc(c.resume)}`, durability {c.durability}, backend {c.backend} ({_esc(c.cell_id)})"
        )
        add("")
        if c.failure:
            add(f"Cell failed: {_esc(c.failure)}")
            add("")
        if c.baseline is not None:
            fired = ", ".join(f"{k} x{n}" for k, n in c.baseline.effects.items()) or "nothing"
            add(f"Uninterrupted run ({c.baseline.trial_id}, the baseline every kill point is judged against): {fired}.")
            if c.baseline.workflow_duplicates:
                dup = ", ".join(f"{k} ({n}x)" for k, n in c.baseline.workflow_duplicates.items())
                add(f"The workflow's own duplicates (fired more than once with no crash at all): {dup}.")
            if c.baseline.stopped_at:
                add(f"It stopped at its pause unanswered ({_esc(c.baseline.stopped_at)}): it says nothing of what fires past it.")
            add("")
        if c.store_size is not None:  # chaos.kinds.growth
            add(f"Checkpoint sizes of the uninterrupted run: {_esc(growth_words(c.store_size))}.")
            add("")
        props = [v.property for v in c.verdicts]
        unexpected = any(p.extra or p.changed for p in c.points)  # a column only where some effect was unexpected
        add(
            "| # | kill point | reached | effect counts per key | durable checkpoints at kill | resume outcome | "
            + " | ".join(props)
            + " | duplicated | lost |"
            + (" never in the uninterrupted run / payload changed |" if unexpected else "")
        )
        add("|---|---|---|---|---|---|" + "---|" * len(props) + "---|---|" + ("---|" if unexpected else ""))
        for i, p in enumerate(c.points):
            counts = "; ".join(f"{t}={','.join(map(str, n))}" for t, n in p.effect_counts.items()) or "-"
            ckpts = ",".join("?" if x is None else str(x) for x in p.durable_checkpoints) or "-"
            outs = ", ".join(sorted(set(p.resume_outcomes))) or "-"
            dup = ", ".join(p.duplicates) or "-"
            lost = ", ".join(p.lost) or "-"
            add(
                f"| {i} | `{p.point}` | {p.reached}/{p.trials} | {counts} | {ckpts} | {outs} | "
                + " | ".join(_v(p, prop) for prop in props)
                + f" | {dup} | {lost} |"
                + (f" {_esc(', '.join(p.extra) or '-')} / {_esc(', '.join(p.changed) or '-')} |" if unexpected else "")
            )
        dups = [p.point for p in c.points if p.duplicates]
        losses = [p.point for p in c.points if p.lost]
        add("")
        if any(p.trials > 1 for p in c.points):  # repeats: how often each outcome came at each point
            add("Outcomes per kill point over its repeats:")
            add("")
            for i, p in enumerate(c.points):
                shown = ", ".join(f"{n}x {_esc(o)}" for o, n in p.distribution.items()) or "-"
                add(f"- {i} `{p.point}`: {shown}")
            add("")
        if dups:
            add(f"Boundaries where a kill duplicated an effect ({len(dups)}/{len(c.points)}): " + ", ".join(f"`{d}`" for d in dups))
        else:
            add(f"No kill point duplicated an effect ({len(c.points)} points).")
        if losses:
            add("")
            add(
                f"Boundaries where a completed recovery lost an effect ({len(losses)}/{len(c.points)}): "
                + ", ".join(f"`{d}`" for d in losses)
            )
        add("")
    lines.extend(duplicate_findings(duplicates or DuplicateGroups()))
    add("## Verdicts")
    add("")
    add("| cell | property | verdict | reason | evidence (trials) |")
    add("|---|---|---|---|---|")
    names = property_names()
    for c in results.cells:
        for v in c.verdicts:
            ev = ", ".join(v.evidence.trial_ids[:6]) + (" ..." if len(v.evidence.trial_ids) > 6 else "")
            add(
                f'| <a id="{_anchor(c, v.property)}"></a>{_esc(c.cell_id)} | {v.property} ({names.get(v.property, "")}) '
                f"| {MARK[v.status]} | {_esc(v.reason)} | {ev or '-'} |"
            )
    add("")
    add("Re-check any verdict: `chaos rerun RUN_FOLDER TRIAL_ID` re-runs that trial alone from the recorded seed and kill point.")
    add("")
    add("## Framework versions per cell (as the racers reported them)")
    add("")
    add("| cell | asked for | ran |")
    add("|---|---|---|")
    for c in results.cells:
        add(f"| {_esc(c.cell_id)} | {_esc(c.version or 'installed')} | {_esc(_versions(c))} |")
    add("")
    return inert("\n".join(lines))

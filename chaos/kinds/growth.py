"""Checkpoint sizes of a sweep's uninterrupted run, their growth, and SB (a bound on them) (names no kind).

Why: one LangGraph user's SQLite checkpoint database reached 135 GB, 82 MB per checkpoint: a state
that grows every step (a message list) makes every checkpoint bigger than the last, and nothing
said so until the disk filled. A sweep's dry run (the uninterrupted run) inspects the thread when
it ends and the adapter measures its store (LangGraph's package measures it: its ``store_size``); the cell then
reports (``CellResult.store_size``) the bytes of each checkpoint in order, their growth per
checkpoint, the thread's bytes in the store and the store's own size.

**SB** (store bound; only when the scenario sets ``bounds``): holds when the largest checkpoint is
within ``bounds.bytes_per_checkpoint`` and the thread within ``bounds.bytes_per_thread``; violated
with the first checkpoint (or the thread) above its bound, its size and the growth that led there;
unknown when the adapter measures no store size (or the measure failed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chaos.kinds.base import Property
from chaos.kinds.checking import verdict
from chaos.kinds.sweep_addon import SweepAddOn
from chaos.kinds.sweep_options import SweepOptions
from chaos.racer.protocol import StoreSize
from chaos.records import CellResult, TrialRecord, Verdict
from chaos.targets import STORE_SIZE, TARGETS

if TYPE_CHECKING:
    from chaos.scenario.model import Cell

SB = Property("SB", "store within its bounds", "checkpoint-sizes-and-their-bound-sb-sweeps-bounds")
PROPERTY = SB.code
KEEP = 500  # checkpoint sizes kept in results.json (the first ones and the last ones beyond that)


def measures(cell: Cell) -> bool:
    """Does the cell's dry run measure its store (inspect after the run, with sizes)? Where the
    target declares the feature ``store_size`` (its inspect answers ``measure_store``)."""
    info = TARGETS.get(cell.scenario.target.framework)
    return info is not None and STORE_SIZE in info.features


def properties_of(cell: Cell, dry: TrialRecord | None = None, trials: list[TrialRecord] | None = None) -> tuple[str, ...]:
    return (PROPERTY,) if SweepOptions.of(cell.scenario).bounds is not None else ()


def raw_of(dry: TrialRecord | None) -> StoreSize | None:
    """What the dry run measured of its store (its inspection after the run), None if nothing."""
    return (dry.observed_inspect("after").get("store_size") if dry is not None else None) or None


def summary(dry: TrialRecord | None) -> dict[str, Any] | None:
    """The cell's numbers (``CellResult.store_size``) from its dry run, or None when not measured."""
    raw = raw_of(dry)
    if raw is None or dry is None:
        return None
    if raw.get("error"):
        return {"trial_id": dry.trial_id, "error": raw["error"]}
    sizes: list[int] = list(raw.get("checkpoint_bytes") or [])
    n = len(sizes)
    kept = sizes if n <= KEEP else sizes[: KEEP // 2] + sizes[-KEEP // 2 :]
    return {
        "trial_id": dry.trial_id,
        "source": raw.get("source"),
        "checkpoints": n,
        "checkpoint_bytes": kept,
        "first_checkpoint_bytes": sizes[0] if sizes else None,
        "last_checkpoint_bytes": sizes[-1] if sizes else None,
        "max_checkpoint_bytes": max(sizes) if sizes else None,
        "mean_checkpoint_bytes": round(sum(sizes) / n) if n else None,
        "growth_per_checkpoint_bytes": round((sizes[-1] - sizes[0]) / (n - 1)) if n > 1 else None,
        "thread_bytes": raw.get("thread_bytes"),
        "store_bytes": raw.get("store_bytes"),
        "tables": raw.get("tables") or {},
    }


def words(s: dict[str, Any]) -> str:
    """One line for the reports."""
    if s.get("error"):
        return f"store size not measured ({s['error']})"
    store = f"; the store {s['store_bytes']:,} bytes ({s['source']})" if s.get("store_bytes") is not None else f" ({s['source']})"
    growth = s.get("growth_per_checkpoint_bytes")
    grew = f", {growth:+,} bytes per checkpoint" if growth is not None else ""
    return (
        f"{s['checkpoints']} checkpoint(s), from {s['first_checkpoint_bytes']:,} to {s['last_checkpoint_bytes']:,} bytes "
        f"(max {s['max_checkpoint_bytes']:,}{grew}); the thread {s['thread_bytes']:,} bytes{store}"
        if s.get("checkpoints")
        else f"no checkpoint; the thread {s.get('thread_bytes') or 0:,} bytes{store}"
    )


def cell_verdict(cell: Cell, dry: TrialRecord | None) -> list[Verdict]:
    """SB for the cell (nothing when the scenario sets no bounds)."""
    bounds = SweepOptions.of(cell.scenario).bounds
    if bounds is None:
        return []
    s = summary(dry)
    if s is None or s.get("error"):
        why = (
            f"the {cell.scenario.target.framework} adapter measures no store size"
            if not measures(cell)
            else (s.get("error") if s else None) or "the uninterrupted run reported no store size"
        )
        return [verdict(PROPERTY, "unknown", f"not measured: {why}")]
    assert dry is not None
    raw = raw_of(dry)
    sizes = list((raw.get("checkpoint_bytes") if raw else None) or [])
    over = []
    if bounds.bytes_per_checkpoint is not None:
        first = next((i for i, n in enumerate(sizes) if n > bounds.bytes_per_checkpoint), None)
        if first is not None:
            over.append(
                f"checkpoint {first + 1} of {len(sizes)} is {sizes[first]:,} bytes, above bytes_per_checkpoint {bounds.bytes_per_checkpoint:,} "
                f"({len([n for n in sizes if n > bounds.bytes_per_checkpoint])} checkpoint(s) above it)"
            )
    if bounds.bytes_per_thread is not None and (s.get("thread_bytes") or 0) > bounds.bytes_per_thread:
        over.append(f"the thread is {s['thread_bytes']:,} bytes, above bytes_per_thread {bounds.bytes_per_thread:,}")
    if over:
        return [verdict(PROPERTY, "violated", "; ".join(over) + f" ({words(s)})", trial_ids=[dry.trial_id])]
    return [verdict(PROPERTY, "holds", f"within its bounds: {words(s)}", trial_ids=[dry.trial_id])]


def _summarize(result: CellResult, dry: TrialRecord | None) -> None:
    result.store_size = summary(dry)  # bytes per checkpoint and per thread, and SB when bounded


def _check(cell: Cell, code: str, dry: TrialRecord | None, parts: list[Verdict]) -> Verdict:
    """SB: the uninterrupted run's store within the scenario's bounds."""
    if dry is None:
        return verdict(PROPERTY, "unknown", "the dry run did not run")
    (sb,) = cell_verdict(cell, dry)
    return sb


# the sweep's add-on (``chaos.kinds.sweep_addon``): the dry run measures its store; SB over the cell
ADD_ON = SweepAddOn(properties=(SB,), properties_of=properties_of, measures_store=measures, summarize=_summarize, check=_check)

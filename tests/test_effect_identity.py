"""Effects are judged by identity, every one of them (issue 39, points 1 and 4).

An effect's identity is what makes it the same effect in two runs: the key a team declares
(``ctx.effect(task, value, key=...)``: an idempotency key, the approved call), else its label and
value. Consume-once and saturation count the gated effect's identity, not its label: a tool that
writes an audit row and a payment fired two effects once each, not one effect twice. Exactly-once
judges every effect a recovery fired against the uninterrupted run's: one that run never fires,
and a declared effect carrying another payload, are findings with their ledger rows.

The apps are public examples ported with scripted models (``tests/workloads/react_pay_tool.py``,
``tests/workloads/crew_self_evaluation.py``); what they do without chaos was established by hand
(the team's report for issue 39 has the scripts and their output).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.records import TrialRecord
from chaos.reports.explain import explain_duplicates
from chaos.running.journal import read_journal

WORKLOADS = Path(__file__).parent / "workloads"


def _race_the_pay_tool(tmp_path: Path, workload: str):
    shutil.copy(WORKLOADS / "react_pay_tool.py", tmp_path / "react_pay_tool.py")
    return run_text(
        tmp_path,
        f"""\
        name: pay_tool_race
        kind: race
        target: {{framework: langgraph, backend: sqlite, durability: sync}}
        workload: react_pay_tool:{workload}
        resume: "command:approve"
        racers: {{k: 1}}
        trials: 2
        seed: 5
    """,
    )


@pytest.mark.parametrize("workload", ["build", "declared"])
def test_a_tool_that_writes_an_audit_row_and_a_payment_fires_each_once_per_approval(tmp_path, workload):
    # by hand: one approval, one process -> one audit row and one payment; with one racer a race
    # is that, so nothing fired twice, and the one racer fired the gated effect once (saturation 1/k)
    out = _race_the_pay_tool(tmp_path, workload)
    (cell,) = out.results.cells
    assert cell.valid_trials == 2
    assert cell.fires == {"1": 2}, cell.fires
    assert cell.saturation == 1.0 and cell.max_fires == 1
    co = next(v for v in cell.verdicts if v.property == "CO")
    assert co.status == "holds", co.reason
    assert "needs no race" not in co.reason
    assert cell.baseline is not None and sorted(cell.baseline.effects.values()) == [1, 1]
    records, _ = read_journal(out.run_dir / "journal.jsonl")
    trial = TrialRecord.model_validate(records[0])
    assert sorted(len(s) for s in trial.observations["fires_by_effect"].values()) == [1, 1]
    assert explain_duplicates(trial) == []


def _sweep_the_post_loop(tmp_path: Path):
    shutil.copy(WORKLOADS / "crew_self_evaluation.py", tmp_path / "crew_self_evaluation.py")
    return run_text(
        tmp_path,
        """\
        name: post_loop_sweep
        kind: kill_sweep
        target: {framework: crewai, backend: sqlite}
        workload: crew_self_evaluation:stock
        resume: none
        kill_points: ["save_state(method=evaluate_x_post):after#2", "effect(task=publish_post)"]
        trials: 1
        seed: 3
        timeout_s: 120
        matrix:
          case:
            - {name: stock}
            - {name: declared, workload: "crew_self_evaluation:declared"}
    """,
    )


def _eo(point) -> object:
    return next(v for v in point.verdicts if v.property == "EO")


@pytest.mark.slow
def test_a_recovery_that_publishes_a_second_different_post_is_no_exactly_once(tmp_path):
    # by hand (SIGKILL in save_result, then kickoff(inputs={"id": ...}) in a fresh process, as
    # CrewAI restores a @persist flow): the uninterrupted flow publishes draft 2; killed right after
    # publishing, the recovery regenerates and publishes draft 4 too (two posts); killed right
    # before, it publishes draft 4 alone (one post, another text)
    from chaos.envs import python_for

    python_for("crewai")
    out = _sweep_the_post_loop(tmp_path)
    cells = {c.axes["case"]["name"]: c for c in out.results.cells}
    first, second = (
        "publish_post:Hark, Flying cars take wing at last! (draft 2)",
        "publish_post:Hark, Flying cars take wing at last! (draft 4)",
    )

    # logged as a team logs it (the post as the value): the second post is an effect the
    # uninterrupted run never fires, named with its ledger row; before it, the post the
    # recovery published instead is that effect too, beside the one it never published
    stock = cells["stock"]
    assert stock.baseline is not None and stock.baseline.effects == {first: 1}
    before, after = stock.points
    assert after.point.startswith("effect(task=publish_post)") and after.effect_counts == {first: [1], second: [1]}
    eo = _eo(after)
    assert eo.status == "violated" and "never fires" in eo.reason and after.extra == [second]
    assert eo.evidence.ledger_seqs, eo.reason
    assert before.lost == [first] and before.extra == [second] and _eo(before).status == "violated"
    cell_eo = next(v for v in stock.verdicts if v.property == "EO")
    assert cell_eo.status == "violated" and "which the uninterrupted run never fires" in cell_eo.reason

    # the post's identity declared (the one post on the topic): a second post is a duplicate and
    # its text a changed payload; the post published instead is not lost, its payload changed
    declared = cells["declared"]
    identity = "publish_post@x post on Flying cars"
    assert declared.baseline is not None and declared.baseline.effects == {identity: 1}
    assert declared.baseline.payloads == {identity: ["Hark, Flying cars take wing at last! (draft 2)"]}
    before, after = declared.points
    assert after.effect_counts == {identity: [2]} and after.duplicates == [identity] and after.changed == [identity]
    assert before.effect_counts == {identity: [1]} and before.lost == [] and before.extra == []
    assert before.changed == [identity]
    eo = _eo(before)
    assert eo.status == "violated" and "changed the payload" in eo.reason and "(draft 4)" in eo.reason
    assert eo.evidence.ledger_seqs


def test_racers_copies_of_one_effect_stay_one_effect_and_two_writes_stay_two():
    from chaos.kinds.race import fires_by_effect

    def row(seq: int, value: str | None, key: str | None = None) -> dict:
        from chaos.racer.ledger_rows import effect_key

        return {"seq": seq, "task": "pay", "value": value, "effect_key": effect_key("pay", value, key)}

    # distinct_values tags each racer's answer (approve#r0, approve#r1): both racers paid the one invoice
    tags = {"approve#r0": "approve", "approve#r1": "approve"}
    assert fires_by_effect([row(2, "approve#r1"), row(1, "approve#r0")], tags) == {"pay:approve": [1, 2]}
    # one racer's audit row and payment: two effects, once each
    assert fires_by_effect([row(1, "audit INV-7"), row(2, "payment INV-7")], {}) == {"pay:audit INV-7": [1], "pay:payment INV-7": [2]}
    # a declared identity counts by its key, whatever the payload
    assert fires_by_effect([row(1, "120 EUR", "INV-7"), row(2, "121 EUR", "INV-7")], {}) == {"pay@INV-7": [1, 2]}


def test_no_kind_reads_an_effect_label_by_splitting_its_identity():
    """A kind that finds a label's effects by ``key.split(":")`` misses every declared identity
    (``task@key``): the stray kind filed every trial of a keyed app invalid that way. Kinds ask
    ``chaos.racer.ledger_rows.of_task``, which knows all three forms."""
    import re

    kinds = Path(__file__).parents[1] / "chaos" / "kinds"
    split = re.compile(r"""\.split\(["']:["'](, *1)?\)\[0\]""")
    offenders = [
        f"{p.name}:{n}" for p in sorted(kinds.glob("*.py")) for n, line in enumerate(p.read_text().splitlines(), 1) if split.search(line)
    ]
    assert not offenders, f"effect identities split by hand (use of_task): {offenders}"

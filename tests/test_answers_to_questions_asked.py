"""Answers only to questions asked, and races and strays at any pause (issue 39, points 2 and 3).

Each story runs a human-in-the-loop example of LangGraph's own docs, ported in
``tests/workloads/hitl_docs.py``, and checks chaos's verdict against what the example does when
a person kills and answers it by hand (plain LangGraph, SqliteSaver, SIGKILL, real processes):

* the subgraph called as a function, killed right after the parent node notified the reviewer
  and before the subgraph's question was saved: a real recovery continues the thread, is asked,
  answers, and the parent node (which runs again on every resume) notifies the reviewer a third
  time (the uninterrupted run: twice). Sending the answer at once hands it to the question that
  was never asked, and hides the third notification;
* two bookings asking for approval at once: a plain answer is refused ("specify the interrupt
  id"); three workers answering the pause by id book six times;
* the docs' validation loop, whose first planned answer (``abc``) is asked again by design: a race
  at that pause fires nothing and the run waits, which is no stall; aimed at the second pause,
  three workers record the age three times;
* a trip whose first pause asks two bookings at once and whose second asks to pay: a race at the
  payment answers both bookings by id on the way, each with its planned answer;
* two reviews in a row: the answer to review 1, sent again, approves review 2 and the e-mail goes
  out with no one approving it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kits import framework_support as look
from kits.runs import run_text

WORKLOADS = Path(__file__).parent / "workloads"


def _run(tmp_path: Path, text: str):
    shutil.copy(WORKLOADS / "hitl_docs.py", tmp_path / "hitl_docs.py")
    return run_text(tmp_path, text).results


def test_a_recovery_continues_the_thread_and_answers_only_the_question_it_is_asked(tmp_path):
    results = _run(
        tmp_path,
        """
        name: subgraph_review
        kind: kill_sweep
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:subgraph_review
        resume: "command:Alice"
        kill_points: ["effect(task=notify_reviewer)"]
        trials: 1
        """,
    )
    c = look.cell(results)
    assert c.baseline.effects == {"notify_reviewer": 2, "record_name:Alice": 1}
    first = "effect(task=notify_reviewer):after#1"  # notified, the question not yet saved
    p = look.point(c, first)
    # by hand: the victim notified once; the recovery continues (notify, asked), answers (notify)
    assert p.effect_counts["notify_reviewer"] == [3]
    assert p.effect_counts["record_name:Alice"] == [1]
    eo = look.point_verdict(c, first, "EO")
    assert eo.status == "violated" and "notify_reviewer" in eo.reason
    assert look.point_verdict(c, first, "LIVENESS").status == "holds"


def test_three_workers_approving_two_parallel_bookings_by_id_book_six_times(tmp_path):
    results = _run(
        tmp_path,
        """
        name: bookings
        kind: race
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:parallel_bookings
        resume: "command:approve"
        racers: {k: 3}
        trials: 2
        """,
    )
    c = look.cell(results)
    assert c.valid_trials == 2 and not c.racer_errors  # no racer was told to specify the interrupt id
    # every racer's answer reached both bookings (by hand: 6 of 6 in every trial); a racer that
    # read the pause after another's commit may find it answered, so at least both are booked
    assert all(int(f) >= 2 for f in c.fires)
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert look.verdict(c, "CO").status == "violated"


def test_a_race_at_a_pause_whose_planned_answer_re_asks_is_waiting_not_a_stall(tmp_path):
    results = _run(
        tmp_path,
        """
        name: validate
        kind: race
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:validate_age
        resume: "command:30"
        answers: ["abc", 30]
        racers: {k: 2}
        trials: 2
        """,
    )
    c = look.cell(results)
    live = look.verdict(c, "LIVENESS")
    assert live.status == "unknown" and "at_pause" in live.reason
    assert c.fires == {"0": 2}


def test_a_race_aimed_at_the_second_pause_sends_the_plans_second_answer(tmp_path):
    results = _run(
        tmp_path,
        """
        name: validate_at_2
        kind: race
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:validate_age
        resume: "command:30"
        answers: ["abc", 30]
        at_pause: 2
        racers: {k: 2}
        trials: 2
        """,
    )
    c = look.cell(results)
    assert c.valid_trials == 2 and not c.racer_errors
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert all(int(f) >= 1 for f in c.fires)  # by hand: every worker recorded the age


def test_a_race_at_the_payment_answers_the_two_parallel_bookings_on_the_way(tmp_path):
    """The trip's first pause asks two approvals at once, its second asks to pay; the plan gives
    one answer per question, in the order the run asks them (the two bookings, whichever LangGraph
    saves first, then the payment). Aimed at the second pause, the parking racer answers the first
    whole, each booking by its id with its own planned answer (a plain value is refused there), and
    the racers send the plan's answer to the payment, not a booking's: by hand, one booking made
    and one declined, and both workers pay (three runs of three)."""
    results = _run(
        tmp_path,
        """
        name: trip_at_2
        kind: race
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:bookings_then_pay
        resume: "command:approve"
        answers: [approve, decline, approve]
        at_pause: 2
        racers: {k: 2}
        trials: 2
        """,
    )
    c = look.cell(results)
    assert c.valid_trials == 2 and not c.racer_errors  # the parking racer reached the payment
    booked = [k for k in c.baseline.effects if k.startswith("book:")]
    assert len(booked) == 1 and c.baseline.effects[booked[0]] == 1 and c.baseline.effects["pay:trip"] == 1
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert all(int(f) >= 1 for f in c.fires)  # every trial paid


def test_the_answer_to_review_one_sent_again_approves_review_two(tmp_path):
    results = _run(
        tmp_path,
        """
        name: reviews
        kind: stray_resume
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: hitl_docs:two_reviews
        resume: "command:approve"
        trials: 1
        """,
    )
    c = look.cell(results)
    assert c.valid_trials == 1  # review 1 was answered (the run went on to review 2): consumed
    co, ar = look.verdict(c, "CO"), look.verdict(c, "AR")
    assert co.status == "violated" and "send_email" in co.reason
    assert ar.status == "violated" and "later pause" in ar.reason
    assert ar.evidence.trial_ids == co.evidence.trial_ids and len(ar.evidence.ledger_seqs) == 1

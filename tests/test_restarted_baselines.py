"""Baselines as a restarted app runs (issue 39, point 5).

AutoGen AgentChat's own human-in-the-loop example (``tests/workloads/hitl_handoff_ag.py``: a lazy
assistant that hands off to the user, ``HandoffTermination | TextMentionTermination``, the team kept
with ``save_state`` / ``load_state``), with a replayed model. By hand (plain AgentChat, no chaos):
answered in the process that paused, the team publishes the forecast and ends; paused, stopped, and
restored with ``load_state`` in a new process, the answered team hands off to the user again, with
the same question, restart after restart (its replayed model starts its replies over; the team's
saved state does not hold that place).

A restarted app is what a crash recovery and every racer are. So the uninterrupted run chaos judges
them against answers in a fresh process too, and both kinds say the one sentence the team needs:
the approval was answered and the same question came back.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kits import framework_support as look
from kits.runs import run_text

WORKLOADS = Path(__file__).parent / "workloads"
SAID = "the approval was answered and the same question came back"


def _run(tmp_path: Path, text: str):
    shutil.copy(WORKLOADS / "hitl_handoff_ag.py", tmp_path / "hitl_handoff_ag.py")
    return run_text(tmp_path, text).results


def test_a_sweep_of_a_team_restored_with_load_state_says_the_answered_approval_was_asked_again(tmp_path):
    results = _run(
        tmp_path,
        """
        name: hitl_sweep
        kind: kill_sweep
        target: {framework: autogen, backend: file}
        workload: hitl_handoff_ag:weather
        resume: "command:sunny"
        trials: 1
        """,
    )
    c = look.cell(results)
    # the uninterrupted run, restored in a fresh process as a restarted app, never publishes
    assert c.baseline.effects == {}
    assert c.baseline.asked_again == "lazy_assistant"
    live = look.verdict(c, "LIVENESS")
    assert live.status == "violated" and SAID in live.reason
    # the pause saved twice (asked, answered in a fresh process, asked again): the second save is a
    # kill point too, reached the way the baseline reached it, and its recovery is asked again
    again = look.point(c, "save(turn=lazy_assistant):after#2")
    assert again.reached == 1 and again.resume_outcomes == ["interrupted"]
    assert look.verdict(c, "EO").status != "violated"  # nothing is published twice: the app never gets that far


def test_a_race_on_a_team_restored_with_load_state_says_the_same(tmp_path):
    results = _run(
        tmp_path,
        """
        name: hitl_race
        kind: race
        target: {framework: autogen, backend: file}
        workload: hitl_handoff_ag:weather
        resume: "command:sunny"
        racers: {k: 2}
        trials: 1
        """,
    )
    c = look.cell(results)
    assert c.baseline.asked_again == "lazy_assistant"
    live = look.verdict(c, "LIVENESS")
    # on main: "unknown: ... aim at the one that does (at_pause: n)", as if another pause would fire it
    assert live.status == "violated" and SAID in live.reason and "at_pause" not in live.reason


def test_a_validation_loop_that_asks_again_in_the_process_that_paused_too_is_the_apps_own_loop(tmp_path):
    # an age clerk that refuses any answer but a positive number (tests/workloads/validate_age_ag.py),
    # given "old" by design: answered in the process that paused it asks again as well, so the repeat
    # after a restore is the app's loop, not the restart's: no sentence, no LIVENESS violation from it
    shutil.copy(WORKLOADS / "validate_age_ag.py", tmp_path / "validate_age_ag.py")
    results = run_text(
        tmp_path,
        """
        name: age_loop
        kind: kill_sweep
        target: {framework: autogen, backend: file}
        workload: validate_age_ag:ask_age
        resume: "command:old"
        trials: 1
        """,
    ).results
    c = look.cell(results)
    assert c.baseline.asked_again is None
    assert c.baseline.effects == {}  # no age is ever recorded: the answer is refused every time
    live = look.verdict(c, "LIVENESS")
    assert SAID not in live.reason and live.status == "holds"
    assert all(SAID not in v.reason for v in c.verdicts)
    # and EO, vacuous, does not send the owner to move ctx.effect: the run ended waiting for a better answer
    eo = look.verdict(c, "EO")
    assert "ended waiting at a pause again (age_clerk)" in eo.reason and "call ctx.effect" not in eo.reason

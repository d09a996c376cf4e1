"""A team's graph that is wired wrong is refused before any trial, with what to change.

Before a run folder is written, one racer builds the user's workload and runs it once without
faults (``chaos.running.preflight``). A graph compiled with its own saver or without one, a
``gated_task`` that names a node instead of an effect label, an answer the graph cannot take: each
is exit 3 with one line on the console naming the scenario file, the factory and the fix, and no
run folder. Measured instead, each of these used to come out as a framework violation (or died
inside chaos).
"""

from __future__ import annotations

import pytest
from kits.robustkit import chaos, wait_for

SCENARIO = """\
name: wiring
kind: kill_sweep
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: tests.workloads.user_workloads:{factory}
resume: "command:true"
kill_points: ["effect(task=send_payment)"]
trials: 1
seed: 4
"""


def _run(tmp_path, factory: str):
    scenario = tmp_path / "wiring.yaml"
    scenario.write_text(SCENARIO.format(factory=factory))
    return chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")


@pytest.mark.parametrize(
    ("factory", "said"),
    [
        ("approval_own_saver", "wrote no checkpoint through ctx.checkpointer: compile the graph with checkpointer=ctx.checkpointer"),
        ("approval_no_checkpointer", "AttributeError"),
        ("approval_gated_by_node", "gated_task 'approve' never fired as an effect after the interrupt was answered"),
        ("approval_wants_a_dict", "did not accept the answer True: TypeError"),
        ("approval_audit_after_return", "fired 1 effect(s) outside a running task (audit)"),
    ],
)
def test_a_miswired_graph_is_refused_with_exit_3_and_the_fix_on_the_console(tmp_path, factory, said):
    out = _run(tmp_path, factory)
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert f"wiring.yaml: workload 'tests.workloads.user_workloads:{factory}'" in console
    assert said in console
    assert "nothing was counted" in console
    assert not (tmp_path / "out").exists()


def test_a_graph_wired_right_passes_the_preflight_and_is_measured(tmp_path):
    out = _run(tmp_path, "approval")
    assert out.returncode == 1, out.stdout + out.stderr  # LangGraph re-runs the node whose writes were lost: EO violated
    assert "run folder:" in out.stdout


def test_a_kind_that_measures_an_error_is_not_refused_for_it(tmp_path):
    """invalid_state's workloads raise by design: the preflight does not call that miswiring."""
    from chaos.running.preflight import wiring_problem
    from chaos.scenario.model import Scenario, expand

    raised = {
        "status": "ok",
        "trace": [{"barrier": "put(step=-1,source=input):before#1"}],
        "outcomes": [
            {"status": "error", "error": {"type": "ValidationError", "message": "count", "where": "app.py:3"}, "action": {"op": "run"}}
        ],
    }
    base = {"name": "p", "target": {"framework": "langgraph", "backend": "sqlite"}, "workload": "invalid_type"}
    (invalid,) = expand(Scenario.model_validate({**base, "kind": "invalid_state"}))
    (sweep,) = expand(Scenario.model_validate({**base, "kind": "kill_sweep", "resume": "none"}))
    assert wiring_problem(invalid, raised) is None
    said = wiring_problem(sweep, raised)
    assert said is not None and said.startswith("raised in an uninterrupted run (no fault injected): ValidationError: count (app.py:3)")


REJECTED = """\
name: wiring
kind: {kind}
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: tests.workloads.user_workloads:approval_rejectable
resume: "command:reject"
trials: 1
seed: 4
"""


def test_a_rejection_that_fires_nothing_is_a_normal_run_and_a_race_on_it_is_told_to_answer_approve(tmp_path):
    # a sweep of the rejection path: the gated payment never fires, as the team meant; nothing to fix
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(REJECTED.format(kind="kill_sweep"))
    out = chaos(["run", str(sweep), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")
    assert out.returncode in (0, 1, 2), out.stdout + out.stderr  # measured (EO unknown: no effect fired to count)
    assert "set gated_task" not in out.stdout + out.stderr
    assert "run folder:" in out.stdout
    # a race counts fires of the gated payment: answered "reject" it would count none, and is told so
    race = tmp_path / "race.yaml"
    race.write_text(REJECTED.format(kind="race") + "racers: {k: 2}\n")
    out = chaos(["run", str(race), "--out", str(tmp_path / "out2"), "-q"], tmp_path / "state")
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert "answered 'reject', the run fired no 'send_payment' effect (effects after the answer: none)" in console
    assert "kind race counts fires of the gated effect" in console
    assert "resume with the answer that fires it" in console


MISWIRED_TWICE = """\
name: wiring
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
resume: "command:true"
kill_points: ["effect(task=send_payment)"]
trials: 1
seed: 4
workload: tests.workloads.user_workloads:approval_own_saver
matrix:
  case:
    - {name: own-saver}
    - {name: wants-a-dict, workload: "tests.workloads.user_workloads:approval_wants_a_dict"}
"""


def test_with_two_jobs_the_first_cell_s_problem_is_said_as_with_one(tmp_path):
    """Two cells wired wrong, their checks run at once: the console names the first cell's problem,
    whichever check ended first, as one job after another would."""
    scenario = tmp_path / "wiring.yaml"
    scenario.write_text(MISWIRED_TWICE)
    said = []
    for jobs in ("1", "2"):
        out = chaos(["run", str(scenario), "--out", str(tmp_path / f"out{jobs}"), "-q", "--jobs", jobs], tmp_path / "state")
        console = out.stdout + out.stderr
        assert out.returncode == 3, console
        assert "approval_own_saver' wrote no checkpoint through ctx.checkpointer" in console
        assert "approval_wants_a_dict" not in console
        assert not (tmp_path / f"out{jobs}").exists()
        said.append(console)
    assert said[0] == said[1]


def test_the_preflight_runs_its_checks_at_once_and_says_the_first_failure_in_order():
    """``run_checks``: the first check fails only once the second has failed (it waits for it), so the
    two ran at once; the first one's failure is what is said."""
    import threading

    from chaos.racer.errors import TargetError
    from chaos.running.preflight import Check, run_checks

    second_failed = threading.Event()

    def first(_children) -> None:
        if not second_failed.wait(30):
            raise TargetError("the second check never ran beside the first")
        raise TargetError("the first check's problem")

    def second(_children) -> None:
        second_failed.set()
        raise TargetError("the second check's problem")

    with pytest.raises(TargetError, match="the first check's problem"):
        run_checks([Check(("story", "first"), first), Check(("story", "second"), second)], jobs=2)


def test_a_failed_preflight_leaves_no_check_process_running():
    """A check fails while another's process still runs: that process is killed with the preflight,
    not left to finish on its own (here it would sleep a minute)."""
    import subprocess
    import threading

    from chaos.racer.errors import TargetError
    from chaos.running.preflight import Check, run_checks
    from chaos.running.trial import wait_until

    started: list = []
    running = threading.Event()

    def slow(children) -> None:
        started.append(children)
        running.set()
        children.run(["sleep", "60"], {}, 120)

    def failing(_children) -> None:
        assert running.wait(30), "the slow check never started"
        assert wait_until(lambda: bool(started[0].live), 30), "the slow check's process never started"
        started.append(next(iter(started[0].live)))
        raise TargetError("wired wrong")

    with pytest.raises(TargetError, match="wired wrong"):
        run_checks([Check(("story", "failing"), failing), Check(("story", "slow"), slow)], jobs=2)
    proc = started[1]
    assert isinstance(proc, subprocess.Popen)
    assert proc.poll() is not None, "the slow check's process outlived the preflight"
    assert proc.returncode == -9


def test_later_runs_preflights_wait_for_go_let_a_race_have_the_cores_and_leave_their_failures_to_their_runs(monkeypatch):
    """``Ahead`` (a night's later entries, checked during this entry's cells): nothing starts before
    ``go``; ``hold`` returns once the check under way has ended, and none starts after it; once an
    entry's run has started (``past``) none of its checks starts here; what passed is not checked
    again by the run's own preflight, and what failed is checked again there and said in order."""
    import threading

    from chaos.racer.errors import TargetError
    from chaos.running import preflight
    from chaos.running.preflight import Ahead, Check, run_checks

    log: list[str] = []
    release = threading.Event()
    ahead: list[Ahead] = []

    def first(_children) -> bool:
        log.append("first starts")
        assert release.wait(30)
        log.append("first ends")
        return True

    def second(_children) -> bool:
        log.append("second")
        raise TargetError("the second check's problem")

    def third(_children) -> bool:
        log.append("third")
        ahead[0].past(1)  # the later entry's run starts now
        return True

    def later(_children) -> bool:
        log.append("later")
        return True

    plans = {
        "next.yaml": [Check(("ahead-story", "1"), first), Check(("ahead-story", "2"), second), Check(("ahead-story", "3"), third)],
        "later.yaml": [Check(("ahead-story", "4"), later)],
    }
    monkeypatch.setattr(preflight, "planned_checks", lambda cells, scenario_file: plans[scenario_file])
    ahead.append(Ahead([([], "next.yaml"), ([], "later.yaml")]))
    try:
        ahead[0].go()  # a sweep cell of this run starts
        wait_for(lambda: log == ["first starts"], 30, "the first check to start")
        held = threading.Thread(target=lambda: (ahead[0].hold(), log.append("held")))  # a race cell starts
        held.start()
        release.set()
        held.join(30)
        assert log == ["first starts", "first ends", "held"]  # none started after the hold
        ahead[0].go()  # the race is over
        wait_for(lambda: not ahead[0].thread.is_alive(), 30, "every later entry to be checked or started")
    finally:
        ahead[0].stop()
    assert log == ["first starts", "first ends", "held", "second", "third"]  # "later": its run had started

    def not_again(_children) -> bool:
        raise AssertionError("a check that passed ahead ran again")

    again = [Check(("ahead-story", "1"), not_again), Check(("ahead-story", "2"), second), Check(("ahead-story", "3"), not_again)]
    with pytest.raises(TargetError, match="the second check's problem"):
        run_checks(again, jobs=2)


def test_a_stopped_ahead_preflight_leaves_no_check_process_running(monkeypatch):
    """The night ends (or is interrupted) while the next entry's check runs: its process is killed
    and the thread ends with it."""
    import threading

    from chaos.running import preflight
    from chaos.running.preflight import Ahead, Check

    procs: list = []
    started = threading.Event()

    def slow(children) -> bool:
        started.set()
        return children.run(["sleep", "60"], {}, 120).returncode == 0

    monkeypatch.setattr(preflight, "planned_checks", lambda cells, scenario_file: [Check(("ahead-story", "slow"), slow)])
    ahead = Ahead([([], "next.yaml")])
    ahead.go()
    assert started.wait(30)
    wait_for(lambda: bool(ahead.children.live), 30, "the check's process to start")
    procs.extend(ahead.children.live)
    ahead.stop()
    assert not ahead.thread.is_alive()
    assert procs[0].poll() == -9, "the check's process outlived the night"
    assert ("ahead-story", "slow") not in preflight._passed


def test_a_nights_race_cell_holds_the_next_preflight_and_any_other_cell_lets_it_go():
    """The seam in ``chaos nightly``: a cell of a kind that keeps its racers' timing windows (race,
    double texting) holds the next entry's preflight; a sweep's lets it go on."""
    from types import SimpleNamespace

    from chaos.running.nightly import _cell_starts

    calls: list[str] = []
    ahead = SimpleNamespace(hold=lambda: calls.append("hold"), go=lambda: calls.append("go"))
    seen: list[str] = []
    for kind in ("kill_sweep", "race", "double_texting", "stray_resume"):
        _cell_starts(ahead, lambda cell, total: seen.append(cell.scenario.kind), SimpleNamespace(scenario=SimpleNamespace(kind=kind)), 4)
    assert calls == ["go", "hold", "hold", "go"]
    assert seen == ["kill_sweep", "race", "double_texting", "stray_resume"]  # the caller's own callback still runs

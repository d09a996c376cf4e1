"""The worked example (examples/email_assistant) through chaos, as a team would put it in CI.

The stock assistant has real bugs, and chaos must keep finding them: a payment fired twice when a
worker dies right after paying, a payment per worker when four resume one approval, and a stray
repeat of the payment approval that approves the e-mail. The fixed assistant must come out clean.

The verdicts chaos once got wrong on this app (issue 12: an app error blamed on the framework, a
false CO violation by interrupt id, vacuous points making a fixed graph unknown, a duplicate that
needs no crash explained as a crash's) are checked here, each with the right verdict. The sweep
answers both approvals (``answers: [accept, accept]``). The runs are cut down (a few kill points,
few trials) to stay under a minute each.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import chaos

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "examples" / "email_assistant" / "scenarios"

# the kill points that tell the story: before anything is durable (nothing fired yet), right after
# the payment, once the e-mail approval is durable (answering it re-runs the node), and between two
# passes of the approval node (a node that runs again in a loop is a new task, not a re-run: PC)
KILL_POINTS = [
    "put(step=-1,source=input):before",
    "effect(task=send_payment)",
    "channels=__interrupt__+__resume__):after",
    "put(step=2,source=loop):before",
]


def _run(name: str, out: Path) -> chaos.RunResults:
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        case["trials"] = min(case.get("trials", 1), 3 if case["kind"] == "race" else 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the scenarios name the app as examples.email_assistant.app:<variant>
        return chaos.run(data, out=out)


def _cell(results: chaos.RunResults, case: str):
    (cell,) = [c for c in results.cells if c.axes["case"]["name"] == case]
    return cell


def _verdict(cell, prop: str):
    (v,) = [v for v in cell.verdicts if v.property == prop]
    return v


def _point(cell, fragment: str):
    (p,) = [p for p in cell.points if fragment in p.point]
    return p


def _fires(point, task: str) -> list[int]:
    """Per valid trial, how often ``task``'s effect fired (its keys carry the value: ``task:value``)."""
    keys = [k for k in point.effect_counts if k == task or k.startswith(task + ":")]
    return [sum(point.effect_counts[k][i] for k in keys) for i in range(point.reached)]


@pytest.fixture(scope="module")
def stock(tmp_path_factory) -> chaos.RunResults:
    return _run("stock", tmp_path_factory.mktemp("stock"))


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> chaos.RunResults:
    return _run("fixed", tmp_path_factory.mktemp("fixed"))


# ------------------------------------------------------------------ stock: the real bugs, found


def test_a_worker_killed_right_after_paying_pays_again_on_resume(stock):
    sweep = _cell(stock, "sweep")
    point = _point(sweep, "effect(task=send_payment):after#1")
    assert point.reached == 1
    # the uninterrupted run already pays twice (the second interrupt re-runs the node: no crash
    # needed); killed right after paying, the resumed worker pays once more on top of that
    assert sweep.baseline is not None and sweep.baseline.workflow_duplicates == {"send_payment:INV-1042": 2}
    assert _fires(point, "send_payment") == [3]
    assert [key.split(":", 1)[0] for key in point.duplicates] == ["send_payment"]
    eo = _verdict(sweep, "EO")
    assert eo.status == "violated"
    assert "effect(task=send_payment):after#1" in eo.evidence.points
    assert len(eo.evidence.ledger_seqs) >= 2


def test_four_workers_resuming_the_payment_approval_pay_more_than_once(stock):
    race = _cell(stock, "race-k4")
    assert race.valid_trials == 3
    assert race.max_fires is not None and race.max_fires >= 2
    assert _verdict(race, "CO").status == "violated"


def test_a_stray_repeat_of_the_payment_approval_approves_the_email(stock):
    v = _verdict(_cell(stock, "stray"), "CO")
    assert v.status == "violated"
    assert "send_email:reply-msg-7781" in v.reason


def test_the_stock_run_exits_1(stock):
    assert stock.exit_code == 1


# --------------------------------------------------------------------- fixed: the fixes, seen


def test_the_fixed_assistant_pays_once_however_the_worker_dies(fixed):
    sweep = _cell(fixed, "sweep")
    point = _point(sweep, "effect(task=send_payment):after#1")
    assert _fires(point, "send_payment") == [1]
    assert all(p.duplicates == [] for p in sweep.points)
    assert "violated" not in {v.status for p in sweep.points for v in p.verdicts if v.property == "EO"}


def test_the_fixed_assistant_pays_once_when_four_workers_resume(fixed):
    race = _cell(fixed, "race-k4")
    assert race.valid_trials == 3
    assert race.fires == {"1": 3}
    assert _verdict(race, "CO").status == "holds"


def test_the_fixed_assistant_keeps_its_chain_linear_behind_the_gate(fixed):
    """Idempotent effects pay once, but four workers that all commit fork the thread's chain (LC,
    LangGraph issue 8796; stock does). The fixed assistant's workers resume behind a cross-process
    gate (REMIT's): one is served, the others are turned away before any node runs, so nothing
    forks."""
    race = _cell(fixed, "race-k4")
    lc = _verdict(race, "LC")
    assert lc.status == "holds", lc.reason
    assert _verdict(race, "LIVENESS").status == "holds"


# ------------------------------------- the reference: a repeated answer addressed by id, by hand


def _answer_twice_by_id(variant: str) -> tuple[list[tuple[str, object]], bool]:
    """Approve the payment by its interrupt id, then send the same addressed answer again (one
    process, in-memory saver): the effects fired, and whether the stray answer moved the thread."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    from examples.email_assistant import app

    fired: list[tuple[str, object]] = []
    ctx = chaos.WorkloadContext(checkpointer=InMemorySaver(), effect_hook=lambda task, value, once=False: fired.append((task, value)))
    workload = getattr(app, variant)(ctx)
    graph, config = workload.graph, {"configurable": {"thread_id": "by-hand"}}
    payment = graph.invoke(workload.input, config)["__interrupt__"][0].id
    graph.invoke(Command(resume={payment: "accept"}), config)
    before = graph.get_state(config).config
    fired.clear()
    graph.invoke(Command(resume={payment: "accept"}), config)
    return fired, graph.get_state(config).config != before


def test_by_hand_a_repeat_addressed_to_the_payment_approval_is_inert_on_fixed_but_not_on_stock():
    # the truth the stray-by-id verdicts are judged against (LangGraph 1.2: an answer addressed to a
    # task's first interrupt id goes to that task's next interrupt, and stock asks both in one task)
    fired, moved = _answer_twice_by_id("fixed")
    assert (fired, moved) == ([], False)
    fired, moved = _answer_twice_by_id("stock")
    assert ("send_email", "reply-msg-7781") in fired and moved


# ------------------------------------------- what chaos once got wrong on this app (issue 12)


def test_no_liveness_violation_is_an_app_error(stock, fixed):
    """A KeyError in the app's triage_router (Command(resume) on a thread with nothing durable) is
    an app error: the trial is unknown, never LIVENESS violated (issue 12.3)."""
    for results in (stock, fixed):
        live = _verdict(_cell(results, "sweep"), "LIVENESS")
        assert not (live.status == "violated" and "KeyError" in live.reason), live.reason


def test_a_stray_repeat_addressed_to_the_consumed_approval_is_inert_on_the_fixed_assistant(fixed):
    """resume_by: interrupt addresses the consumed payment approval (issue 12.1), not the live e-mail
    interrupt; as sent by hand to that id, the fixed graph stays put."""
    assert _verdict(_cell(fixed, "stray-by-id"), "CO").status == "holds"


def test_eo_holds_on_the_fixed_assistant_over_the_points_that_exercised_it(fixed):
    """EO holds over the points that exercised it; points where nothing had fired yet are vacuous (issue 12.6)."""
    assert _verdict(_cell(fixed, "sweep"), "EO").status == "holds"


def test_the_fixed_run_exits_0(fixed):
    """The fixed assistant passes every property it is judged on (issue 12), its race's chain
    included (LC, issue 26: the workers resume behind a cross-process gate)."""
    violated = {(c.axes["case"]["name"], v.property) for c in fixed.cells for v in c.verdicts if v.status == "violated"}
    assert violated == set()
    assert fixed.exit_code == 0


def test_the_node_rerun_duplicate_is_explained_as_needing_no_crash(stock):
    """Answering the second approval re-runs the node and pays again: a duplicate of the
    uninterrupted run, explained as needing no crash (issue 12.8)."""
    report = (stock.run_dir / "report.md").read_text()
    assert re.search(r"(needs? no crash|without (a|any) crash|no crash needed|in the baseline)", report, re.IGNORECASE)


def test_the_duplicates_are_told_once_per_cause_with_how_often_and_one_example(stock):
    """The owner reads each finding once (issue 28.8): the payment the workflow duplicates on its own,
    over many kill points, is one finding; a crash adding a third payment is another, naming its
    points; each with one example trial, in report.md and report.html alike."""
    md = (stock.run_dir / "report.md").read_text()
    section = md.split("## Why these are duplicates", 1)[1].split("## Verdicts", 1)[0]
    findings = re.findall(r"^\d+\. (.*)$", section, re.MULTILINE)
    examples = re.findall(r"^   Example, `[\w-]+`: ", section, re.MULTILINE)
    told = int(re.search(r"(\d+) explanation\(s\), grouped by cause and effect into (\d+)", section).group(1))
    assert len(findings) == len(examples) and len(findings) < told / 2, section
    own = [f for f in findings if "sweep" in f and "as it does in an uninterrupted run" in f]
    assert len(own) == 1 and int(re.search(r"at (\d+) kill points?", own[0]).group(1)) >= 2, own
    third = [f for f in findings if "send_payment:INV-1042 happened three times" in f]
    assert len(third) == 1 and "effect(task=send_payment):after#1" in third[0], findings
    # report.html: the same findings, each trial's own sentence kept, collapsed under its finding
    page = (stock.run_dir / "report.html").read_text()
    html_section = page.split('id="duplicates"', 1)[1].split("</ol>", 1)[0]
    assert html_section.count("<li><b>") == len(findings)
    assert html_section.count("<details>") >= 2 and "(ledger seq" in html_section


def test_stock_violations_are_exactly_the_real_ones(stock):
    """Stock exits 1 with only its real violations: EO, CO of the race, CO and AR of the plain stray
    repeat and of the by-id repeat (real on stock: LangGraph hands an answer addressed to a task's
    first interrupt to its next one, so the repeat answers a question nobody asked it: issue 39);
    LIVENESS (an app error) is not among them. The race's chain (LC)
    is open: a worker whose resumed task stops at the e-mail approval saves pending writes on the
    same checkpoint and forks nothing, one that commits a new checkpoint beside another forks it;
    which happens is the race's timing (measured both ways), so LC is judged, either way."""
    violated = {(c.axes["case"]["name"], v.property) for c in stock.cells for v in c.verdicts if v.status == "violated"}
    assert violated - {("race-k4", "LC")} == {
        ("sweep", "EO"),
        ("race-k4", "CO"),
        ("stray", "CO"),
        ("stray", "AR"),
        ("stray-by-id", "CO"),
        ("stray-by-id", "AR"),
    }
    assert _verdict(_cell(stock, "race-k4"), "LC").status in ("holds", "violated")


# ------------------------------------------------------------------ fork: the app's own answers


@pytest.fixture(scope="module")
def fork(tmp_path_factory) -> chaos.RunResults:
    data = yaml.safe_load((SCENARIOS / "fork.yaml").read_text())
    data["trials"] = 1
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        return chaos.run(data, out=tmp_path_factory.mktemp("fork"))


def _fork_cell(results: chaos.RunResults, variant: str):
    (cell,) = [c for c in results.cells if c.cell_id.endswith(f":{variant}")]
    return cell


def test_forking_the_payment_approval_with_ignore_pays_again_on_stock(fork):
    """The payment's effect carries the invoice, not the answer, so chaos learns what "ignore"
    does from the app itself (a fresh thread answered "ignore" first: no payment) and compares."""
    cell = _fork_cell(fork, "stock")
    assert cell.valid_trials == cell.trials == 1
    fd = _verdict(cell, "FD")
    assert fd.status == "violated", fd.reason
    assert "'ignore' fired send_payment:INV-1042 again" in fd.reason and "'ignore' fires nothing" in fd.reason


def test_forking_the_payment_approval_with_ignore_is_ignored_on_fixed(fork):
    cell = _fork_cell(fork, "fixed")
    assert cell.valid_trials == cell.trials == 1
    fd = _verdict(cell, "FD")
    assert fd.status == "holds", fd.reason
    assert "fired nothing, as 'ignore' does answered first" in fd.reason


# ------------------------------------------------------------ the team's own guard: a claim row (issue 25)


@pytest.fixture(scope="module")
def claim_row(tmp_path_factory) -> chaos.RunResults:
    data = yaml.safe_load((SCENARIOS / "claim_row.yaml").read_text())
    data["kill_points"] = ["effect(task=send_payment)", "put(step=-1,source=input):before"]
    data["trials"] = 3
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        return chaos.run(data, out=tmp_path_factory.mktemp("claim_row"))


def test_a_claim_row_lets_one_of_four_workers_pay_and_turns_the_others_away(claim_row):
    guarded = _cell(claim_row, "race-k4-claim-row")
    assert guarded.valid_trials == 3 and guarded.fires == {"1": 3}
    assert _verdict(guarded, "CO").status == "holds" and _verdict(guarded, "LIVENESS").status == "holds"
    assert "by claim_row" in _verdict(guarded, "CO").reason  # the losers were refused by the guard, not errors
    assert guarded.racer_errors == 0 and not guarded.app_errors


def test_a_worker_killed_after_paying_leaves_a_claim_no_recovery_may_take(claim_row):
    """What the claim row does not claim, measured: the payment fires once, but its claim outlives
    the worker, so every recovery is refused and the e-mail is never sent."""
    sweep = _cell(claim_row, "sweep-claim-row")
    after_paying = _point(sweep, "effect(task=send_payment)")
    assert _fires(after_paying, "send_payment") == [1]
    live = {v.property: v for v in after_paying.verdicts}
    assert live["LIVENESS"].status == "violated" and "refused by guard claim_row: AlreadyClaimed" in live["LIVENESS"].reason
    assert live["EO"].status == "holds"

"""The OpenAI Agents SDK with its saved RunState in the app's store, under real SIGKILLs and races.

What a user sees: an approved tool whose process dies after the tool's effect and before the app
saves the state runs again when the saved approval is resumed (the SDK saves nothing itself); four
processes restoring one saved state and approving it each run the tool; two states restored from one
blob are both resumable (a fork the API cannot tell from a retry); with the SDK's SQLiteSession the
tool's output can be durable in the session while the blob still waits, and the resume runs the
tool again (a second output for one call id); a blob written by 0.24.0 is refused by 0.23.1 (its
schema policy fails fast), and one written by 0.23.1 resumes on 0.24.0 as 0.24.0 alone would. Bad
input (an unreachable store, an environment without the SDK) is refused before any trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.envs import python_for
from chaos.targets import get_target


@pytest.fixture(scope="module", autouse=True)
def _env():
    python_for("openai_agents")


def _scenario(kind: str, *, backend: str = "file", workload: str = "gate_after_interrupt", extra: str = "") -> str:
    return (
        f"name: oa_{kind}\nkind: {kind}\ntarget: {{framework: openai_agents, backend: {backend}}}\n"
        f'workload: {workload}\nresume: "command:true"\ntrials: 1\nseed: 36\ntimeout_s: 60\n{extra}'
    )


def test_a_kill_between_the_approved_tool_and_the_save_runs_the_tool_again(tmp_path):
    text = _scenario("kill_sweep", extra='kill_points: ["effect(task=gate)", "save_state(final_output):after"]\n')
    outcome = run_text(tmp_path, text)
    results = outcome.results
    c = look.cell(results)
    eo = look.verdict(c, "EO")
    assert eo.status == "violated" and eo.evidence.ledger_seqs
    assert look.point(c, "effect(task=gate)").duplicates == ["gate:True"]
    # once the finished state is saved the run has ended: nothing runs again
    done = look.point(c, "save_state(final_output):after")
    assert done.effect_counts == {"pre": [1], "gate:True": [1], "end": [1]}
    assert results.exit_code == 1
    # the finding, as a script an upstream maintainer runs with the SDK alone
    from chaos.repro import write_repro

    gate_point = look.point_verdict(c, "effect(task=gate)", "EO")
    repro = write_repro(outcome.run_dir, gate_point.evidence.trial_ids[0], tmp_path / "repro")
    assert "chaos" not in repro.script.read_text().replace("found by chaos", "").replace("Found by chaos", "")
    ran = subprocess.run([python_for("openai_agents"), str(repro.script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout


def test_four_processes_approving_one_saved_state_each_run_the_tool(tmp_path):
    outcome = run_text(tmp_path, look.pause_answers("openai_agents", "race", seed=7, trials=1, k=4))
    c = look.cell(outcome.results)
    assert c.valid_trials == 1
    co = look.verdict(c, "CO")
    assert co.status == "violated"
    assert c.max_fires == 4
    # the race as a script with the SDK alone: four forked processes restore the one saved file and approve
    from chaos.repro import write_repro

    repro = write_repro(outcome.run_dir, co.evidence.trial_ids[0], tmp_path / "repro")
    assert "chaos" not in repro.script.read_text().replace("found by chaos", "").replace("Found by chaos", "")
    ran = subprocess.run([python_for("openai_agents"), str(repro.script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout and "gate fired 4 time(s)" in ran.stdout


def test_a_second_approval_of_a_finished_run_is_inert_and_a_fork_is_not_told_from_a_retry(tmp_path):
    (tmp_path / "stray").mkdir()
    (tmp_path / "fork").mkdir()
    stray = look.cell(run_text(tmp_path / "stray", look.pause_answers("openai_agents", "stray_resume", seed=8)).results)
    assert look.verdict(stray, "CO").status == "holds"
    fork = look.cell(run_text(tmp_path / "fork", _scenario("fork")).results)
    assert look.verdict(fork, "FD").status == "holds"  # the second state from the same blob runs the tool with its own answer
    fi = look.verdict(fork, "FI")
    assert fi.status == "violated" and "RunState.from_json" in fi.reason


_SQLALCHEMY = pytest.param(
    "postgres",
    "workload_params: {session: sqlalchemy}\n",
    marks=pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN"),
    id="sqlalchemy-postgres",
)


@pytest.mark.parametrize(("backend", "params"), [pytest.param("sqlite_session", "", id="sqlite"), _SQLALCHEMY])
def test_a_tool_output_durable_in_the_session_is_run_again_from_the_waiting_blob(tmp_path, backend, params):
    point = "session.add_items(n=1,kind=function_call_output):after"
    outcome = run_text(tmp_path, _scenario("kill_sweep", backend=backend, extra=f'kill_points: ["{point}"]\n{params}'))
    c = look.cell(outcome.results)
    pc = look.point_verdict(c, point, "PC")
    assert pc.status == "violated" and "gate recorded complete at the kill, ran again on resume" in pc.reason
    assert look.point(c, point).duplicates == ["gate:True"]
    if backend != "sqlite_session":
        return
    # the finding with the SDK's own session, as a script without chaos: the gate runs twice and the
    # session holds two outputs for its call id
    from chaos.repro import write_repro

    repro = write_repro(outcome.run_dir, pc.evidence.trial_ids[0], tmp_path / "repro")
    ran = subprocess.run([python_for("openai_agents"), str(repro.script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout and "'call_gate': 2" in ran.stdout


def test_the_blob_schema_policy_across_a_deploy_of_the_sdk(tmp_path):
    text = _scenario(
        "upgrade",
        extra='matrix:\n  case:\n    - {name: up, version: "0.23.1", upgrade_to: {target: {version: "0.24.0"}}}\n'
        '    - {name: down, upgrade_to: {target: {version: "0.23.1"}}}\n',
    )
    results = run_text(tmp_path, text).results
    up = look.verdict(look.cell(results, "case=up"), "UP")
    assert up.status == "holds" and "resumed to what v2 alone gives" in up.reason
    down = look.verdict(look.cell(results, "case=down"), "UP")
    assert down.status == "holds" and "schema version is not supported" in down.reason


def test_what_the_adapter_cannot_express_is_unknown_with_its_reason(tmp_path):
    c = look.cell(run_text(tmp_path, _scenario("fork", extra="fork_via: explicit\n")).results)
    fd = look.verdict(c, "FD")
    assert fd.status == "unknown" and get_target("openai_agents").unsupported["fork:explicit"] in (fd.reason or "")


def test_an_approval_of_an_answered_or_unknown_call_is_accepted_silently(tmp_path):
    # by hand (0.24.0): state.approve of an item whose call id no interruption has, or of the item already
    # answered on the finished state, raises nothing; the run stops again at the real pending item, or calls
    # the model again; no tool fires. The stray answer is inert (CO holds) but never refused (AR violated).
    text = _scenario(
        "stray_resume",
        extra="matrix:\n  case:\n    - {name: answered, resume_by: answered_id}\n    - {name: unknown, resume_by: unknown_id}\n",
    )
    results = run_text(tmp_path, text).results
    for case, to in (("answered", "already answered"), ("unknown", "which no interrupt has")):
        c = look.cell(results, f"case={case}")
        assert look.verdict(c, "CO").status == "holds"
        ar = look.verdict(c, "AR")
        assert ar.status == "violated" and to in ar.reason and "accepted silently" in ar.reason and ar.evidence.trial_ids
    assert results.exit_code == 1


def test_approve_and_reject_from_one_saved_state_each_do_what_their_decision_says(tmp_path):
    # two states restored from the blob saved at the approval: approved, the gate fires; rejected, the run
    # ends without it. Declared a rejection but answered with an approval, the fork fires the gate: violated.
    text = _scenario(
        "fork",
        extra="matrix:\n  case:\n    - {name: reject, fork_value: reject, fork_fires: false, trials: 2}\n"
        '    - {name: not-a-reject, fork_value: "true#fork", fork_fires: false}\n',
    )
    results = run_text(tmp_path, text).results
    reject = look.cell(results, "case=reject")
    assert reject.valid_trials == 2
    fd = look.verdict(reject, "FD")
    assert fd.status == "holds" and "fired gate:True" in fd.reason and "fired no gate and ended done" in fd.reason
    wrong = look.verdict(look.cell(results, "case=not-a-reject"), "FD")
    assert wrong.status == "violated" and "still fired gate:true#fork" in wrong.reason and wrong.evidence.ledger_seqs


def test_a_race_on_the_session_writes_one_tool_call_four_outputs(tmp_path):
    # by hand: k=4 processes restoring one blob with one SQLiteSession leave 4 outputs for call_gate (3/3)
    text = _scenario(
        "race",
        extra="racers: {k: 4}\nmatrix:\n  case:\n    - {name: session, backend: sqlite_session}\n    - {name: file, backend: file}\n",
    )
    results = run_text(tmp_path, text).results
    lc = look.verdict(look.cell(results, "case=session"), "LC")
    assert lc.status == "violated" and "has 4 children" in lc.reason and lc.reason.count(":call_gate") >= 4
    # the blob alone is one document replaced whole: the last writer's history is linear
    assert look.verdict(look.cell(results, "case=file"), "LC").status == "holds"


def test_a_foreign_or_corrupt_blob_is_refused_loudly_or_judged(tmp_path):
    text = _scenario(
        "invalid_state",
        workload="tampered_gate",
        extra="matrix:\n  case:\n    - {name: foreign, workload_params: {tamper: foreign_agent}}\n"
        "    - {name: emptied, workload_params: {tamper: emptied_history}}\n",
    )
    results = run_text(tmp_path, text).results
    foreign = look.verdict(look.cell(results, "case=foreign"), "CV")
    assert foreign.status == "holds" and "agent not found in agent map" in foreign.reason
    # a blob whose history is gone restores silently: the approval would then fire the gate and never end
    emptied = look.verdict(look.cell(results, "case=emptied"), "CV")
    assert emptied.status == "violated" and "loaded silently" in emptied.reason


def _eo_by_point(c) -> dict[str, str]:
    return {p.point: next(v.status for v in p.verdicts if v.property == "EO") for p in c.points}


def test_a_teams_own_state_store_is_swept_like_the_built_in_file_store(tmp_path):
    # the team's store keeps every run's blob in one JSON file (tests/workloads/openai_agents_stores.py);
    # its saves are the same boundaries as the file store's, and a kill after the approved tool's
    # effect and before the save runs the tool again on resume, as there
    text = _scenario(
        "kill_sweep",
        extra="matrix:\n  case:\n    - {name: file}\n"
        "    - {name: team, workload_params: {store: 'tests.workloads.openai_agents_stores:json_file_store'}}\n",
    )
    outcome = run_text(tmp_path, text, keep_work=True)
    results = outcome.results
    file, team = look.cell(results, "case=file"), look.cell(results, "case=team")
    assert team.valid_trials == file.valid_trials > 0
    assert _eo_by_point(team) == _eo_by_point(file)
    assert look.point_verdict(team, "effect(task=gate)", "EO").status == "violated"
    assert look.point(team, "effect(task=gate)").duplicates == ["gate:True"]
    assert any(p.startswith("save_state(interruptions=1):before") for p in _eo_by_point(team))
    # the blobs were in the team's file (in each trial's folder, of the team's cell only)
    saved = list(tmp_path.rglob("state_store/runs.json"))
    assert saved and {p.parent.parent.name.split("-")[0] for p in saved} == {f"c{team.cell_index:03d}"}
    # the finding does not depend on the store: its script keeps the blob in a file, and reproduces
    from chaos.repro import write_repro

    gate = look.point_verdict(team, "effect(task=gate)", "EO")
    repro = write_repro(outcome.run_dir, gate.evidence.trial_ids[0], tmp_path / "repro")
    ran = subprocess.run([python_for("openai_agents"), str(repro.script)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout
    assert all('"awaiting"' in blob or '"ended"' in blob for path in saved for blob in json.loads(path.read_text()).values())


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("tests.workloads.no_such_module:store", "workload_params.store 'tests.workloads.no_such_module:store' does not import"),
        ("tests.workloads.openai_agents_stores:broken_store", "raised while building the state store: ConnectionError"),
        ("tests.workloads.openai_agents_stores:not_a_store", "returned dict, which has no save(key, blob) and load(key)"),
        ("json_file_store", "workload_params.store is 'json_file_store': name a package.module:factory"),
    ],
)
def test_a_team_store_that_does_not_build_is_refused_before_any_trial(tmp_path, ref, said):
    path = tmp_path / "bad.yaml"
    path.write_text(_scenario("kill_sweep", extra=f"workload_params: {{store: '{ref}'}}\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "runs")], capture_output=True, text=True
    )
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and said in lines[0], proc.stderr
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").rglob("journal.jsonl"))


def test_an_unreachable_blob_store_is_refused_before_any_trial(tmp_path):
    path = tmp_path / "pg.yaml"
    path.write_text(_scenario("kill_sweep", backend="postgres", workload="three_step").replace('"command:true"', "none"))
    env = {**os.environ, "CHAOS_PG_DSN": "postgresql://chaos:chaos@127.0.0.1:1/chaos"}
    proc = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "runs")], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 3
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "the postgres blob store cannot be reached" in lines[0]
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").rglob("journal.jsonl"))


def test_an_environment_without_the_sdk_is_told_how_to_build_it():
    # the orchestrator's own interpreter has no Agents SDK: the preflight says so in one line, exit 2 (the run: 3)
    spec = json.dumps({"target": {"framework": "openai_agents"}})
    proc = subprocess.run([sys.executable, "-m", "chaos.targets.openai_agents.preflight", spec], capture_output=True, text=True)
    if proc.returncode == 0:
        pytest.skip("this interpreter has the Agents SDK installed")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "bash .ci/envs.sh openai_agents" in proc.stderr

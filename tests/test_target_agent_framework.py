"""Microsoft Agent Framework workflows over FileCheckpointStorage, under real SIGKILLs.

What a user sees: a crash after an executor's effect and before the superstep's checkpoint is saved
runs that executor again when a fresh process restores the newest checkpoint (the approval's effect
too, when the crash follows the answer); a crash after the rename does not. Concurrent answers to one
pending request each fire the gated effect and fork the chain of ``previous_checkpoint_id``. An answer
sent again after the run completed is refused by the framework, and so is one addressed to a request id
no request has. A fork of the pause checkpoint with another answer takes it. A power loss keeps none
of FileCheckpointStorage's checkpoints (it never fsyncs). What the adapter cannot run says why, and bad
input is refused before any trial.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.robustkit import chaos
from kits.runs import run_text

HEAD = """
target: {framework: agent_framework, backend: file}
trials: 1
seed: 20261203
timeout_s: 60
"""


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("agent_framework")
    python_for("agent_framework", "1.12.1")  # the release before the entry checkpoint (upgrade)


def test_a_sweep_reaches_every_checkpoint_write_and_a_kill_after_the_answers_effect_fires_it_again(tmp_path):
    results = run_text(
        tmp_path,
        "name: af_sweep\nkind: kill_sweep\nworkload: gate_after_interrupt\nresume: 'command:yes'\n" + HEAD,
    ).results
    c = look.cell(results)
    points = {p.point.split("#")[0] for p in c.points}
    # every kind of checkpoint, each before its write, with its temporary file unrenamed, and after
    for what in (
        "entry=pre",
        "superstep=1,next=gate",
        "superstep=2,pending=gate",
        "responses=gate",
        "superstep=3,next=end",
        "superstep=4,idle",
    ):
        assert {f"save({what}):before", f"save({what}):tmp", f"save({what}):after"} <= points, what
    assert {"effect(task=pre):after", "effect(task=gate):after", "effect(task=end):after"} <= points
    # killed after gate's effect, before superstep 3's checkpoint: the restored response-entry
    # checkpoint delivers the answer again and the response handler fires again (the truth by hand: 2 of 2)
    assert look.point(c, "effect(task=gate)").duplicates == ["gate:yes"]
    # killed with the temporary file written but not renamed: the checkpoint is not there, the same as before it
    assert look.point(c, "save(superstep=3,next=end):tmp").duplicates == ["gate:yes"]
    # once renamed, superstep 3 is recorded: nothing runs twice
    assert look.point_verdict(c, "save(superstep=3,next=end):after", "EO").status == "holds"
    assert look.verdict(c, "EO").status == "violated"
    # the executor that ran again had not been recorded complete: PC holds, the run still ends
    assert look.verdict(c, "PC").status == "holds"
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert c.valid_trials == c.trials and c.errored_trials == 0
    assert results.exit_code == 1


def test_three_processes_answering_one_request_each_fire_it_and_fork_the_chain(tmp_path):
    results = run_text(
        tmp_path,
        "name: af_race\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:yes'\nracers: {k: 3}\n"
        + HEAD.replace("trials: 1", "trials: 3"),
    ).results
    c = look.cell(results)
    assert look.verdict(c, "CO").status == "violated"
    lc = look.verdict(c, "LC")
    assert lc.status == "violated" and "forked the thread's chain" in lc.reason
    assert look.verdict(c, "LIVENESS").status == "holds"


@pytest.mark.parametrize(
    ("workload", "resume_by", "co"),
    [
        ("gate_after_interrupt", "thread", "holds"),  # "No pending requests found in workflow context."
        ("gate_after_interrupt", "unknown_id", "holds"),  # "Response provided for unknown request ID"
        ("two_gates", "interrupt", "holds"),  # gate's request id again: not pending any more, refused
        ("two_gates", "thread", "violated"),  # the app answers "the pending request": gate2's
    ],
)
def test_an_answer_sent_again(tmp_path, workload, resume_by, co):
    results = run_text(
        tmp_path,
        f"name: af_stray\nkind: stray_resume\nworkload: {workload}\nresume: 'command:yes'\nresume_by: {resume_by}\n" + HEAD,
    ).results
    c = look.cell(results)
    assert look.verdict(c, "CO").status == co
    if resume_by == "unknown_id":
        assert look.verdict(c, "AR").status == "holds"


def test_a_fork_of_the_pause_checkpoint_takes_the_other_answer(tmp_path):
    results = run_text(
        tmp_path,
        "name: af_fork\nkind: fork\nworkload: gate_after_interrupt\nresume: 'command:yes'\nfork_via: checkpoint\n" + HEAD,
    ).results
    c = look.cell(results)
    assert look.verdict(c, "FD").status == "holds"
    assert "does not tell a retry from a fork" in look.verdict(c, "FI").reason


def test_a_power_loss_keeps_no_checkpoint_of_file_checkpoint_storage(tmp_path):
    results = run_text(
        tmp_path,
        "name: af_power\nkind: kill_sweep\nworkload: three_step\nresume: none\nfault: power_loss\n"
        'kill_points: ["effect(task=b)", "save(superstep=3,idle):after"]\n' + HEAD,
    ).results
    c = look.cell(results)
    du = look.verdict(c, "DU")
    assert du.status == "violated" and "unsynced write" in du.reason


def test_a_checkpoint_written_by_1_12_1_at_the_request_is_answered_by_1_23_0(tmp_path):
    """1.12.1 wrote no entry checkpoint and counted iterations from 0; 1.23.0 restores its pause
    checkpoint and the answer fires the gate once (by hand too: pre, gate:yes, end, once each)."""
    results = run_text(
        tmp_path,
        "name: af_up\nkind: upgrade\nworkload: gate_after_interrupt\nresume: 'command:yes'\n"
        "upgrade_to: {target: {version: '1.23.0'}}\n" + HEAD.replace("backend: file}", "backend: file, version: '1.12.1'}"),
    ).results
    c = look.cell(results)
    assert look.verdict(c, "UP").status == "holds"
    assert c.valid_trials == c.trials == 1


@pytest.mark.parametrize("kind", ["first_checkpoint", "invalid_state"])
def test_what_the_adapter_cannot_run_is_unknown_with_the_reason(tmp_path, kind):
    from chaos.targets import get_target

    reason = get_target("agent_framework").unsupported[kind]
    results = run_text(tmp_path, f"name: af_{kind}\nkind: {kind}\nworkload: gate_after_interrupt\nresume: 'command:yes'\n" + HEAD).results
    c = look.cell(results)
    assert c.verdicts and all(v.status == "unknown" for v in c.verdicts)
    assert any(reason[:40] in v.reason for v in c.verdicts)


BAD = """\
name: af_bad
kind: kill_sweep
target: {{framework: agent_framework, backend: file}}
workload: {workload}
workload_params: {params}
resume: "command:yes"
trials: 1
seed: 4
"""


@pytest.mark.parametrize(
    ("workload", "params", "said"),
    [
        ("tests.workloads.agent_framework_apps:does_not_build", "{}", "does not build its workflow: "),
        (
            "tests.workloads.agent_framework_apps:unlisted_type",
            "{}",
            "'tests.workloads.agent_framework_apps:Ticket', outside the storage's allow-list",
        ),
        (
            "tests.workloads.agent_framework_apps:gate",
            "{storage: 'tests.workloads.agent_framework_apps:unwritable_storage'}",
            "does not build a storage over",
        ),
        ("gate_after_interrupt", "{allowed_types: [Ticket]}", "use a list of 'module:qualname' strings"),
    ],
)
def test_bad_input_is_one_line_and_exit_3_before_any_trial(tmp_path, workload, params, said):
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(BAD.format(workload=workload, params=params))
    out = chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert said in console
    assert not (tmp_path / "out").exists()


def test_chaos_repro_writes_a_script_without_chaos_that_shows_the_duplicate(tmp_path):
    """A maintainer runs the script with agent-framework-core alone: REPRODUCED, exit 1."""
    import subprocess

    from chaos.envs import python_for
    from chaos.repro import write_repro

    out = run_text(
        tmp_path,
        "name: af_repro\nkind: kill_sweep\nworkload: gate_after_interrupt\nresume: 'command:yes'\n"
        'kill_points: ["effect(task=gate)"]\n' + HEAD,
    )
    c = look.cell(out.results)
    (trial,) = look.verdict(c, "EO").evidence.trial_ids
    repro = write_repro(out.run_dir, trial, tmp_path / "repro")
    assert "import chaos" not in repro.script.read_text() and "from chaos" not in repro.script.read_text()
    ran = subprocess.run([python_for("agent_framework"), str(repro.script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode == 1 and "REPRODUCED" in ran.stdout and "'gate:yes': 2" in ran.stdout, ran.stdout + ran.stderr


def test_the_frameworks_own_resume_sample_recomputes_only_the_superstep_in_flight(tmp_path):
    """Upstream's checkpoint_with_resume sample (a worker looping on itself, one number per superstep,
    its results in executor state), judged as its owner would: every resume continues the loop and no
    number recorded done is computed again (PC, LIVENESS hold; by hand, the resumed output equals the
    uninterrupted one at 6 of 6 kills). The number in flight at a kill is computed twice (EO), which the
    sample tolerates: its computation is pure."""
    results = run_text(
        tmp_path,
        "name: af_factor\nkind: kill_sweep\nworkload: tests.workloads.agent_framework_factor_pairs:factor_pairs\nresume: none\n"
        'kill_points: ["effect(task=worker):after#2", "save(superstep=3,next=worker):after"]\n' + HEAD,
    ).results
    c = look.cell(results)
    assert look.verdict(c, "PC").status == "holds"
    assert look.verdict(c, "LIVENESS").status == "holds"
    assert look.point(c, "effect(task=worker):after#2").duplicates == ["worker:2"]  # the loop's second pass, in flight
    assert look.point_verdict(c, "save(superstep=3,next=worker)", "EO").status == "holds"

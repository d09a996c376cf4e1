"""A LlamaIndex FunctionAgent whose tool waits with ``ctx.wait_for_event`` (LlamaIndex's own
human-in-the-loop tutorial, ported in ``tests.workloads.li_function_agent``): the refusal names what
LlamaIndex does, and the team's own driver is measured in races and strays.

By hand, without chaos (LlamaIndex's fake ``MockFunctionCallingLLM``): answered in its own process
the agent runs the task and finishes; saved at the pause with ``Context.to_dict`` (LlamaIndex warns
"Skipping serialization of known unserializable key: memory") and restored with ``from_dict``, the
answered run runs the task, then fails with ``ValueError: Path 'memory' not found in state``; with
the memory set again on the restored run's context it finishes; three processes restoring the same
save and answering fire the task three times (nothing gates a file save).

Before, the preflight said "did not accept the answer 'yes' ... fix the workload" (the app is
right), and a race or stray resume with the team's driver (``resume: app:``) was refused at load.
"""

from __future__ import annotations

from kits.robustkit import chaos
from kits.runs import run_text

REQ = 'requirements: ["llama-index-core==0.14.25"]'

SWEEP = f"""\
name: li_agent
kind: kill_sweep
target: {{framework: llamaindex, backend: file, {REQ}}}
workload: tests.workloads.li_function_agent:dangerous_agent
resume: "command:yes"
trials: 1
seed: 7
"""

RACE = f"""\
name: li_agent_race
kind: race
target: {{framework: llamaindex, backend: file, {REQ}}}
workload: tests.workloads.li_function_agent:dangerous_agent
resume: "app:tests.workloads.li_function_agent:recover"
answers: ["yes"]
racers: {{k: 3}}
trials: 2
seed: 7
"""


def test_the_refusal_names_llamaindex_dropping_the_agents_memory(tmp_path):
    scenario = tmp_path / "li_agent.yaml"
    scenario.write_text(SWEEP)
    out = chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")
    console = out.stdout + out.stderr
    assert out.returncode == 3, console
    assert "LlamaIndex dropped the state key 'memory' when the context was saved" in console
    assert "This is the framework's behaviour, not a wiring error" in console
    assert "resume: app:package.module:recover" in console
    assert "fix the workload" not in console
    assert not (tmp_path / "out").exists()


def test_the_teams_own_driver_races_every_racer_restoring_the_same_save(tmp_path):
    run = run_text(tmp_path, RACE)
    (cell,) = run.results.cells
    assert cell.valid_trials == 2
    assert cell.fires == {"3": 2}  # as by hand: each racer's restore of the file save runs the task
    verdicts = {v.property: v.status for v in cell.verdicts}
    assert verdicts["CO"] == "violated" and verdicts["LIVENESS"] == "holds"


def test_the_teams_own_driver_is_accepted_by_a_stray_resume(tmp_path):
    text = RACE.replace("kind: race", "kind: stray_resume").replace("racers: {k: 3}\n", "").replace("li_agent_race", "li_agent_stray")
    run = run_text(tmp_path, text)
    (cell,) = run.results.cells
    assert cell.valid_trials == 2
    # the first answer ran the agent to its end, saved as ended; the driver leaves an ended run alone,
    # so the stray answer is inert (as the driver's code says it must be)
    assert {v.property: v.status for v in cell.verdicts}["CO"] == "holds"

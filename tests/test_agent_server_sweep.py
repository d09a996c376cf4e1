"""The Agent Server SIGKILLed at the boundaries of its own worker, restarted, and the thread read back through the API.

``scenarios/agent_server.yaml``'s server-kill sweep, cut to three kill points: the racer is the
server (``chaos.targets.langgraph_server.inproc``), its checkpoint writes and effects are barriers,
and the whole server process is the victim. The recovery racer starts the server again on the same
``.langgraph_api/`` folder and asks for the thread. Measured on langgraph-api 0.16.7 with the
in-memory runtime: the thread is gone at every point (the runtime had not flushed): LS violated,
naming each lost thread id; the client re-creates it and runs the workflow again: effects fired
before the kill fire twice (EO violated), the rerun completes (LIVENESS holds), and no node the
server recorded complete ran again (PC holds: it recorded nothing that survived).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.running.journal import read_journal

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # the server started twice a kill point, six points: starts first without tests/durations.json
POINTS = ["effect(task=a)", "put(step=2,source=loop):after", "effect(task=c)"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("agent_server_sweep"), _only("server-kill-sweep", POINTS))


def _only(case: str, points: list[str]) -> str:
    """The shipped scenario with only its cell ``case``, cut to ``points``."""
    lines = (REPO / "scenarios" / "agent_server.yaml").read_text().splitlines()
    text = "\n".join(line for line in lines if not line.startswith("    - {name: ") or f"{{name: {case}," in line)
    return text + f"\nkill_points: {json.dumps(points)}\n"


def test_every_point_is_a_confirmed_kill_of_the_server_and_the_thread_is_gone_after_the_restart(sweep):
    records, torn = read_journal(sweep.run_dir / "journal.jsonl")
    assert not torn
    judged = [r for r in records if r.get("point")]
    assert len(judged) == len(POINTS) and all(r["valid"] for r in judged), [r.get("invalid_reason") for r in judged]
    lost = []
    for r in judged:
        victim = next(o for o in r["racers"] if o["role"] == "victim")
        assert victim["status"] == "killed" and victim["kill_confirmed"]
        resume = next(o for o in r["racers"] if o["role"] == "resume")
        before = resume["result"]["inspect_before"]
        assert before["thread_found"] is False and before["lost_thread"]
        (out,) = resume["result"]["outcomes"]
        assert out["lost_thread"] == before["lost_thread"] and out["status"] == "done"
        lost.append(before["lost_thread"])
    assert len(set(lost)) == len(POINTS)  # one server thread per trial, each named


# what a restarted server may import after its fork: the server itself and its runtime (they read their
# configuration from the environment at import, which run_server sets first, and pull in glob, pkgutil
# and a Cython helper), gRPC and its protos, and the graphs' module, which langgraph_api loads from its
# path; every other library came with the fork server
SERVERS_OWN = (
    "langgraph_api",
    "langgraph_runtime",
    "langgraph_license",
    "langgraph_grpc_common",
    "grpc",
    "google.protobuf",
    "chaos.targets.langgraph_server.app",
    "__",  # the graphs' module under its path's name
    "_cython_",
    "glob",
    "pkgutil",
)


def test_a_restarted_server_imports_only_the_server_itself_after_its_fork(sweep):
    """The recovery racer is the server: the libraries it serves with (uvicorn, starlette, LangSmith,
    OpenTelemetry, LangGraph, chaos's own side) are the fork server's, not imported (and compiled)
    again in every racer: 1,076 modules a racer before, most of a server-kill trial's CPU."""
    records, _ = read_journal(sweep.run_dir / "journal.jsonl")
    resumes = [o["result"] for r in records if r.get("point") for o in r["racers"] if o["role"] == "resume"]
    assert len(resumes) == len(POINTS)
    for result in resumes:
        assert [m for m in result["late_imports"] if not m.startswith(SERVERS_OWN)] == []
        assert "langgraph_api.server" in result["late_imports"]  # the server itself: each racer's own


def test_the_verdicts_of_the_server_kill(sweep):
    results = json.loads((sweep.run_dir / "results.json").read_text())
    (cell,) = results["cells"]
    status = {v["property"]: v["status"] for v in cell["verdicts"]}
    assert status == {"EO": "violated", "PC": "holds", "LIVENESS": "holds", "LS": "violated"}, cell["verdicts"]
    records, _ = read_journal(sweep.run_dir / "journal.jsonl")
    lost = {
        r["trial_id"]: next(o for o in r["racers"] if o["role"] == "resume")["result"]["inspect_before"]["lost_thread"]
        for r in records
        if r.get("point")
    }
    ls = next(v for v in cell["verdicts"] if v["property"] == "LS")
    assert sorted(ls["evidence"]["trial_ids"]) == sorted(lost)  # every trial's thread was lost ...
    for trial, thread in lost.items():  # ... and the verdict names each lost thread with its trial
        assert thread in ls["reason"] or f"lost {thread} ({trial})" in ls["evidence"]["note"]
    for p in cell["points"]:
        eo = next(v for v in p["verdicts"] if v["property"] == "EO")
        assert eo["status"] == "violated" and "duplicated 'a'" in (eo.get("reason") or eo.get("evidence") or "")
        ls_at = next(v for v in p["verdicts"] if v["property"] == "LS")
        assert ls_at["status"] == "violated" and lost[ls_at["evidence"]["trial_ids"][0]] in ls_at["reason"]


# before the pause was announced; the answer run in flight (the client was told of the pause and
# answered); the payment made
GATE_POINTS = ["put(step=0,source=loop):after", "put_writes(node=-,channels=__resume__):after", "effect(task=gate)"]


@pytest.fixture(scope="module")
def gate_sweep(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("agent_server_gate_sweep"), _only("server-kill-sweep-gate", GATE_POINTS))


def test_a_pause_the_client_was_told_of_is_judged_not_vacuous_when_the_server_loses_it(gate_sweep):
    """The rule "nothing durable: no human was asked" is false behind the server: the client had
    the pause from the API. Every point is judged: the retry re-creates the thread, is asked again,
    answers, and the payment made before the kill is made again."""
    results = json.loads((gate_sweep.run_dir / "results.json").read_text())
    (cell,) = results["cells"]
    assert not any(v["vacuous"] for v in cell["verdicts"]), cell["verdicts"]
    status = {v["property"]: v["status"] for v in cell["verdicts"]}
    assert status == {"EO": "violated", "PC": "holds", "LIVENESS": "holds", "LS": "violated"}, cell["verdicts"]
    by_point = {p["point"].split("#")[0]: p for p in cell["points"]}
    assert len(by_point) == len(GATE_POINTS)
    for p in by_point.values():
        assert all(not v["vacuous"] for v in p["verdicts"]) and p["resume_outcomes"] == ["done"], p
    assert by_point["put(step=0,source=loop):after"]["distribution"] == {"exactly once": 1}  # nothing had fired yet
    assert by_point["put_writes(node=-,channels=__resume__):after"]["distribution"] == {"duplicated pre": 1}
    assert by_point["effect(task=gate):after"]["duplicates"] == ["gate:True", "pre"]  # paid twice

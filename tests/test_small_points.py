"""Smaller breaks of issue 40 (point 8), each as a user meets it on the command line."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from kits.robustkit import chaos, chaos_bg, journal_lines, one_line, wait_for
from kits.runs import write_scenario

SWEEP = """\
name: latest_story
kind: kill_sweep
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: three_step
resume: none
trials: {trials}
seed: 3
"""


@pytest.mark.parametrize("value", [" 1 / 2 ", "１/２", "1/٢"])
def test_a_shard_is_ascii_digits_without_spaces(tmp_path, value):
    """`--shard ' 1 / 2 '` and fullwidth or Arabic-Indic digits were accepted: CI logs then show a
    shard no one typed. Refused, one line, exit 3, before any folder."""
    p = chaos(["run", "scenarios/consume_once_k4.yaml", "--shard", value, "--out", str(tmp_path / "out")], tmp_path / "state")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "--shard" in one_line(p.stderr) and "expected I/N" in p.stderr
    assert not (tmp_path / "out").exists()


def test_latest_is_the_newest_run_not_the_last_to_finish(tmp_path):
    """An older run resumed after a newer one finished: `latest` stays on the newer run."""
    state, out = tmp_path / "state", tmp_path / "out"
    old = write_scenario(tmp_path, SWEEP.format(trials=3), "old.yaml")
    proc = chaos_bg(["run", str(old), "--out", str(out), "-q"], state)
    try:
        journal = wait_for(lambda: next(out.glob("latest_story/2*/journal.jsonl"), None), 300, "the old run's journal")
        wait_for(lambda: journal_lines(journal) >= 1, 300, "a journaled trial")
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    old_dir = journal.parent
    new = write_scenario(tmp_path, SWEEP.format(trials=1), "new.yaml")
    p = chaos(["run", str(new), "--out", str(out), "-q"], state, timeout=600)
    assert p.returncode in (0, 1, 2), p.stdout + p.stderr
    latest = out / "latest_story" / "latest"
    new_dir = Path(os.path.realpath(latest))
    assert new_dir != old_dir.resolve()
    r = chaos(["run", "--resume", str(old_dir), "-q"], state, timeout=600)
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    assert Path(os.path.realpath(latest)) == new_dir


def test_a_guard_factory_that_exits_0_does_not_pass_the_preflight(tmp_path):
    """A guard factory that calls os._exit(0) passed the preflight (exit status 0 trusted), and every
    racer then errored. Refused before any trial, one line naming the scenario file, exit 3."""
    path = write_scenario(
        tmp_path,
        """\
        name: quiet_guard
        kind: race
        target: {framework: langgraph, backend: sqlite, durability: sync, guard: "tests.kits.guards:exits_quietly"}
        workload: gate_after_interrupt
        resume: "command:true"
        """,
    )
    p = chaos(["run", str(path), "--out", str(tmp_path / "out")], tmp_path / "state")
    assert p.returncode == 3, p.stdout + p.stderr
    line = one_line(p.stderr)
    assert str(path) in line and "exits_quietly" in line and "before its check finished" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("which", ["langgraph.json", ".env"])
@pytest.mark.parametrize("shape", ["huge", "fifo"])
def test_a_langgraph_json_or_its_env_file_is_capped_and_regular(tmp_path, which, shape):
    """langgraph.json and its .env were read whole (100 MB: 693 MB peak), and a FIFO there was
    "does not exist". Now: refused before reading, one line naming the file and what is wrong."""
    from chaos.targets.langgraph_server.config import ConfigError, load

    team = tmp_path / "team"
    team.mkdir()
    config = team / "langgraph.json"
    config.write_text('{"graphs": {"agent": "./agent.py:graph"}, "env": ".env"}')
    (team / ".env").write_text("REGION=eu\n")
    target = team / which
    target.unlink()
    if shape == "huge":
        with open(target, "wb") as f:
            f.truncate(100 << 20)  # sparse: nothing written to disk
    else:
        os.mkfifo(target)
    with pytest.raises(ConfigError) as err:
        load("team/langgraph.json#agent", [str(tmp_path)])
    msg = str(err.value)
    assert str(target) in msg and "\n" not in msg
    assert ("bytes" in msg) if shape == "huge" else ("not a regular file" in msg)


def test_a_dead_orchestrators_lock_that_lingers_is_not_a_live_run(tmp_path, monkeypatch):
    """Under load the kernel dropped a SIGKILLed orchestrator's registry lock over 0.5 s after it
    died, and `--resume` in that moment refused the run as live. An entry whose orchestrator (the pid
    it wrote) is dead is waited for, briefly, before the run is called alive."""
    import json
    import socket
    import subprocess
    import sys

    from chaos.running import registry

    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    entry = registry.entry_path("run-x")
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"run_id": "run-x", "pid": int(dead.stdout), "host": socket.gethostname()}))
    ready = tmp_path / "ready"
    holder = subprocess.Popen(  # holds the entry's lock a second after its "orchestrator" is gone
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX);"
            " open(sys.argv[2], 'w').close(); time.sleep(1)",
            str(entry),
            str(ready),
        ]
    )
    try:
        wait_for(ready.exists, 60, "the lock taken")
        assert registry.run_is_alive("run-x") is False
    finally:
        holder.kill()
        holder.wait()


def test_a_dbos_boundary_names_a_step_whose_name_looks_like_a_boundary_unambiguously():
    """Issue 40, point 8: DBOS's boundaries embed the app's step names, topics and keys; a step named
    ``pay),effect(task=b`` read as two boundaries (``step(name=pay),effect(task=b,n=3)``). Plain names
    keep their boundary names, so every shipped scenario's kill points are unchanged."""
    from chaos.targets.dbos.session import _topic, op_name

    assert op_name({"function_name": "pay", "function_id": 3}) == "step(name=pay,n=3)"
    assert op_name({"function_name": "app.charge_card", "function_id": 1}) == "step(name=app.charge_card,n=1)"
    assert op_name({"function_name": "DBOS.sleep", "function_id": 4}) == "sleep(n=4)"
    odd = op_name({"function_name": "pay),effect(task=b", "function_id": 3})
    assert odd.startswith("step(name=pay") and odd.endswith(",n=3)")
    assert odd.count("(") == 1 and odd.count(")") == 1 and odd.count("=") == 2  # one boundary, as built
    assert _topic("approve") == "approve" and _topic(None) == "none"
    assert "," not in _topic("a,b") and "=" not in _topic("k=v")

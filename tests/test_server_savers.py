"""A team whose LangGraph checkpoints live on a server (MySQL/MariaDB through
``langgraph-checkpoint-mysql``, a plain Redis without modules through
``langgraph-checkpoint-plainredis``) crash-tests that saver like an embedded one: the racers write to
the real server, the verdicts are the ones LangGraph's own savers get, and a server that does not
answer is refused in one line before any trial."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from kits.runs import run_text, write_scenario
from kits.servers import mysql_database, redis_prefix, savers_python  # noqa: F401  (fixtures)

SWEEP = """\
name: server_saver_sweep
kind: kill_sweep
target:
  framework: langgraph
  durability: sync
  saver: "chaos.savers:{saver}"
  requirements: ["langgraph-checkpoint-mysql[pymysql]==3.0.0", langgraph-checkpoint-plainredis==0.1.0]
workload: three_step
resume: none
trials: 1
seed: 12
"""

RACE = """\
name: server_saver_race
kind: race
target:
  framework: langgraph
  durability: sync
  saver: "chaos.savers:{saver}"
  requirements: ["langgraph-checkpoint-mysql[pymysql]==3.0.0", langgraph-checkpoint-plainredis==0.1.0]
workload: gate_after_interrupt
resume: "command:true"
trials: 2
seed: 12
matrix:
  k: [2]
"""

SERVER = {"mysql": "mysql_database", "plainredis": "redis_prefix"}
PACKAGE = {"mysql": "langgraph-checkpoint-mysql", "plainredis": "langgraph-checkpoint-plainredis"}
VERSION = {"mysql": "3.0.0", "plainredis": "0.1.0"}


@pytest.mark.parametrize("saver", sorted(SERVER))
def test_a_server_backed_saver_is_swept_on_the_real_server_with_langgraphs_verdicts(saver, request, tmp_path):
    space = request.getfixturevalue(SERVER[saver])
    run = run_text(tmp_path, SWEEP.format(saver=saver))
    (cell,) = run.results.cells
    assert cell.valid_trials == cell.trials > 10
    assert cell.versions.get(PACKAGE[saver]) == VERSION[saver]  # the saver's release is recorded
    assert all(p.reached == 1 for p in cell.points)  # every kill point fired: no vacuous point
    points = {p.point: {v.property: v.status for v in p.verdicts} for p in cell.points}
    # the effect of b fired, then the kill, then b ran again on resume: LangGraph's at-least-once
    assert points["effect(task=b):after#1"]["EO"] == "violated"
    assert next(v for p, v in points.items() if p.startswith("put_writes(node=b,") and p.endswith(":after#1"))["EO"] == "holds"
    assert {v.property: v.status for v in cell.verdicts}["PC"] == "holds"
    # the checkpoints are on the server, under this test's own database or prefix
    if saver == "mysql":
        assert space.checkpoints_of(f"{run.results.run_id}-") > 0  # thread ids are <run id>-<trial>
    else:
        assert space.keys() > 0


@pytest.mark.parametrize("saver", sorted(SERVER))
def test_two_racers_resuming_one_interrupt_share_the_server_without_a_racer_error(saver, request, tmp_path):
    request.getfixturevalue(SERVER[saver])
    run = run_text(tmp_path, RACE.format(saver=saver))
    (cell,) = run.results.cells
    # both racers open the saver (its setup serialised by a lock) and answer; who fires is open
    assert cell.valid_trials == cell.trials == 2
    assert cell.racer_errors == 0
    assert sum(int(n) * count for n, count in cell.fires.items()) >= 2  # each trial fired the gated effect


def _closed_port() -> socket.socket:
    """A loopback port bound but not listening: a connection to it is refused, every time."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.mark.parametrize(
    ("saver", "variable", "value", "expect"),
    [
        ("mysql", "CHAOS_MYSQL_DSN", "mysql://chaos:secret@127.0.0.1:{port}/chaos", "cannot connect to MySQL at 127.0.0.1:{port}"),
        ("plainredis", "CHAOS_REDIS_URL", "redis://127.0.0.1:{port}/0", "cannot connect to Redis at 127.0.0.1:{port}"),
        ("mysql", "CHAOS_MYSQL_DSN", "", "CHAOS_MYSQL_DSN is not set: start a server with scripts/mariadb.sh"),
        ("plainredis", "CHAOS_REDIS_URL", "", "CHAOS_REDIS_URL is not set: start a server with scripts/redis.sh"),
    ],
    ids=["mysql-refused", "redis-refused", "mysql-unset", "redis-unset"],
)
def test_a_server_that_does_not_answer_is_refused_in_one_line_before_any_trial(saver, variable, value, expect, tmp_path):
    savers_python()  # the check runs in the racers' Python
    with _closed_port() as sock:
        port = str(sock.getsockname()[1])
        env = {k: v for k, v in os.environ.items() if k != variable}
        if value:
            env[variable] = value.format(port=port)
        path = write_scenario(tmp_path, SWEEP.format(saver=saver))
        proc = subprocess.run(
            [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
    assert proc.returncode == 3, proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert str(path) in line and "target.saver" in line and expect.format(port=port) in line
    assert "secret" not in line  # the DSN's password is not repeated
    assert not (tmp_path / "out").exists()

"""Google ADK's MariaDB back end (``DatabaseSessionService`` over aiomysql) when the server misbehaves,
and what a run leaves on that server.

What an ADK user on MariaDB sees:

* ``fault: db_disconnect``: the racer's own connections are killed (``KILL CONNECTION``) while it
  stands at a session-service write, and only those: MariaDB has no ``application_name``, so the
  racer writes the id of each connection it opens and chaos kills exactly those still connected to
  the run's database. ADK sets ``pool_pre_ping`` on server back ends, so (as a by-hand kill at every
  boundary of three_step showed: the invocation finished each time, every event durable, each tool
  once) the pool reconnects: CL holds, *reconnected*, with valid trials.
* A MariaDB outage mid-run (the server refuses every connection for a while) is the environment's
  fault, as a lost Postgres is: the trials it spoils are repeated, never filed as app errors.
* ``--keep-work`` keeps the run's database ``chaos_adk_<hash>`` and writes it down: ``chaos clean``
  names it, ``chaos clean --kept`` drops it. An orchestrator SIGKILLed mid-run leaves its
  database behind, and ``chaos clean`` drops it and says so.

Every database these tests touch is one a test's own run made (``chaos_adk_<hash of its run id>``),
dropped at the end if the run did not drop it: the shared server's other databases are never touched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from kits import framework_support as look
from kits.robustkit import chaos, chaos_bg, journal_lines, wait_for
from kits.runs import run_text, write_scenario

from chaos.running.blame import blame_error
from chaos.running.outage import Relay
from chaos.targets.adk.mariadb import database_name

pytestmark = pytest.mark.skipif(not os.environ.get("CHAOS_MYSQL_DSN"), reason="needs CHAOS_MYSQL_DSN (bash scripts/mariadb.sh | tail -1)")

# run in ADK's Python: argv = "list" | "drop NAME"; the server of CHAOS_MYSQL_DSN
SERVER = """
import os, sys
from urllib.parse import unquote, urlsplit
import pymysql
u = urlsplit(os.environ["CHAOS_MYSQL_DSN"])
conn = pymysql.connect(host=u.hostname, port=u.port or 3306, user=unquote(u.username), password=unquote(u.password or ""), autocommit=True)
cur = conn.cursor()
if sys.argv[1] == "drop":
    cur.execute(f"DROP DATABASE IF EXISTS `{sys.argv[2]}`")
else:
    cur.execute("SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'chaos_adk_%'")
    print(" ".join(r[0] for r in cur.fetchall()))
"""


def _adk_python() -> str:
    from chaos.envs import python_for

    return python_for("adk")


def _server(*args: str, dsn: str | None = None) -> str:
    env = {**os.environ, "CHAOS_MYSQL_DSN": dsn or os.environ["CHAOS_MYSQL_DSN"]}
    return subprocess.run([_adk_python(), "-c", SERVER, *args], capture_output=True, text=True, timeout=60, check=True, env=env).stdout


def databases() -> set[str]:
    return set(_server("list").split())


@pytest.fixture
def run_databases():
    """The run ids a test's runs had (append to the list): their databases are dropped at the end, if left."""
    ids: list[str] = []
    yield ids
    for run_id in ids:
        _server("drop", database_name(run_id))


def _run_id(run_dir: Path) -> str:
    return json.loads((run_dir / "run.json").read_text())["run_id"]


def test_a_killed_mariadb_connection_is_survived_adk_reconnects_and_every_trial_is_valid(tmp_path, run_databases):
    outcome = run_text(
        tmp_path,
        """
name: adk_mariadb_disconnect
kind: kill_sweep
target: {framework: adk, backend: mariadb}
workload: three_step
resume: none
fault: db_disconnect
kill_points: ["append(author=agent,kind=call:b)", "effect(task=b)", "append(author=agent,kind=response:b)"]
trials: 1
seed: 11
timeout_s: 120
""",
    )
    results = outcome.results
    run_databases.append(results.run_id)
    c = look.cell(results)
    recs = [json.loads(x) for x in (outcome.run_dir / "journal.jsonl").read_text().splitlines()]
    points = [r for r in recs if r.get("point")]
    assert len(points) == 5 and all(r["valid"] for r in points), [(r["point"], r["invalid_reason"]) for r in points]
    for r in points:  # exactly the victim's connections were found, and every one of them ended
        cut = r["observations"]["fault"]
        assert cut["pids"] and cut["terminated"] == cut["pids"], (r["point"], cut)
        d = r["observations"]["disconnected"]
        assert d["status"] == "done" and not d["error"], (r["point"], d)  # it went on and finished: reconnected
    cl = look.verdict(c, "CL")
    assert cl.status == "holds" and "at all 5 kill points" in cl.reason, cl.reason
    assert look.verdict(c, "EO").status == "holds"
    assert database_name(results.run_id) not in databases()  # dropped at the run's cleanup


def _error_in_adk(dsn: str) -> dict:
    """chaos's description (``error_of``) of what ADK raises opening a session on ``dsn``."""
    code = """
import asyncio, json, sys
from google.adk.sessions.database_session_service import DatabaseSessionService
from chaos.targets.base import error_of
async def main():
    svc = DatabaseSessionService("mysql+aiomysql://" + sys.argv[1].split("://", 1)[1])
    await svc.create_session(app_name="a", user_id="u", session_id="s")
try:
    asyncio.run(main())
except Exception as exc:
    print(json.dumps(error_of(exc)))
"""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [_adk_python(), "-c", code, dsn], capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(root)}
    )
    return json.loads(out.stdout)


def test_a_mariadb_server_that_refuses_is_an_environment_fault_and_a_missing_database_is_not():
    relay = Relay(("127.0.0.1", 3306))
    try:
        relay.down()
        refused = _error_in_adk(f"mysql://chaos:chaos@127.0.0.1:{relay.port}/chaos")
    finally:
        relay.close()
    b = blame_error(refused, "adk")
    assert b.party == "environment" and "MySQL/MariaDB server connection lost" in b.reason, b.reason
    # a server that answers and refuses the request (here: no such database) is no outage
    missing = _error_in_adk(os.environ["CHAOS_MYSQL_DSN"].rsplit("/", 1)[0] + "/chaos_t_no_such_database")
    assert blame_error(missing, "adk").party != "environment", missing.get("message")


SWEEP = """\
name: adk_mariadb_outage
kind: kill_sweep
target: {framework: adk, backend: mariadb}
workload: three_step
resume: none
kill_points: ["effect(task="]
trials: 3
seed: 4
timeout_s: 60
"""


def test_a_mariadb_outage_mid_run_is_the_environment_s_fault_never_an_app_error(tmp_path, run_databases):
    server = os.environ["CHAOS_MYSQL_DSN"]
    up = server.rsplit("@", 1)[1].split("/", 1)[0]
    relay = Relay((up.split(":")[0], int(up.split(":")[1]) if ":" in up else 3306))
    auth = server.split("://", 1)[1].rsplit("@", 1)[0]
    dsn = f"mysql://{auth}@127.0.0.1:{relay.port}/{server.rsplit('/', 1)[1]}"
    out, state = tmp_path / "out", tmp_path / "state"
    proc = chaos_bg(["run", str(write_scenario(tmp_path, SWEEP)), "--out", str(out), "-q"], state, env={"CHAOS_MYSQL_DSN": dsn})
    try:
        journal = wait_for(lambda: next(out.glob("adk_mariadb_outage/2*/journal.jsonl"), None), 300, "the run's journal")
        run_databases.append(_run_id(journal.parent))
        wait_for(lambda: journal_lines(journal) >= 3, 300, "the dry run and two trials journaled")
        relay.down()  # the server goes away: every connection cut, every new one refused
        seen = journal_lines(journal)
        wait_for(lambda: journal_lines(journal) >= seen + 2, 300, "two trials journaled during the outage")
        relay.up()
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        relay.close()
    recs = [json.loads(x) for x in journal.read_text().splitlines()]
    env = [r for r in recs if r["fault"] == "environment"]
    assert env, "no trial met the outage"
    assert all("MySQL/MariaDB server connection lost" in (r["invalid_reason"] or "") for r in env), [r["invalid_reason"] for r in env]
    assert not [r for r in recs if r["fault"] == "app"], [r["invalid_reason"] for r in recs if r["fault"] == "app"]
    assert proc.returncode in (0, 1, 2), stdout + stderr


ONE_POINT = """\
name: adk_mariadb_keep
kind: kill_sweep
target: {framework: adk, backend: mariadb}
workload: three_step
resume: none
kill_points: ["effect(task=b)"]
trials: 1
seed: 2
timeout_s: 120
"""


def test_keep_work_keeps_the_run_s_mariadb_database_writes_it_down_and_clean_kept_drops_it(tmp_path, run_databases):
    out, state = tmp_path / "out", tmp_path / "state"
    ran = chaos(["run", str(write_scenario(tmp_path, ONE_POINT)), "--out", str(out), "--keep-work", "-q"], state, timeout=600)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    run_id = _run_id(next(out.glob("adk_mariadb_keep/2*")))
    run_databases.append(run_id)
    name = database_name(run_id)
    assert name in databases()  # kept, as asked
    kept = state / "kept" / f"{run_id}.json"
    assert json.loads(kept.read_text())["kept_stores"] == [f"MariaDB database {name}"]

    # plain `chaos clean` names it and leaves it: it was kept on purpose
    named = chaos(["clean"], state)
    said = " ".join(named.stdout.split())
    assert named.returncode == 0 and f"kept by --keep-work: MariaDB database {name} of run {run_id}" in said, said
    assert "chaos clean --kept" in said, said
    assert name in databases() and kept.exists()

    dropped = chaos(["clean", "--kept"], state)
    assert dropped.returncode == 0, dropped.stderr
    assert f"MariaDB database {name}" in " ".join(dropped.stdout.split()), dropped.stdout
    assert name not in databases() and not kept.exists()
    again = chaos(["clean"], state)
    assert again.returncode == 0 and name not in again.stdout, again.stdout


def test_clean_after_a_sigkilled_orchestrator_drops_its_mariadb_database_and_says_so(tmp_path, run_databases):
    out, state = tmp_path / "out", tmp_path / "state"
    orch = chaos_bg(["run", str(write_scenario(tmp_path, SWEEP)), "--out", str(out), "-q"], state)
    try:
        journal = wait_for(lambda: next(out.glob("adk_mariadb_outage/2*/journal.jsonl"), None), 300, "the run's journal")
        run_id = _run_id(journal.parent)
        run_databases.append(run_id)
        wait_for(lambda: journal_lines(journal) >= 2, 300, "a trial journaled")
        assert database_name(run_id) in databases()
        orch.send_signal(signal.SIGKILL)
        orch.wait(timeout=30)
    finally:
        if orch.poll() is None:
            orch.kill()
            orch.wait()
    cleaned = chaos(["clean"], state)
    said = " ".join(cleaned.stdout.split())
    assert cleaned.returncode == 0 and f"run {run_id}: removed" in said and f"MariaDB database {database_name(run_id)}" in said, said
    assert database_name(run_id) not in databases()

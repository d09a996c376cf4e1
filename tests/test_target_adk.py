"""Google ADK (2.13.0) under real SIGKILLs and races, its session service on SQLite and on Postgres.

What an ADK user sees, as its "Resume stopped agents" page warns it: a tool killed after its effect
and before its response event was appended runs again when the invocation is resumed (EO violated at
exactly that point, with the ledger rows); a tool whose response event is committed never runs again
(PC holds). Four processes answering the one pending ``adk_request_confirmation`` at once: on
Postgres, ADK's ``SELECT ... FOR UPDATE`` stale check refuses the losers before their effect (CO
holds); on ``DatabaseSessionService`` over a SQLite file, the check is a read before the write, and
losers can fire the confirmed tool and then get ``StaleSessionError`` (CO violated: a duplicate
the caller was told had failed). On MariaDB (aiomysql) the check is under ``SELECT ... FOR UPDATE`` as
on Postgres. A crash before the invocation's user event is durable leaves nothing ADK's resume can
find (FCL violated); the same crash recovered twice decides the same way (RD holds).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from kits import framework_support as look
from kits.appruns import case_cell
from kits.runs import run_text

from chaos.targets import get_target
from chaos.targets.adk.mariadb import database_name


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("adk")


def test_the_light_half_names_every_kind_it_cannot_run_with_its_reason():
    info = get_target("adk")
    assert info.module == "chaos.targets.adk.session"
    for kind in ("fork", "invalid_state"):
        assert info.supports(kind), kind  # a reason, not None
    for kind in ("first_checkpoint", "recovery_determinism", "AA"):
        assert info.supports(kind) is None, kind
    assert "rewind" in info.unsupported["fork"]


def test_a_confirmed_tool_killed_before_its_response_is_appended_runs_again_on_resume(tmp_path):
    outcome = run_text(
        tmp_path,
        """
name: adk_sweep
kind: kill_sweep
target: {framework: adk, backend: sqlite}
workload: gate_after_interrupt
resume: "command:yes"
trials: 1
seed: 7
timeout_s: 120
kill_points: ["effect(task=gate)", "append(author=agent,kind=response:gate)"]
""",
    )
    results = outcome.results
    c = look.cell(results)
    eo = look.verdict(c, "EO")
    assert eo.status == "violated"
    assert "effect(task=gate):after#1" in eo.evidence.points and eo.evidence.ledger_seqs
    assert look.point(c, "effect(task=gate)").duplicates == ["gate:yes"]
    assert look.verdict(c, "PC").status == "holds"
    # the resumed tool ran again only after the approval the victim had given: no approval walked past
    assert look.verdict(c, "AA").status == "holds"
    assert results.exit_code == 1
    # the finding to file upstream: a standalone script, no chaos in it, that shows it again
    import subprocess

    from chaos.envs import python_for
    from chaos.repro import write_repro

    trial = look.point_verdict(c, "effect(task=gate)", "EO").evidence.trial_ids[0]
    repro = write_repro(outcome.run_dir, trial, tmp_path / "repro")
    assert "import chaos" not in repro.script.read_text() and "from chaos" not in repro.script.read_text()
    shown = subprocess.run([python_for("adk"), str(repro.script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert shown.returncode == 1 and "REPRODUCED: gate:yes fired more than once" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN (scripts/postgres.sh)")
def test_four_answers_to_one_confirmation_on_postgres_fire_the_tool_once(tmp_path):
    results = run_text(
        tmp_path,
        """
name: adk_race_pg
kind: race
target: {framework: adk, backend: postgres}
workload: gate_after_interrupt
resume: "command:yes"
racers: {k: 4}
trials: 3
seed: 9
timeout_s: 120
""",
    ).results
    c = look.cell(results)
    assert look.verdict(c, "CO").status == "holds"


def test_a_second_confirmation_after_the_invocation_completed_fires_nothing_with_or_without_its_id(tmp_path):
    results = run_text(
        tmp_path,
        """
name: adk_stray
kind: stray_resume
target: {framework: adk, backend: sqlite}
workload: gate_after_interrupt
resume: "command:yes"
trials: 1
seed: 11
timeout_s: 120
matrix:
  workload_params: [{}, {invocation_id: omit}]
""",
    ).results
    for c in results.cells:
        assert look.verdict(c, "CO").status == "holds", c.axes


def test_an_invocation_paused_under_2_12_is_confirmed_under_2_13_as_2_13_alone_would_run_it(tmp_path):
    results = run_text(
        tmp_path,
        """
name: adk_upgrade
kind: upgrade
target: {framework: adk, backend: sqlite, version: "2.12.0"}
workload: gate_after_interrupt
resume: "command:yes"
trials: 1
seed: 5
timeout_s: 120
upgrade_to: {target: {version: "2.13.0"}}
""",
    ).results
    up = look.verdict(look.cell(results), "UP")
    assert up.status == "holds" and "2.12.0" in up.reason and "2.13.0" in up.reason, up.reason


# what a run can leave on the MariaDB server: the ADK run databases, and the rows of ADK's tables in
# the DSN's own database (where the sessions went before each run had a database of its own)
MARIADB_LEFT = """
import json, os
from urllib.parse import unquote, urlsplit
import pymysql
u = urlsplit(os.environ["CHAOS_MYSQL_DSN"])
conn = pymysql.connect(host=u.hostname, port=u.port or 3306, user=unquote(u.username), password=unquote(u.password or ""))
cur = conn.cursor()
cur.execute("SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'chaos_adk_%'")
left = {"databases": sorted(r[0] for r in cur.fetchall()), "rows": {}}
db = u.path.lstrip("/")
cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (db,))
for (table,) in cur.fetchall():
    if table in ("sessions", "events", "app_states", "user_states", "adk_internal_metadata"):
        cur.execute(f"SELECT COUNT(*) FROM `{db}`.`{table}`")
        left["rows"][table] = cur.fetchone()[0]
print(json.dumps(left))
"""


def mariadb_left() -> dict:
    from chaos.envs import python_for

    out = subprocess.run([python_for("adk"), "-c", MARIADB_LEFT], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(not os.environ.get("CHAOS_MYSQL_DSN"), reason="needs CHAOS_MYSQL_DSN (bash scripts/mariadb.sh | tail -1)")
def test_four_answers_to_one_confirmation_on_mariadb_fire_the_tool_once_and_the_run_leaves_nothing_there(tmp_path):
    before = mariadb_left()
    results = run_text(
        tmp_path,
        """
name: adk_race_mariadb
kind: race
target: {framework: adk, backend: mariadb}
workload: gate_after_interrupt
resume: "command:yes"
racers: {k: 4}
trials: 2
seed: 9
timeout_s: 120
""",
    ).results
    c = look.cell(results)
    assert look.verdict(c, "CO").status == "holds"
    # the sessions the racers raced on were in the run's own database, dropped at its cleanup
    after = mariadb_left()
    assert database_name(results.run_id) not in after["databases"]
    assert after["rows"] == before["rows"], "ADK's sessions were written to the DSN's shared database"


def test_a_crash_before_the_user_event_is_durable_loses_the_invocation_and_recoveries_repeat_themselves(tmp_path):
    results = run_text(
        tmp_path,
        """
name: adk_first_and_recovery
kind: first_checkpoint
target: {framework: adk, backend: sqlite}
workload: three_step
resume: none
trials: 1
seed: 13
timeout_s: 120
matrix:
  case:
    - {name: first, kind: first_checkpoint, workload: three_step, resume: none, kill_points: ["append(author=user,kind=text)"]}
    - {name: recovery, kind: recovery_determinism, workload: gate_after_interrupt, resume: "command:yes", trials: 2,
       kill_points: ["effect(task=gate)"]}
""",
    ).results
    first, recovery = case_cell(results, "first"), case_cell(results, "recovery")
    fcl = look.verdict(first, "FCL")
    assert fcl.status == "violated" and "append(author=user,kind=text):before#1" in fcl.evidence.points, fcl.reason
    assert look.verdict(recovery, "RD").status == "holds"

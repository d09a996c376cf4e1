"""The Postgres ledger and the LangGraph postgres backend, against a real server."""

from __future__ import annotations

import secrets

import psycopg
import pytest
from kits.racekit import new_run_id, race_scenario, run_races

from chaos.launchers import make_launcher
from chaos.racer.ledger import COLUMNS, open_ledger
from chaos.racer.redact import redact_config, redact_dsn, redact_text
from chaos.running import pgstore


def test_redact_dsn_hides_passwords():
    assert redact_dsn("postgresql://chaos:s3cr:et@db.example:5432/chaos") == "postgresql://chaos:***@db.example:5432/chaos"
    assert redact_dsn("postgresql://chaos@h/db?password=x&sslmode=require") == "postgresql://chaos@h/db?password=***&sslmode=require"
    assert redact_dsn("host=h user=u password='a b' dbname=d") == "host=h user=u password=*** dbname=d"
    assert redact_dsn("postgresql://h/db") == "postgresql://h/db"
    assert "pw" not in redact_text("connect to postgres://u:pw@h/db failed; password=pw")
    assert redact_config({"ledger": {"kind": "postgres", "dsn": "postgresql://u:pw@h/d"}}) == {
        "ledger": {"kind": "postgres", "dsn": "postgresql://u:***@h/d"}
    }


def test_pg_ledger_append_and_rows(pg_dsn):
    table = f"chaos_effects_t{secrets.token_hex(3)}"
    cfg = {"kind": "postgres", "dsn": pg_dsn, "table": table}
    a = open_ledger(cfg, {"run_id": "R", "cell_id": "c", "trial_id": "t1", "racer_id": "r0", "host": "hostA"})
    b = open_ledger(cfg, {"run_id": "R", "cell_id": "c", "trial_id": "t2", "racer_id": "r1", "host": "hostB"})
    try:
        s1 = a.append(task="gate", value="True", thread_id="th1")
        s2 = b.append(task="gate", value="False", thread_id="th2")
        s3 = a.append(task="pre", value=None, thread_id="th1")
        assert s1 < s2 < s3
        rows = b.rows(run_id="R")  # committed per append: visible to another connection at once
        assert [r["seq"] for r in rows] == [s1, s2, s3]
        assert set(rows[0]) == set(COLUMNS)
        assert rows[0]["effect_key"] == "gate:True" and rows[2]["effect_key"] == "pre"
        assert {r["host"] for r in rows} == {"hostA", "hostB"}
        assert [r["seq"] for r in a.rows(run_id="R", trial_id="t2")] == [s2]
        assert a.rows(run_id="other") == []
    finally:
        a._conn.execute(f'DROP TABLE "{table}"')
        a.close()
        b.close()


def test_pg_ledger_bad_password_names_server_without_password(pg_dsn):
    bad = pg_dsn.replace("chaos:chaos@", "chaos:wrong-secret@")
    with pytest.raises(ConnectionError) as ei:
        open_ledger({"kind": "postgres", "dsn": bad})
    msg = str(ei.value)
    assert "wrong-secret" not in msg and "***" in msg and "\n" not in msg


def test_langgraph_race_on_postgres_backend(pg_dsn, tmp_path):
    """k=3 local racers resume one interrupt on the postgres saver, in the run's own schema."""
    run_id = new_run_id()
    schema = pgstore.create_run_schema(pg_dsn, run_id)
    launcher = make_launcher("local", None, run_id)
    try:
        recs = run_races(
            race_scenario(k=3, trials=1, backend="postgres"),
            launcher,
            tmp_path,
            run_id=run_id,
            ledger_config={"kind": "postgres", "dsn": pg_dsn, "table": "chaos_effects"},
            store_for=pgstore.store_for(pg_dsn, run_id),
        )
    finally:
        launcher.reap()
    (rec,) = recs
    assert rec.valid, rec.invalid_reason
    assert 1 <= rec.observations["fires"] <= 3
    assert all(r.status == "ok" for r in rec.racers)
    with psycopg.connect(pg_dsn) as conn:  # the checkpoints really are in the run's schema
        n = conn.execute(f'SELECT count(*) FROM "{schema}".checkpoints WHERE thread_id = %s', (rec.thread_id,)).fetchone()[0]
    assert n >= 2
    pgstore.drop_run_schema(pg_dsn, run_id)
    assert schema not in pgstore.list_run_schemas(pg_dsn)


def test_orchestrated_postgres_run_uses_and_drops_its_schema(pg_dsn, tmp_path, monkeypatch):
    from kits.runs import run_text

    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    outcome = run_text(
        tmp_path,
        """
        name: pg_probe
        kind: race
        target: {framework: langgraph, backend: postgres}
        workload: gate_after_interrupt
        resume: "command:true"
        racers: {k: 2, placement: local}
        trials: 1
        seed: 5
        """,
    )
    meta = __import__("json").loads((outcome.run_dir / "run.json").read_text())
    schema = meta["storage"]["postgres_schema"]
    assert schema.startswith("chaos_run_")
    # dropped at the end (its own schema: other runs on the server make and drop theirs meanwhile)
    assert schema not in pgstore.list_run_schemas(pg_dsn)


def test_postgres_scenario_without_a_dsn_is_a_clear_error(tmp_path, monkeypatch):
    from kits.runs import run_text

    from chaos.racer.errors import EnvironmentProblem

    monkeypatch.delenv("CHAOS_PG_DSN", raising=False)
    with pytest.raises(EnvironmentProblem, match="needs Postgres for the postgres backend: set CHAOS_PG_DSN"):
        run_text(
            tmp_path,
            """
            name: pg_probe
            kind: race
            target: {framework: langgraph, backend: postgres}
            workload: gate_after_interrupt
            resume: "command:true"
            trials: 1
            """,
        )
    assert not (tmp_path / "reports").exists()  # refused before any folder is written


def test_clean_infra_drops_a_crashed_runs_schema(pg_dsn):
    from chaos.running.cleanup import clean_infra

    run_id = new_run_id()
    schema = pgstore.create_run_schema(pg_dsn, run_id, frameworks=())  # as left by a SIGKILLed run
    assert schema in pgstore.list_run_schemas(pg_dsn)
    done = clean_infra(run_id, dsn=pg_dsn)
    assert done["schemas_dropped"] == [schema]
    assert schema not in pgstore.list_run_schemas(pg_dsn)

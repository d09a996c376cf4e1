"""Two runs on one Postgres never touch each other's data, whatever their scenario's name.

A run's schema was ``chaos_run_<run id>`` cut at 63 bytes: every run of a scenario named with 53
characters or more got the same schema, and the first to end dropped it under the others. DBOS
trial schemas (``<run schema>_<10 hex>``) were dropped by ``LIKE`` on a cut prefix: one run's end
dropped another live run's. These stories run from the outside, as a user would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from chaos.running import pgstore

REPO = Path(__file__).resolve().parents[1]
LONG = "checkout_" + "x" * 85 + "_flow"  # 99 characters: the scenario's name, at the limit
assert len(LONG) >= 53 + 40


def _scenario(tmp_path: Path, name: str, trials: int) -> Path:
    path = tmp_path / f"{name[:10]}-{trials}.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            name: {name}
            kind: race
            target: {{framework: langgraph, backend: postgres}}
            workload: gate_after_interrupt
            resume: "command:true"
            racers: {{k: 2, placement: local}}
            trials: {trials}
            seed: 5
            """
        )
    )
    return path


def _chaos(args: list[str], dsn: str, out: Path) -> subprocess.Popen:
    env = {**os.environ, "CHAOS_PG_DSN": dsn, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "chaos", "run", *args, "--out", str(out)],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _folder(out: Path) -> Path:
    """The one run folder under ``out`` (not its ``latest`` link)."""
    (run_dir,) = [p for p in out.glob("*/*") if not p.is_symlink()]
    return run_dir


def _journaled(out: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in out.glob("*/*/journal.jsonl") if not p.parent.is_symlink())


def test_two_live_runs_of_one_long_scenario_name_keep_their_own_schemas(pg_dsn, tmp_path):
    """A long run is live when a short run of the same (100-character) scenario starts and ends:
    the short run drops its own schema only, and the long run's trials after that stay valid.
    The long run has more trials than it can finish meanwhile; it is stopped (SIGTERM) once two
    more of its trials are journaled after the short run ended."""
    long_out, short_out = tmp_path / "long", tmp_path / "short"
    long_run = _chaos([str(_scenario(tmp_path, LONG, 500))], pg_dsn, long_out)
    try:
        deadline = time.monotonic() + 300
        while _journaled(long_out) < 1:  # the long run has a trial behind it: its schema is in use
            assert long_run.poll() is None, long_run.communicate()[0]
            assert time.monotonic() < deadline, "the long run journaled no trial in 300 s"
            time.sleep(0.2)  # polling a file another process writes (no event to wait on)
        short = subprocess.run(
            [sys.executable, "-m", "chaos", "run", str(_scenario(tmp_path, LONG, 1)), "--out", str(short_out)],
            env={**os.environ, "CHAOS_PG_DSN": pg_dsn, "PYTHONPATH": str(REPO)},
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert short.returncode in (0, 1), short.stdout + short.stderr  # 1: the race's violations, measured
        after = _journaled(long_out)
        deadline = time.monotonic() + 300
        while _journaled(long_out) < after + 2:  # trials the long run ran after the short one ended
            assert long_run.poll() is None, long_run.communicate()[0]
            assert time.monotonic() < deadline, "the long run journaled no more trials in 300 s"
            time.sleep(0.2)
        long_run.send_signal(signal.SIGTERM)
        long_text, _ = long_run.communicate(timeout=300)
    finally:
        if long_run.poll() is None:
            long_run.kill()
            long_run.wait()
    assert long_run.returncode == 3, long_text  # interrupted, as asked
    meta_long = json.loads((_folder(long_out) / "run.json").read_text())
    meta_short = json.loads((_folder(short_out) / "run.json").read_text())
    lines = [json.loads(x) for x in (_folder(long_out) / "journal.jsonl").read_text().splitlines()]
    assert len(lines) >= after + 2 and all(rec["valid"] for rec in lines), [rec["invalid_reason"] for rec in lines]
    schema_long = meta_long["storage"]["postgres_schema"]
    schema_short = meta_short["storage"]["postgres_schema"]
    assert schema_long != schema_short
    assert len(schema_long.encode()) <= 63 and len(schema_short.encode()) <= 63
    assert schema_long not in pgstore.list_run_schemas(pg_dsn) and schema_short not in pgstore.list_run_schemas(pg_dsn)


def test_schema_names_of_distinct_runs_differ_and_leave_room_for_trial_schemas():
    """Run ids that differ only past the cut, or only by case or punctuation, get distinct names,
    each short enough that a trial schema ``<name>_<10 hex>`` holds it whole."""
    ids = [f"{LONG}-20261203-091500-{t}" for t in ("a1b2c3", "a1b2c4")] + ["Run-A", "run-a", "run_a", "run.a"]
    names = [pgstore.schema_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all(len(n.encode()) + 11 <= 63 and n.startswith("chaos_run_") for n in names)
    assert pgstore.schema_name(ids[0]) == names[0]  # stable: a resume finds its run's schema


def test_one_runs_end_drops_only_its_own_trial_schemas(pg_dsn):
    """Two live DBOS runs of one long scenario name, each with trial schemas under its run schema:
    the first run's end (and `chaos clean` of it) drops its schemas and none of the other's."""
    import psycopg
    from psycopg import sql

    first_id, second_id = f"{LONG}-20261203-091500-aaaaaa", f"{LONG}-20261203-091500-bbbbbb"
    first, second = pgstore.schema_name(first_id), pgstore.schema_name(second_id)
    made = [first, f"{first}_0123456789", second, f"{second}_0123456789", f"{second}_abcdef0123"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for n in made:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(n)))
    try:
        pgstore.drop_run_schema(pg_dsn, first_id)
        with psycopg.connect(pg_dsn) as conn:
            left = {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)", (made,))}
        assert left == set(made[2:])
    finally:
        for n in made:
            with psycopg.connect(pg_dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(n)))

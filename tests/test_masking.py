"""Masking by construction: a secret a user puts in a scenario reaches no file a run leaves.

The scenario below carries secrets the way users do: a ``db_pass`` in ``workload_params``, a
``PGPASSWORD=`` and a quoted two-word password in free text. After a real run (with
``--keep-work``, so racer logs and results stay), no file under the run folder holds the secret,
the ledger included; and report.md shows a ``<script>`` copied from the ``about`` as text.
"""

from __future__ import annotations

from kits.robustkit import chaos

SCENARIO = """\
name: masked
about: "<script>alert(1)</script> see password='hunter2 words'"
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
workload_params: {db_pass: hunter2, note: "PGPASSWORD=hunter2 psql"}
resume: none
trials: 1
kill_points: ["put(step=0"]
"""


def test_no_file_of_a_run_holds_the_secret_and_report_md_is_inert(tmp_path):
    path = tmp_path / "masked.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    p = chaos(["run", str(path), "--out", str(out), "-q", "--keep-work"], tmp_path / "state")
    assert p.returncode in (0, 1, 2), p.stderr
    files = [f for f in out.rglob("*") if f.is_file() and not f.is_symlink()]
    assert any(f.name == "run.json" for f in files) and any(f.parent.name == "work" or "work" in f.parts for f in files)
    leaks = [str(f.relative_to(out)) for f in files if b"hunter2" in f.read_bytes()]
    assert leaks == [], leaks
    [report] = [f for f in files if f.name == "report.md"]
    text = report.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_kept_work_files_of_a_postgres_run_do_not_hold_the_password(tmp_path, pg_dsn, monkeypatch):
    """Cold racers read their spec (with the DSN) from work/; with --keep-work those specs, logs
    and results stayed with the password in them. They are masked once every racer is dead."""
    from urllib.parse import urlsplit

    password = urlsplit(pg_dsn).password
    assert password
    path = tmp_path / "pg.yaml"
    path.write_text(SCENARIO.replace("backend: sqlite", "backend: postgres") + "racers: {start: cold}\n")
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    out = tmp_path / "out"
    try:
        p = chaos(["run", str(path), "--out", str(out), "-q", "--keep-work"], tmp_path / "state")
    finally:  # --keep-work keeps the run's Postgres schema too (for debugging): this test drops it
        _drop_kept_schemas(out, pg_dsn)
    assert p.returncode in (0, 1, 2), p.stderr
    work = [f for f in out.rglob("*") if f.is_file() and "work" in f.relative_to(out).parts and f.suffix in (".json", ".log")]
    assert any(f.name.startswith("spec-") for f in work)
    leaks = [str(f.relative_to(out)) for f in work if f":{password}@" in f.read_text(errors="replace")]
    assert leaks == [], leaks


def _drop_kept_schemas(out, dsn: str) -> None:
    import json

    from chaos.running import pgstore

    for meta in out.rglob("run.json"):
        run_id = json.loads(meta.read_text()).get("run_id")
        if run_id and pgstore.schema_name(run_id) in pgstore.list_run_schemas(dsn):
            pgstore.drop_run_schema(dsn, run_id)

"""Masking by construction: a secret a user puts in a scenario reaches no file a run leaves.

The scenario below carries secrets the way users do: a ``db_pass`` in ``workload_params``, a
``PGPASSWORD=`` and a quoted two-word password in free text. After a real run (with
``--keep-work``, so racer logs and results stay), no file under the run folder holds the secret,
the ledger included; and report.md shows a ``<script>`` copied from the ``about`` as text.

The story of the whole corpus (``tests/kits/secret_forms.py``): a run whose ``about``, workload
params (values and keys), effect names and values, racer log lines and racer errors carry every
form writes none of them, in any file of its run folder or on the terminal, while the ordinary
text around them (ids, hashes, words, the run's own numbers) stays readable.
"""

from __future__ import annotations

import html
import json
import sqlite3

from kits.robustkit import chaos
from kits.secret_forms import FORMS, READABLE, leaked, story_scenario

# the framework's own store, kept by --keep-work for debugging, is the app's data as the framework
# wrote it (a LangGraph checkpoint holds the error the user's node raised): chaos leaves it as it is
FRAMEWORK_STATE = ("checkpoints.sqlite",)


def test_a_run_carrying_every_secret_form_writes_none_of_them_and_stays_readable(tmp_path):
    path = tmp_path / "secrets.yaml"
    path.write_text(story_scenario())
    out = tmp_path / "out"
    p = chaos(["run", str(path), "--out", str(out), "--keep-work"], tmp_path / "state")
    # one cell runs clean (every kill point holds), the other's resume raises the user's error
    assert p.returncode == 2, p.stdout + p.stderr
    [run] = [d for d in (out / "secrets_everywhere").iterdir() if d.is_dir() and not d.is_symlink()]
    files = [f for f in run.rglob("*") if f.is_file() and not f.is_symlink()]
    names = {f.name for f in files}
    assert {"run.json", "journal.jsonl", "results.json", "report.md", "report.html", "junit.xml", "ledger.sqlite"} <= names
    assert any(f.suffix == ".log" and f.name.startswith("racer-") for f in files)  # kept racer logs

    leaks = {str(f.relative_to(run)): leaked(f.read_bytes()) for f in files if not f.name.startswith(FRAMEWORK_STATE)}
    leaks["terminal"] = leaked((p.stdout + p.stderr).encode())
    assert {k: v for k, v in leaks.items() if v} == {}

    # every input really carried the forms: the run saw them (the error and the effects happened)
    results = json.loads((run / "results.json").read_text())
    assert (results["summary"]["app_error"], results["summary"]["valid"]) == (1, 3)  # 2 dry runs + 1 kill trial
    rows = sqlite3.connect(run / "ledger.sqlite").execute("SELECT task FROM effects").fetchall()
    tasks = {t for (t,) in rows}
    assert {"a", "b", "c"} <= tasks  # names without a secret are stored as they are
    assert sum(t.startswith("notify ") and "***" in t for t in tasks) >= len([f for f in FORMS if "\n" not in f.text]) - 2

    # ... and what is not secret stays readable, where a masker that masks everything would fail
    meta = json.loads((run / "run.json").read_text())
    about = meta["scenario"]["about"]
    report = (run / "report.md").read_text()
    page = (run / "report.html").read_text()
    for text in READABLE:
        assert text in about, text
        assert html.escape(text, quote=False) in report, text
    assert meta["scenario"]["workload_params"]["note"] == "the quick brown fox jumps over the lazy dog"
    assert html.escape("the quick brown fox jumps over the lazy dog") in page
    assert results["run_id"] in report and str(run) in p.stdout
    trial_ids = [json.loads(line)["trial_id"] for line in (run / "journal.jsonl").read_text().splitlines()]
    assert trial_ids == ["c000-dry", "c000-p000-r000", "c001-dry", "c001-p000-r000"]
    assert "c000-p000-r000" in page and "c001-p000-r000" in (run / "results.json").read_text()
    assert "workload=tests.workloads.secret_workloads:raising" in p.stdout and "app error: RuntimeError" in p.stdout
    assert "<script>" not in report and "&lt;script&gt;alert(1)&lt;/script&gt;" in report
    assert "<img" not in report and "&lt;img src=x onerror=alert(2)>" in report  # an effect's name, in the counts
    # effects whose names sound secret are counted as any other: names and numbers stay
    baseline = results["cells"][0]["baseline"]["effects"]
    assert (baseline["reset_password"], baseline["create_session"]) == (1, 1)
    assert "reset_password=1" in report and "create_session=1" in report


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


def test_what_the_python_api_returns_is_masked_like_results_json(tmp_path, monkeypatch):
    """``chaos.run()`` returned the results before masking: a reason quoting a secret reached a
    pytest failure message, and so the CI log. It returns what results.json holds."""
    import chaos

    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    raising = json.loads(story_scenario())
    # a matrix of workload params names each cell by them: the cell's id carries the token too
    raising["workload"] = "tests.workloads.secret_workloads:raising"
    raising["matrix"] = {"workload_params": [{"forms": [f.text for f in FORMS[:12]], "GITHUB_TOKEN": "ChaosFakeTokenName0052"}]}
    results = chaos.run(raising, out=str(tmp_path / "out"))
    text = results.model_dump_json()
    assert "app error: RuntimeError" in text and leaked(text.encode()) == []
    stored = chaos.RunResults.model_validate_json(next((tmp_path / "out").rglob("results.json")).read_text())
    assert [v.reason for c in results.cells for v in c.verdicts] == [v.reason for c in stored.cells for v in c.verdicts]
    assert results.exit_code == 2 and results.summary.app_error == 1

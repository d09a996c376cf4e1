"""When the run itself fails: exit 3 and one line, never a traceback or a verdict's exit code.

CI reads 0/1/2 as verdicts. A bad flag, an unusable output folder, a database that refuses the
DSN, a full disk or a database that goes down mid-run is none of them: each case here runs the
real CLI and expects exit 3, one line on stderr naming what failed and what to do, and no
half-written run folder. A run that fails after it measured something keeps it: the journal,
run.json marked ``failed``, and (when the disk allows) results.json and the report.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from kits.robustkit import ROOT, one_line
from kits.tcpproxy import TcpProxy
from typer.testing import CliRunner

from chaos.cli.app import app
from chaos.running import journal as journal_mod

SWEEP = """\
name: ok
kind: kill_sweep
target: {framework: langgraph, backend: BACKEND, durability: sync}
workload: three_step
resume: none
trials: 1
"""


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(ROOT)
    return CliRunner()


def scenario(tmp_path: Path, backend: str = "sqlite", extra: str = "") -> Path:
    p = tmp_path / "ok.yaml"
    p.write_text(SWEEP.replace("BACKEND", backend) + extra)
    return p


def run_folders(out: Path) -> list[Path]:
    return sorted(out.rglob("run.json")) if out.exists() else []


def expect_failed(result, *fragments: str) -> str:
    """Exit 3, no traceback, one line starting 'chaos: error:' holding every fragment."""
    assert result.exit_code == 3, f"exit {result.exit_code}: {result.output}"
    assert "Traceback" not in result.output
    # `chaos run` first reaps racers that dead runs left on this machine (possibly another
    # session's) and says so: those notes are not the error, which must be exactly one line
    # ... and, before it stops on its own database's outage, says how long it waits for it (a notice)
    notes = ("chaos: cleaned up after a dead run", "chaos: could not check for dead runs", "chaos: the run's Postgres (")
    line = one_line("\n".join(ln for ln in result.stderr.splitlines() if not ln.startswith(notes)))
    assert line.startswith("chaos: error: "), line
    for f in fragments:
        assert f in line, f"{f!r} not in: {line}"
    return line


# ------------------------------------------------------------------------------ bad flags


@pytest.mark.parametrize(
    "flags,fragments",
    [
        (["--trials", "0"], ["--trials 0", "between 1 and 100000"]),
        (["--trials", "-1"], ["--trials -1", "between 1 and 100000"]),
        (["--seed", "-1"], ["--seed -1", "between 0 and"]),
        (["--work-in", "/proc"], ["--work-in /proc", "cannot make folders there"]),
    ],
    ids=["trials-0", "trials-negative", "seed-negative", "work-in-proc"],
)
def test_a_bad_flag_is_one_line_and_no_run_folder(flags, fragments, runner, tmp_path):
    out = tmp_path / "out"
    expect_failed(runner.invoke(app, ["run", str(scenario(tmp_path)), "--out", str(out), "-q", *flags]), *fragments)
    assert run_folders(out) == []


def test_out_at_a_file_is_refused(runner, tmp_path):
    target = tmp_path / "a-file"
    target.write_text("not a folder")
    expect_failed(runner.invoke(app, ["run", str(scenario(tmp_path)), "--out", str(target), "-q"]), str(target), "not a folder")


def test_a_usage_error_is_not_a_verdict(runner, tmp_path):
    r = runner.invoke(app, ["run", str(scenario(tmp_path)), "--trials", "many"])
    assert r.exit_code == 3 and "Traceback" not in r.output


def test_a_bug_in_chaos_is_one_line_and_debug_shows_the_traceback(runner, tmp_path, monkeypatch):
    import chaos.running.orchestrator as orch

    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(orch, "run_scenario", broken)
    expect_failed(runner.invoke(app, ["run", str(scenario(tmp_path)), "-q"]), "internal error (RuntimeError: boom)", "--debug")
    r = runner.invoke(app, ["--debug", "run", str(scenario(tmp_path)), "-q"])
    assert r.exit_code == 3 and "Traceback" in r.stderr and "RuntimeError: boom" in r.stderr


# ------------------------------------------------------------------------- the database


def _dsn_with(dsn: str, **parts: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    u = urlsplit(dsn)
    user, pw = (u.username or ""), parts.get("password", u.password or "")
    netloc = f"{user}:{pw}@{u.hostname}:{parts.get('port', u.port or 5432)}"
    return urlunsplit((u.scheme, netloc, parts.get("path", u.path), u.query, u.fragment))


@pytest.mark.parametrize("case", ["port", "password", "database", "not-a-dsn"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_wrong_dsn_is_refused_before_any_trial(case, command, runner, tmp_path, monkeypatch, request):
    if case == "not-a-dsn":
        dsn = "not a dsn at all"
    else:
        good = request.getfixturevalue("pg_dsn")
        dsn = {
            "port": lambda: _dsn_with(good, port="1"),
            "password": lambda: _dsn_with(good, password="wrong-Secret-42"),
            "database": lambda: _dsn_with(good, path="/chaos_no_such_db"),
        }[case]()
    monkeypatch.setenv("CHAOS_PG_DSN", dsn)
    out = tmp_path / "out"
    args = [command, str(scenario(tmp_path, "postgres"))] + (["--out", str(out), "-q"] if command == "run" else [])
    line = expect_failed(runner.invoke(app, args), "CHAOS_PG_DSN", "cannot connect")
    assert "wrong-Secret-42" not in line
    assert run_folders(out) == []


def test_postgres_down_mid_run_keeps_results_and_the_report(runner, tmp_path, monkeypatch, pg_dsn):
    """After the first journaled trial the database goes away (every connection cut, new ones
    refused) and stays away: the run says it waits for it (bounded: 1 s here, 120 s by default), then
    ends with exit 3 and one error line, run.json says failed, and results.json and report.md are
    written from the journal (before, the failing schema drop lost both)."""
    from urllib.parse import urlsplit

    u = urlsplit(pg_dsn)
    proxy = TcpProxy(u.hostname or "127.0.0.1", u.port or 5432)
    monkeypatch.setenv("CHAOS_PG_DSN", _dsn_with(pg_dsn, port=str(proxy.port)))
    monkeypatch.setenv("CHAOS_OUTAGE_WAIT_S", "1")
    real_append = journal_mod.Journal.append
    calls = []

    def append_then_take_the_database_down(self, record):
        real_append(self, record)
        calls.append(record["trial_id"])
        if len(calls) == 1:
            proxy.down()

    monkeypatch.setattr(journal_mod.Journal, "append", append_then_take_the_database_down)
    out = tmp_path / "out"
    try:
        failed = runner.invoke(app, ["run", str(scenario(tmp_path, "postgres")), "--out", str(out), "-q"])
        line = expect_failed(failed, "--resume")
    finally:
        proxy.down()
    assert "does not answer: waiting up to 1 s" in failed.stderr, failed.stderr
    [meta_path] = run_folders(out)
    run_dir = meta_path.parent
    meta = json.loads(meta_path.read_text())
    assert meta["failed"] and meta["finished"] is not None, meta
    assert str(run_dir) in line
    results = json.loads((run_dir / "results.json").read_text())
    assert results["exit_code"] == 3
    assert all(v["status"] != "holds" for c in results["cells"] for v in c["verdicts"])  # part of a cell proves nothing
    assert "the run failed" in (run_dir / "report.md").read_text()

    # the database is back: the run resumes from its journal and ends as a run that never failed
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    monkeypatch.setattr(journal_mod.Journal, "append", real_append)
    r = runner.invoke(app, ["run", "--resume", str(run_dir), "-q"])
    assert r.exit_code in (0, 1, 2), r.output
    assert not json.loads(meta_path.read_text()).get("failed")


# ------------------------------------------------------------------------------- full disks


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 1 MiB tmpfs, unmounted afterwards (needs root, as CI has)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> Path:
    """Fill ``folder``'s file system to the last byte; returns the filler file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (b"\0" * 4096, b"\0"):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, chunk)
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_before_the_first_trial_leaves_no_folder(runner, tmp_path, tiny_tmpfs):
    fill(tiny_tmpfs)
    out = tiny_tmpfs / "reports"
    out.mkdir()  # a folder costs no data block on tmpfs: run.json is what cannot be written
    expect_failed(runner.invoke(app, ["run", str(scenario(tmp_path)), "--out", str(out), "-q"]), "No space left on device")
    assert run_folders(out) == [] and list(out.iterdir()) == []


@pytest.mark.parametrize("moment", ["after-the-first-trial", "as-the-run-ends"])
def test_a_full_disk_mid_run_keeps_the_journal_and_says_how_to_recover(moment, runner, tmp_path, tiny_tmpfs, monkeypatch):
    """The disk fills after the first journaled trial, or as run.json is written at the end: exit
    3, one line naming the full disk and the journaled trials; once space is freed, `chaos
    analyze` writes results from the journal."""
    from chaos.running.runfolder import RunFolder

    real_append = journal_mod.Journal.append
    real_mark_ended = RunFolder.mark_ended
    appended = []

    def append_then_fill(self, record):
        real_append(self, record)
        appended.append(record["trial_id"])
        if len(appended) == 1 and moment == "after-the-first-trial":
            fill(tiny_tmpfs)

    def fill_then_mark_ended(self, **kw):
        fill(tiny_tmpfs)
        real_mark_ended(self, **kw)

    monkeypatch.setattr(journal_mod.Journal, "append", append_then_fill)
    if moment == "as-the-run-ends":
        monkeypatch.setattr(RunFolder, "mark_ended", fill_then_mark_ended)
    out = tiny_tmpfs / "reports"
    work = tmp_path / "work"
    work.mkdir()
    line = expect_failed(
        # one job: the disk fills at the chosen moment, not in a second slot's folder first
        runner.invoke(app, ["run", str(scenario(tmp_path)), "--out", str(out), "--work-in", str(work), "-q", "--jobs", "1"]),
        "No space left on device",
        "journaled trial",
    )
    [meta_path] = run_folders(out)
    run_dir = meta_path.parent
    assert str(run_dir) in line
    (tiny_tmpfs / "filler").unlink()
    monkeypatch.setattr(journal_mod.Journal, "append", real_append)
    monkeypatch.setattr(RunFolder, "mark_ended", real_mark_ended)
    r = runner.invoke(app, ["analyze", str(run_dir)])
    assert r.exit_code in (0, 1, 2), r.output  # scored from the journal: a verdict code once the disk has room
    assert (run_dir / "results.json").exists() and (run_dir / "report.md").exists()
    assert appended[0] in (run_dir / "journal.jsonl").read_text()  # what was measured is kept
    assert os.listdir(work) == []  # the work folder went with the run


def test_a_resumed_work_in_run_keeps_its_work_where_run_json_says(tmp_path, monkeypatch):
    """Resuming a run made with --work-in ran the remaining trials on disk (run_dir/work) while
    run.json named the --work-in folder; now they run where run.json says."""
    from chaos.running.options import RunOptions
    from chaos.running.orchestrator import run_scenario
    from chaos.running.resume import resume_run

    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    work_in = tmp_path / "fast"
    work_in.mkdir()
    first = run_scenario(scenario(tmp_path), RunOptions(out=tmp_path / "out", work_in=work_in, keep_work=True))
    journal = first.run_dir / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    assert len(lines) > 2
    journal.write_text("".join(lines[:2]))  # as if the run had died after two records
    recorded = json.loads((first.run_dir / "run.json").read_text())["work_dir"]
    resume_run(first.run_dir, RunOptions(keep_work=True))
    assert json.loads((first.run_dir / "run.json").read_text())["work_dir"] == recorded
    assert not (first.run_dir / "work").exists()
    assert Path(recorded).is_dir() and any(Path(recorded).iterdir())


def test_the_ledger_wal_is_checkpointed_during_a_run(tmp_path, monkeypatch):
    """The WAL of ledger.sqlite only grew during a run (3.1 MB for 66 sweep trials); now it is
    folded back and truncated every few trials: seen from the trials' side, it shrinks."""
    from chaos.running.execution import CHECKPOINT_EVERY
    from chaos.running.options import RunOptions
    from chaos.running.orchestrator import run_scenario

    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    out = tmp_path / "out"
    sizes: list[int] = []

    def on_trial(rec):
        [wal] = list(out.rglob("ledger.sqlite-wal")) or [None]
        sizes.append(wal.stat().st_size if wal is not None else 0)

    # one job: with several, the WAL is folded back once the cell ends (checkpoint_ledger), not between trials
    run_scenario(scenario(tmp_path), RunOptions(out=out, on_trial=on_trial, jobs=1))
    assert len(sizes) > 2 * CHECKPOINT_EVERY
    shrinks = [i for i in range(1, len(sizes)) if sizes[i] < sizes[i - 1]]
    assert shrinks, sizes

"""A killed night is not lost (issue 24, item 8).

The story: `chaos nightly` is SIGKILLed (an OOM killer, a CI runner torn down) while its second
run is in flight. The user can look at what the night has (`chaos report` on it: no summary.json
yet, the pages say it did not finish), then `chaos nightly --resume NIGHT` finishes it in the same
folder: the first run is kept as it was, the second continues from its journal (no trial twice),
and what the dead night left (its registry entry) is reaped first, as `chaos run` does.

And `--keep-work` on Postgres: the schema it keeps on purpose is written down, `chaos clean`
names it without dropping it, and `chaos clean --pg DSN` drops it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from kits.robustkit import chaos, chaos_bg, chaos_env, journal_lines, one_line, wait_for

from chaos.running import pgstore
from chaos.running.journal import read_journal
from chaos.running.registry import server_of

FIRST = """\
name: night_first
kind: race
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 2}
trials: 2
seed: 11
"""
SECOND = """\
name: night_second
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
kill_points: ["effect(task=b):after", "put_writes(node=b,", "put(step=2,source=loop):after"]
trials: 2
seed: 4242
timeout_s: 60
"""


def test_a_sigkilled_night_is_reported_as_unfinished_and_resumed_in_its_own_folder(tmp_path):
    (tmp_path / "first.yaml").write_text(FIRST)
    (tmp_path / "second.yaml").write_text(SECOND)
    (tmp_path / "suite.yaml").write_text("name: s\nscenarios:\n  - file: first.yaml\n  - file: second.yaml\n")
    state, out = tmp_path / "state", tmp_path / "nightly"
    night = out / "2026-12-01"

    proc = chaos_bg(["nightly", str(tmp_path / "suite.yaml"), "--out", str(out), "--date", "2026-12-01", "-q"], state)
    try:
        # the real point: the first run finished, the second has journaled a trial
        journal = wait_for(lambda: next(night.glob("night_second/2*/journal.jsonl"), None), 300, "the second run's journal")
        wait_for(lambda: journal_lines(journal) >= 1, 300, "a journaled trial of the second run")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    first_dir = next(night.glob("night_first/2*/results.json")).parent
    first_results = (first_dir / "results.json").read_bytes()
    second_dir = journal.parent
    n_before = journal_lines(journal)
    assert not (night / "summary.json").exists()
    assert list((state / "active").glob("*.json")), "the dead night left its run's registry entry"

    # chaos report reads the partial night: the pages say so, and no summary.json appears
    rep = chaos(["report", str(night)], state)
    assert rep.returncode == 3, rep.stdout + rep.stderr
    assert "did not finish" in rep.stderr and f"chaos nightly --resume {night}" in " ".join(rep.stderr.split())
    assert "Traceback" not in rep.stderr
    assert (night / "index.html").exists() and (night / "junit.xml").exists()
    assert not (night / "summary.json").exists()

    # resume: the dead run is reaped first, the first run kept, the second continued in place
    res = chaos(["nightly", "--resume", str(night), "-q"], state, timeout=900)
    assert "cleaned up after a dead run" in res.stderr, res.stderr
    summary = json.loads((night / "summary.json").read_text())
    assert res.returncode == summary["exit_code"] != 3, res.stdout + res.stderr
    assert summary["interrupted"] is False
    assert "resumed night: 1 finished run(s) kept as they were: night_first" in res.stdout
    assert [r["scenario"] for r in summary["runs"]] == ["night_first", "night_second"]
    assert summary["runs"][0]["run_dir"] == str(first_dir.relative_to(night))
    assert summary["runs"][1]["run_dir"] == str(second_dir.relative_to(night))
    assert (first_dir / "results.json").read_bytes() == first_results, "a finished run was run again"
    assert [p.name for p in (night / "night_second").iterdir() if not p.is_symlink()] == [second_dir.name]
    assert not list(out.glob("2026-12-01-*")), "the resume made a second night"

    records, torn = read_journal(journal)
    ids = [r["trial_id"] for r in records]
    assert not torn and len(ids) == len(set(ids)) > n_before
    meta = json.loads((second_dir / "run.json").read_text())
    assert meta["finished"] and len(meta["resumes"]) == 1 and meta["resumes"][0]["journaled_trials"] == n_before
    results = json.loads((second_dir / "results.json").read_text())
    assert results["cells"][0]["trials"] == len([t for t in ids if not t.endswith("-dry")])
    assert not list((state / "active").glob("*.json"))


def test_nightly_resume_refuses_a_folder_that_is_not_a_night(tmp_path):
    (tmp_path / "nothing").mkdir()
    res = chaos(["nightly", "--resume", str(tmp_path / "nothing")], tmp_path / "state")
    assert res.returncode == 3 and "no night.json" in one_line(res.stderr)
    both = chaos(["nightly", str(tmp_path / "s.yaml"), "--resume", str(tmp_path / "nothing")], tmp_path / "state")
    assert both.returncode == 3 and "not both" in one_line(both.stderr)


def test_keep_work_postgres_schema_is_recorded_and_clean_pg_drops_it(tmp_path, pg_dsn, monkeypatch):
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    scenario = tmp_path / "pg_keep.yaml"
    scenario.write_text(
        textwrap.dedent("""\
            name: pg_keep
            kind: race
            target: {framework: langgraph, backend: postgres}
            workload: gate_after_interrupt
            resume: "command:true"
            racers: {k: 2, placement: local}
            trials: 1
            seed: 5
            """)
    )
    state = tmp_path / "state"
    ran = chaos(["run", str(scenario), "--out", str(tmp_path / "reports"), "--keep-work", "-q"], state)
    assert ran.returncode in (0, 1, 2), ran.stderr
    run_dir = (tmp_path / "reports" / "pg_keep" / "latest").resolve()
    run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
    schema = pgstore.schema_name(run_id)
    try:
        assert schema in pgstore.list_run_schemas(pg_dsn)  # kept, as asked
        kept = state / "kept" / f"{run_id}.json"
        assert json.loads(kept.read_text())["pg_schema"] == schema

        # plain `chaos clean` (with CHAOS_PG_DSN set: the reaping every run starts with) names it
        # and leaves it: it was kept on purpose
        named = chaos(["clean"], state)
        assert named.returncode == 0 and schema in named.stdout and "--keep-work" in named.stdout, named.stdout
        assert schema in pgstore.list_run_schemas(pg_dsn)
        assert kept.exists()
        # a DSN of another server: the record says where the schema is, and stays
        elsewhere = chaos(["clean", "--pg", "postgresql://chaos:pw@db.invalid:6543/other"], state)
        assert elsewhere.returncode == 0, elsewhere.stderr
        said = " ".join(elsewhere.stdout.split())
        assert f"{schema} is kept on {server_of(pg_dsn)}, not db.invalid:6543/other" in said, said
        assert kept.exists() and schema in pgstore.list_run_schemas(pg_dsn)

        dropped = chaos(["clean", "--pg", pg_dsn], state)
        assert dropped.returncode == 0, dropped.stderr
        assert schema in dropped.stdout
        assert schema not in pgstore.list_run_schemas(pg_dsn)
        assert not kept.exists()
        again = chaos(["clean", "--pg", pg_dsn], state)
        assert again.returncode == 0 and schema not in again.stdout and run_id not in again.stdout, again.stdout
    finally:
        pgstore.drop_run_schema(pg_dsn, run_id)
    assert Path(run_dir / "work").exists()  # the kept work folder is the user's


HOLDER = "import sys; from chaos.running.folderlock import FolderLock; FolderLock(sys.argv[1]).acquire(); print('held', flush=True); sys.stdin.read()"


def test_a_night_still_running_is_neither_resumed_reported_nor_merged_by_a_second_process(tmp_path):
    night = tmp_path / "nightly" / "2026-12-01"
    night.mkdir(parents=True)
    (night / "night.json").write_text(json.dumps({"suite_file": str(tmp_path / "suite.yaml"), "shard": "1/2"}))
    (night / "shard.json").write_text("{}")
    state = tmp_path / "state"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(night)], env=chaos_env(state), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"  # a live `chaos nightly` holds its night
        for args in (["nightly", "--resume", str(night)], ["report", str(night)], ["merge", str(night), "--out", str(tmp_path / "m")]):
            res = chaos(args, state)
            said = one_line(res.stderr)
            assert res.returncode == 3 and "still being executed by another chaos process" in said, (args, res.stderr)
            assert f"pid {holder.pid}" in said
        assert not (tmp_path / "m").exists()
    finally:
        holder.kill()
        holder.wait()

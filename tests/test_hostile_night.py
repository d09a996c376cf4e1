"""A night folder comes from anywhere (a CI artifact, a colleague's disk): chaos reads it as untrusted.

Before (issue 40, point 2): night.json a link to /dev/zero made `nightly --resume` and `report` read
until memory ran out; a FIFO as the previous night's summary.json hung tonight's nightly after all
its runs finished; a previous summary.json of the wrong shape ended the night in "internal error";
night.json naming another suite file ran that suite into the night; and a suite edited between a
kill and `--resume` was resumed as one night, with nothing to say it mixed two suites. Each story
forges a real night's files from the outside and runs the real command line.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from kits.robustkit import chaos

SCENARIO = """\
name: {name}
kind: race
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: gate_after_interrupt
resume: "command:true"
racers: {{k: 2}}
trials: {trials}
seed: 11
"""


def _suite(folder: Path, entries: dict[str, int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, trials in entries.items():
        (folder / f"{name}.yaml").write_text(SCENARIO.format(name=name, trials=trials))
    suite = folder / "suite.yaml"
    suite.write_text("name: s\nscenarios:\n" + "".join(f"  - file: {n}.yaml\n" for n in entries))
    return suite


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """A finished night of a one-entry suite, as `chaos nightly` made it."""
    d = tmp_path_factory.mktemp("night")
    suite = _suite(d / "suite", {"night_one": 1})
    p = chaos(["nightly", str(suite), "--out", str(d / "nightly"), "--date", "2026-12-01", "-q"], d / "state", timeout=600)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    return d / "nightly" / "2026-12-01"


def _copy(night: Path, tmp_path: Path, date: str = "2026-12-01") -> Path:
    dst = tmp_path / "nightly" / date
    shutil.copytree(night, dst, symlinks=True, ignore=shutil.ignore_patterns(".lock"))
    return dst


def _killed(night: Path, tmp_path: Path) -> Path:
    """A copy of the night as if its nightly was killed before writing summary.json."""
    dst = _copy(night, tmp_path)
    (dst / "summary.json").unlink()
    return dst


def _one_error(p) -> str:
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("chaos: error:")]
    return line


def test_the_night_records_its_suites_digest(night):
    summary = json.loads((night / "summary.json").read_text())
    start = json.loads((night / "night.json").read_text())
    assert summary["suite_digest"] and summary["suite_digest"] == start["suite_digest"]
    assert set(start["entries"]) == {"night_one"}


@pytest.mark.parametrize("command", ["resume", "report"])
def test_night_json_linked_to_dev_zero_is_refused_at_once(night, tmp_path, command):
    folder = _killed(night, tmp_path)
    (folder / "night.json").unlink()
    (folder / "night.json").symlink_to("/dev/zero")
    args = ["nightly", "--resume", str(folder), "-q"] if command == "resume" else ["report", str(folder)]
    line = _one_error(chaos(args, tmp_path / "state", timeout=60))  # read whole, it never ends
    assert "night.json" in line and "symbolic link" in line


def test_a_fifo_as_the_previous_nights_summary_does_not_hang_tonights_night(night, tmp_path):
    prev = _copy(night, tmp_path, "2026-11-30")
    (prev / "summary.json").unlink()
    os.mkfifo(prev / "summary.json")
    suite = Path(json.loads((night / "night.json").read_text())["suite_file"])
    p = chaos(["nightly", str(suite), "--out", str(tmp_path / "nightly"), "--date", "2026-12-01", "-q"], tmp_path / "state", timeout=300)
    line = _one_error(p)
    assert str(prev / "summary.json") in line and "not a regular file" in line
    assert "--resume" in p.stderr  # tonight's runs are kept: how to finish the night


@pytest.mark.parametrize("shape", ["huge", "deep", "list"])
def test_a_previous_summary_of_the_wrong_shape_is_one_line_naming_it(night, tmp_path, shape):
    prev = _copy(night, tmp_path, "2026-11-30")
    path = prev / "summary.json"
    if shape == "huge":  # 300 MB (sparse: no disk spent): refused by its size, before reading
        with open(path, "wb") as f:
            f.truncate(300 << 20)
    elif shape == "deep":
        path.write_text("[" * 200_000 + "]" * 200_000)
    else:
        path.write_text(json.dumps([{"date": 5}]))
    tonight = _copy(night, tmp_path, "2026-12-01")
    p = chaos(["report", str(tonight)], tmp_path / "state", timeout=120)
    line = _one_error(p)
    assert str(path) in line


def test_night_json_naming_another_suite_is_refused(night, tmp_path):
    folder = _killed(night, tmp_path)
    other = _suite(tmp_path / "other", {"something_else": 1})
    start = json.loads((folder / "night.json").read_text())
    for key in ("suite_digest", "entries"):  # forged as an older chaos wrote it: no digest to compare
        start.pop(key, None)
    (folder / "night.json").write_text(json.dumps({**start, "suite_file": str(other)}))
    line = _one_error(chaos(["nightly", "--resume", str(folder), "-q"], tmp_path / "state", timeout=300))
    assert "night_one" in line and "another suite" in line
    assert not (folder / "something_else").exists()  # nothing of the other suite ran into the night


def test_a_suite_edited_between_the_kill_and_the_resume_is_refused_naming_the_entries(night, tmp_path):
    folder = _killed(night, tmp_path)
    suite = _suite(tmp_path / "edited", {"night_one": 3, "night_two": 1})  # trials changed, an entry added
    start = json.loads((folder / "night.json").read_text())
    (folder / "night.json").write_text(json.dumps({**start, "suite_file": str(suite)}))
    line = _one_error(chaos(["nightly", "--resume", str(folder), "-q"], tmp_path / "state", timeout=300))
    assert "changed: night_one" in line and "added: night_two" in line
    assert not (folder / "night_two").exists() and not (folder / "summary.json").exists()

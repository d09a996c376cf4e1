"""A run folder has one owner (chaos.running.runfolder): whoever writes run.json (a run, a rerun,
a resume, the reaper), the file is redacted and replaced atomically, and it keeps the keys and
values it always had, so run folders written before still load and re-score the same."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from chaos.records import NightSummary
from chaos.running import runfolder
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario
from chaos.running.resume import rerun
from chaos.running.runfolder import load_run

SECRET = "hunter2"
DSN = f"postgresql://chaos:{SECRET}@db.example:5432/chaos"

SCENARIO = """\
name: runfolder_probe
about: one kill point of three_step, enough to rerun a trial
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
kill_points: ["effect(task=b):after"]
trials: 1
seed: 7
timeout_s: 60
"""


@pytest.fixture
def stored_run(tmp_path):
    path = tmp_path / "probe.yaml"
    path.write_text(SCENARIO)
    return run_scenario(path, RunOptions(out=tmp_path / "runs")).run_dir


def test_a_rerun_writes_its_run_json_redacted_and_atomically(stored_run, tmp_path, monkeypatch):
    # the command line of a rerun can carry a database address with its password
    monkeypatch.setattr(sys, "argv", ["chaos", "rerun", str(stored_run), "--pg-dsn", DSN])
    writes: list[Path] = []
    replaced: list[tuple[str, str]] = []
    write_text, replace = Path.write_text, os.replace

    def spy_write(self, *a, **kw):
        writes.append(self)
        return write_text(self, *a, **kw)

    def spy_replace(src, dst, *a, **kw):
        replaced.append((Path(src).name, Path(dst).name))
        return replace(src, dst, *a, **kw)

    monkeypatch.setattr(Path, "write_text", spy_write)
    monkeypatch.setattr(runfolder.os, "replace", spy_replace)
    trial = next(t for t in load_run(stored_run).records.ids() if not t.endswith("-dry"))

    outcome, _ = rerun(stored_run, [trial], RunOptions(out=tmp_path / "reruns"))

    meta = (outcome.run_dir / "run.json").read_text()
    assert SECRET not in meta and "--pg-dsn" in meta  # the argument is kept, its password masked
    assert json.loads(meta)["rerun_of"]["trial_ids"] == [trial]
    assert json.loads(meta)["comparison"] is not None  # the last write, after the comparison
    assert not [p for p in writes if p.name == "run.json"], "run.json written in place, not replaced"
    meta_replaces = [r for r in replaced if r[1] == "run.json"]
    assert len(meta_replaces) >= 3 and all(src == ".run.json.tmp" for src, _ in meta_replaces)


def test_run_json_keeps_every_key_and_value_through_its_model(stored_run):
    on_disk = json.loads((stored_run / "run.json").read_text())
    meta = load_run(stored_run).meta
    assert meta.to_json() == on_disk
    assert list(meta.to_json()) == list(on_disk)  # and their order
    assert meta.finished and not meta.interrupted and meta.load and meta.load.end is not None


def test_an_older_run_json_loads_and_is_written_back_with_the_keys_it_had(tmp_path):
    older = {
        "run_id": "old-1",
        "scenario_file": "s.yaml",
        "scenario": {"name": "ok", "kind": "kill_sweep", "workload": "three_step", "resume": "none"},
        "seed": 3,
        "finished": None,
        "interrupted": True,
        "workload_path": ["/x"],
    }  # no cells, no load; a key we dropped
    (tmp_path / "run.json").write_text(json.dumps(older))
    meta = runfolder.read_meta(tmp_path)
    assert meta.run_id == "old-1" and meta.interrupted and meta.resumes == []
    assert meta.to_json() == older


def test_the_reaper_marks_a_dead_run_interrupted_through_the_same_writer(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"run_id": "dead-1", "finished": None, "argv": ["chaos", DSN]}))
    runfolder.mark_reaped(tmp_path)
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["interrupted"] is True and meta["reaped"] and SECRET not in json.dumps(meta)


def test_a_night_summary_keeps_every_key_and_value_through_its_model():
    cell = {
        "cell_id": "default",
        "kind": "race",
        "framework": "langgraph",
        "backend": "sqlite",
        "k": 2,
        "jitter_ms": 0.0,
        "valid_trials": 5,
        "trials": 5,
        "saturation": 0.4,
        "failure": None,
        "verdicts": {"CO": "holds"},
        "reasons": {"CO": "ok"},
    }
    summary = {
        "suite": "s",
        "about": None,
        "suite_file": "suite.yaml",
        "started": "t0",
        "finished": "t1",
        "date": "2026-01-02",
        "interrupted": False,
        "runs": [
            {
                "scenario": "a",
                "file": "a.yaml",
                "overrides": {"trials": 5},
                "run_dir": "a/x",
                "error": None,
                "interrupted": False,
                "exit_code": 0,
                "verdict_counts": {"holds": 1, "violated": 0, "unknown": 0},
                "cells": [cell],
                "load": {"cpus": 2, "start": 0.5, "end": 0.7},
            }
        ],
        "previous": "2026-01-01",
        "verdict_counts": {"holds": 1, "violated": 0, "unknown": 0},
        "trend": {
            "regressions": [],
            "lost": [],
            "improvements": [],
            "changed": [
                {
                    "scenario": "a",
                    "cell_id": "default",
                    "property": "CO",
                    "was": "unknown",
                    "now": "holds",
                    "reason": "ok",
                    "run_dir": "a/x",
                }
            ],
            "new": [],
            "removed": [{"scenario": "b", "cell_id": "default"}],
            "saturation": [
                {"scenario": "a", "cell_id": "default", "was": 0.2, "now": 0.4, "delta": 0.2, "k": 2, "k_was": 2, "notable": True}
            ],
        },
        "exit_code": 0,
    }
    assert json.dumps(NightSummary.model_validate(summary).to_json()) == json.dumps(summary)

"""The journal: a torn last line is detected and dropped, never parsed as a result; a resumed run
cuts it off (keeping it as evidence) so its appends start on a fresh line."""

from __future__ import annotations

import json

import pytest

from chaos.racer.errors import ChaosError
from chaos.running.journal import Journal, read_journal, repair


def test_a_torn_last_line_is_dropped(tmp_path):
    p = tmp_path / "journal.jsonl"
    j = Journal(p)
    j.append({"trial_id": "t0"})
    j.append({"trial_id": "t1"})
    j.close()
    with open(p, "ab") as f:
        f.write(b'{"trial_id": "t2", "val')
    records, torn = read_journal(p)
    assert [r["trial_id"] for r in records] == ["t0", "t1"] and torn


def test_a_complete_record_without_its_newline_is_not_trusted(tmp_path):
    p = tmp_path / "journal.jsonl"
    p.write_bytes(b'{"trial_id": "t0"}\n{"trial_id": "t1"}')
    records, torn = read_journal(p)
    assert [r["trial_id"] for r in records] == ["t0"] and torn


def test_damage_in_the_middle_is_an_error_naming_the_line(tmp_path):
    p = tmp_path / "journal.jsonl"
    p.write_bytes(b'{"trial_id": "t0"}\n"just a string"\n{"trial_id": "t2"}\n')
    with pytest.raises(ChaosError, match=r"journal.jsonl:2: journal line is not a JSON record \(a JSON str"):
        read_journal(p)


def test_repair_cuts_the_torn_tail_and_keeps_it(tmp_path):
    p = tmp_path / "journal.jsonl"
    p.write_bytes(b'{"trial_id": "t0"}\n{"trial_id": "t1", "x"')
    assert repair(p) == b'{"trial_id": "t1", "x"'
    assert p.read_bytes() == b'{"trial_id": "t0"}\n'
    assert (tmp_path / "journal.jsonl.torn").read_bytes() == b'{"trial_id": "t1", "x"\n'
    j = Journal(p)
    j.append({"trial_id": "t1"})
    j.close()
    records, torn = read_journal(p)
    assert [r["trial_id"] for r in records] == ["t0", "t1"] and not torn
    assert repair(p) == b""  # nothing torn: untouched
    assert json.loads(p.read_bytes().splitlines()[-1]) == {"trial_id": "t1"}


def test_records_read_back_slim_analyse_as_the_full_records_do():
    """Records read back from the journal for analysis are slimmed; analysis must not notice."""
    from chaos.kinds.checking import analyze_cell
    from chaos.records import RacerOutcome, TrialRecord
    from chaos.running.stored import slim
    from chaos.scenario.model import expand, parse_scenario

    (cell,) = expand(
        parse_scenario("name: x\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:1'\nracers: {k: 1}\n"), check=False
    )
    result = {
        "t_start_mono_ns": 1,
        "trace": [{"barrier": "gate"}],
        "outcomes": [{"status": "done"}],
        "versions": {"langgraph": "1.2.24"},
        "status": "ok",
    }
    rec = TrialRecord(
        run_id="r",
        cell_index=0,
        cell_id=cell.id,
        trial_id="c000-t0000",
        seed=1,
        kind="race",
        thread_id="t",
        valid=True,
        observations={"fires": 1, "gated_task": "gate"},
        t_start_wall=0,
        wall_s=0,
        racers=[RacerOutcome(racer_id="r0", role="resume", status="ok", result=result)],
    )
    slimmed = slim(rec)
    assert "trace" not in slimmed.racers[0].result and slimmed.racers[0].result["versions"] == {"langgraph": "1.2.24"}
    assert analyze_cell(cell, [slimmed]) == analyze_cell(cell, [rec])


KILLED_WRITER = """
import os, sys
from chaos.running.journal import Journal
j = Journal(sys.argv[1])
for i in range(3):
    j.append({"trial_id": f"t{i}", "pad": "x" * 5000})
os.write(1, f"{j.syncs}\\n".encode())
os.kill(os.getpid(), 9)
"""


def test_an_orchestrator_killed_right_after_appending_loses_no_journaled_trial(tmp_path):
    """The fsync waits up to a second, but every appended line is in the kernel already: a SIGKILL
    of the writer (no close, no fsync) keeps all of them."""
    import subprocess
    import sys

    p = tmp_path / "journal.jsonl"
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(p)], capture_output=True, timeout=60)
    assert proc.returncode == -9
    assert proc.stdout.strip() == b"0"  # three appends within the first second: none was fsynced
    records, torn = read_journal(p)
    assert [r["trial_id"] for r in records] == ["t0", "t1", "t2"] and not torn


def test_the_journal_is_fsynced_at_most_once_a_second_and_on_close(tmp_path, monkeypatch):
    import chaos.running.journal as journal

    now = [100.0]
    monkeypatch.setattr(journal.time, "monotonic", lambda: now[0])
    j = Journal(tmp_path / "journal.jsonl")
    for i in range(5):  # five trials in half a second
        now[0] += 0.1
        j.append({"trial_id": f"t{i}"})
    assert j.syncs == 0
    now[0] += 0.6  # more than a second since the journal was opened
    j.append({"trial_id": "t5"})
    assert j.syncs == 1
    now[0] += 0.2
    j.append({"trial_id": "t6"})
    assert j.syncs == 1
    j.close()
    assert j.syncs == 2  # the last lines are made durable when the run ends

"""The journal: a torn last line is detected and dropped, never parsed as a result; a resumed run
cuts it off (keeping it as evidence) so its appends start on a fresh line."""

from __future__ import annotations

import json

import pytest

from chaos.errors import ChaosError
from chaos.journal import Journal, read_journal, repair


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
    from chaos.analysis import analyze_cell
    from chaos.stored import slim
    from chaos.records import RacerOutcome, TrialRecord
    from chaos.scenario import expand, parse_scenario

    (cell,) = expand(parse_scenario("name: x\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:1'\nracers: {k: 1}\n"), check=False)
    result = {"t_start_mono_ns": 1, "trace": [{"barrier": "gate"}], "outcomes": [{"status": "done"}],
              "versions": {"langgraph": "1.2.24"}, "status": "ok"}
    rec = TrialRecord(run_id="r", cell_index=0, cell_id=cell.id, trial_id="c000-t0000", seed=1, kind="race", thread_id="t",
                      valid=True, observations={"fires": 1, "gated_task": "gate"}, t_start_wall=0, wall_s=0,
                      racers=[RacerOutcome(racer_id="r0", role="resume", status="ok", result=result)])
    slimmed = slim(rec)
    assert "trace" not in slimmed.racers[0].result and slimmed.racers[0].result["versions"] == {"langgraph": "1.2.24"}
    assert analyze_cell(cell, [slimmed]) == analyze_cell(cell, [rec])

"""Story: a person reads why an effect is a duplicate, in words built from the trial's records."""

from kits.runkit import race_record

from chaos.reports.explain import explain_duplicates, timeline


def test_a_double_fire_is_explained_with_racers_checkpoint_value_and_ledger_seqs():
    rec = race_record("c000-t0000", fired_by=["r1", "r0"])
    (sentence,) = explain_duplicates(rec)
    assert sentence == (
        "racer r0 resumed the interrupt parked at checkpoint step 1 with value True and fired gate:True "
        "(ledger seq 3); racer r1 had already fired it (seq 2): the interrupt was consumed twice"
    )


def test_three_fires_give_two_sentences_and_one_fire_gives_none():
    rec = race_record("c000-t0001", fired_by=["r2", "r0", "r1"], k=3)
    out = explain_duplicates(rec)
    assert len(out) == 2 and all("consumed three times" in s for s in out)
    assert explain_duplicates(race_record("c000-t0002", fired_by=["r1"])) == []


def test_a_sweep_duplicate_names_the_kill_point_and_why_the_resume_ran_it_again():
    rec = race_record("c000-p001-r000", fired_by=["victim", "resume"]).model_copy(
        update={
            "kind": "kill_sweep",
            "point": "effect(task=gate):after#1",
            "observations": {
                "kill": {"point": "effect(task=gate):after#1"},
                "at_kill": {"checkpoints": 2, "completed_tasks": ["pre"]},
                "resume_outcome": {"status": "done", "action": {"op": "resume", "form": "command"}},
            },
        }
    )
    (sentence,) = explain_duplicates(rec)
    assert "racer victim fired gate:True (ledger seq 2) and was SIGKILLed at effect(task=gate):after#1" in sentence
    assert "racer resume (seq 3) fired gate again" in sentence and "completed: pre" in sentence


def test_a_duplicate_from_a_recorded_crash_state_says_the_racer_was_frozen_not_killed():
    # crash_states: recorded: the recording stood frozen at the point while its state was copied; no
    # racer of the trial was SIGKILLed, and the explanation must not say one was
    rec = race_record("c000-p001-r000", fired_by=["victim", "resume"]).model_copy(
        update={
            "kind": "kill_sweep",
            "point": "effect(task=gate):after#1",
            "observations": {
                "crash_state": {"recorded_by": "c000-rec000", "point": "effect(task=gate):after#1"},
                "at_kill": {"checkpoints": 2, "completed_tasks": ["pre"]},
                "resume_outcome": {"status": "done", "action": {"op": "resume", "form": "command"}},
            },
        }
    )
    (sentence,) = explain_duplicates(rec)
    assert "SIGKILLed" not in sentence.split(";")[0], sentence
    assert "racer victim fired gate:True (ledger seq 2) and stood frozen at its barrier" in sentence, sentence


def test_timeline_keeps_every_event_in_time_order_and_marks_the_duplicate():
    rec = race_record("c000-t0000", fired_by=["r1", "r0"])
    tl = timeline(rec)
    times = [e.t_ns for _, e in tl.events]
    assert times == sorted(times)
    xs = [e.x for _, e in tl.events]
    assert xs == sorted(xs) and 0 < xs[0] < xs[-1] <= tl.width
    dups = [(rid, e.tag) for rid, e in tl.events if e.duplicate]
    assert dups == [("r0", "gate:True #3")]
    assert {ln.racer_id for ln in tl.lanes} == {"park", "r0", "r1"}
    assert tl.breaks, "the 2 s wait for the gate is drawn as a compressed break"


def test_racers_on_several_hosts_are_flagged_because_their_clocks_do_not_compare():
    rec = race_record("c000-t0000", fired_by=["r1", "r0"])
    assert timeline(rec).hosts == ["vm"]
    rec.ledger[-1]["host"] = "worker-2"
    assert timeline(rec).hosts == ["vm", "worker-2"]

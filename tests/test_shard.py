"""Story: the nightly outgrew one machine, so the team splits it over two (`--shard 1/2`, `--shard 2/2`)
and joins the halves with `chaos merge`. The merged night must say what one machine would have said:
the same cells, verdicts, trial seeds and exit code. When a shard never reports, the merged night
names it and its cells are unknown, never absent; a shard that died mid-night loses none of what it
recorded. Real LangGraph racers, real SIGKILLs: a kill sweep under sync durability and a stray
resume, cut down to eight trials in all (~30 s here).
"""

import json
import shutil
import subprocess
import sys

import pytest
from kits.shardkit import CELLS, ROOT, SHARDS, cells, chaos, env, seeds, summary, verdicts, write_tiny_suite

from chaos.racer.errors import ChaosError
from chaos.running.shard import ShardPlan, assign, parse_shard, plan_runs
from chaos.scenario.model import Scenario

DATE = "2026-01-02"
# one worker runs the shard files (tiny_full_night once); slow by hand: they start first without tests/durations.json
pytestmark = [pytest.mark.xdist_group(SHARDS), pytest.mark.slow]


@pytest.fixture(scope="module")
def nights(tmp_path_factory, tiny_full_night):
    d = tmp_path_factory.mktemp("shard")
    write_tiny_suite(d)
    shards = [
        subprocess.Popen(
            [sys.executable, "-m", "chaos", "nightly", d / "suite.yaml", "--out", d / f"s{i}", "--date", DATE, "-q", "--shard", f"{i}/2"],
            cwd=ROOT,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in (1, 2)
    ]
    logs = [p.communicate(timeout=600)[0] for p in shards]
    codes = [p.returncode for p in shards]
    merged = chaos("merge", d / "s1" / DATE, d / "s2" / DATE, "--out", d / "merged")
    return {"d": d, "full": tiny_full_night.proc, "one": tiny_full_night.night, "codes": codes, "logs": logs, "merged": merged}


def test_two_shards_merged_say_what_one_machine_says(nights):
    d, full, merged = nights["d"], nights["full"], nights["merged"]
    assert full.returncode in (0, 1, 2), full.stdout[-2000:] + full.stderr[-2000:]
    assert all(c in (0, 1, 2) for c in nights["codes"]), nights["logs"]
    assert merged.returncode == full.returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    one, joined = summary(nights["one"]), summary(d / "merged" / DATE)
    assert verdicts(joined) == verdicts(one)
    assert len([c for r in joined["runs"] for c in r["cells"]]) == CELLS
    assert joined["exit_code"] == one["exit_code"] and joined["verdict_counts"] == one["verdict_counts"]
    assert [s["status"] for s in joined["shards"]] == ["ok", "ok"]
    # every trial ran once, on one shard or the other, with the seed it has on one machine
    assert seeds(d / "merged" / DATE) == seeds(nights["one"]) != {}
    # each shard ran only its part of the plan, and the parts cover the plan
    plans = [ShardPlan.model_validate_json((d / f"s{i}" / DATE / "shard.json").read_text()) for i in (1, 2)]
    assert plans[0].digest == plans[1].digest
    ran = [seeds(d / f"s{i}" / DATE) for i in (1, 2)]
    assert ran[0] and ran[1] and not set(ran[0]) & set(ran[1])
    for page in ("index.html", "junit.xml", "timings.json"):
        assert (d / "merged" / DATE / page).stat().st_size > 0
    # the merged night's run folders are whole runs: `chaos analyze` gives the same results again
    run_dir = d / "merged" / DATE / joined["runs"][0]["run_dir"]
    before = (run_dir / "results.json").read_text()
    assert chaos("analyze", run_dir).returncode == joined["runs"][0]["exit_code"]
    assert (run_dir / "results.json").read_text() == before


def test_a_missing_shard_is_named_and_its_cells_are_unknown(nights):
    d = nights["d"]
    p = chaos("merge", d / "s1" / DATE, "--out", d / "half")
    assert p.returncode == 3, p.stdout[-2000:] + p.stderr[-2000:]
    assert "shard 2/2 missing" in p.stderr
    s = summary(d / "half" / DATE)
    plan = ShardPlan.model_validate_json((d / "s1" / DATE / "shard.json").read_text())
    assert [(n["shard"], n["status"]) for n in s["shards"]] == [("1/2", "ok"), ("2/2", "missing")]
    by_key = cells(s)
    assert len(by_key) == CELLS  # never absent
    for run in plan.runs:
        for c in run.cells:
            cell = by_key[(run.scenario, c.cell_id)]
            if c.shard == 2:
                assert cell["failure"] and "shard 2/2 is missing" in cell["failure"]
                assert set(cell["verdicts"].values()) == {"unknown"}, cell
                assert cell["trials"] == 0
            else:
                assert cell["failure"] is None and cell["trials"] > 0


def test_a_shard_that_died_keeps_what_it_recorded(nights):
    d = nights["d"]
    dead = d / "dead" / DATE
    shutil.copytree(d / "s2" / DATE, dead)
    (dead / "summary.json").unlink()  # as if SIGKILLed before the night ended
    p = chaos("merge", d / "s1" / DATE, dead, "--out", d / "died")
    assert p.returncode == 3, p.stdout[-2000:] + p.stderr[-2000:]
    assert "shard 2/2 failed" in p.stderr
    s, full = summary(d / "died" / DATE), summary(nights["one"])
    want = cells(full)
    plan = ShardPlan.model_validate_json((dead / "shard.json").read_text())
    on2 = {(r.scenario, c.cell_id) for r in plan.runs for c in r.cells if c.shard == 2}
    for r in s["runs"]:
        for c in r["cells"]:
            key = (r["scenario"], c["cell_id"])
            assert c["trials"] == want[key]["trials"]  # its trials are all there
            if key in on2:  # but the shard did not finish: nothing it ran can hold; a violation stays
                assert "did not finish" in c["failure"]
                assert {p: ("unknown" if v == "holds" else v) for p, v in want[key]["verdicts"].items()} == c["verdicts"]


def test_shards_that_were_planned_differently_are_refused(nights, tmp_path):
    d = nights["d"]
    other = tmp_path / DATE
    shutil.copytree(d / "s2" / DATE, other)
    plan = json.loads((other / "shard.json").read_text())
    plan["digest"] = "0" * 16
    (other / "shard.json").write_text(json.dumps(plan))
    p = chaos("merge", d / "s1" / DATE, other, "--out", tmp_path / "out")
    assert p.returncode == 3 and "planned differently" in p.stderr and len(p.stderr.strip().splitlines()) <= 2
    assert not (tmp_path / "out").exists()
    p = chaos("merge", nights["one"], "--out", tmp_path / "out")
    assert p.returncode == 3 and "not a shard folder" in p.stderr


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1/0", "-1/2"])
def test_a_bad_shard_value_is_one_line_and_exit_3(bad):
    with pytest.raises(ChaosError) as err:
        parse_shard(bad)
    assert bad in str(err.value) and "\n" not in str(err.value)


def test_bad_shard_on_the_command_line_exits_3_before_anything_runs(tmp_path):
    write_tiny_suite(tmp_path)
    for cmd in (["nightly", ROOT / "scenarios" / "nightly.yaml"], ["run", tmp_path / "sweep.yaml"]):
        p = chaos(*cmd, "--shard", "3/2", "--out", tmp_path / "out")
        assert p.returncode == 3 and "--shard '3/2'" in p.stderr, p.stderr
        assert not (tmp_path / "out").exists()


def test_every_cell_lands_on_exactly_one_shard_whatever_n():
    s = Scenario.model_validate(
        {
            "name": "m",
            "kind": "race",
            "workload": "gate_after_interrupt",
            "resume": "command:true",
            "matrix": {"k": [1, 2, 4, 8], "jitter_ms": [0, 5, 10]},
        }
    )
    for n in (1, 2, 3, 5, 16):
        (run,) = plan_runs([(s, "m.yaml", {})], n, {})
        assert sorted(c.index for c in run.cells) == list(range(12))
        assert {c.shard for c in run.cells} <= set(range(1, n + 1))
        assert plan_runs([(s, "m.yaml", {})], n, {}) == [run]  # the same plan every time


def test_recorded_timings_balance_the_shards():
    # one long cell and three short ones: the long one alone on a shard, the short ones together
    assert assign([("a", 1.0), ("b", 1.0), ("c", 30.0), ("d", 1.0)], 2) == {"c": 1, "a": 2, "b": 2, "d": 2}
    s = Scenario.model_validate(
        {"name": "m", "kind": "race", "workload": "gate_after_interrupt", "resume": "command:true", "matrix": {"k": [1, 2, 3]}}
    )
    (est,) = plan_runs([(s, "m.yaml", {})], 2, {})
    (rec,) = plan_runs([(s, "m.yaml", {})], 2, {"m": {"k=1": 100.0, "k=2": 1.0, "k=3": 1.0}})
    assert all(not c.recorded for c in est.cells) and all(c.recorded for c in rec.cells)
    assert [c.shard for c in rec.cells] == [1, 2, 2]


def _journal(path, trials: dict[int, list[str]]):
    from chaos.records import TrialRecord

    with open(path, "w") as f:
        for index, ids in trials.items():
            for tid in ids:
                rec = TrialRecord(
                    run_id="r", cell_index=index, cell_id=f"c{index}", trial_id=tid, seed=1, kind="race", thread_id="t",
                    valid=True, t_start_wall=0.0, wall_s=0.1,
                )  # fmt: skip
                f.write(rec.model_dump_json() + "\n")
    from chaos.running.stored import StoredTrials

    return StoredTrials(path)


def test_a_merge_counts_a_cell_lost_only_against_what_its_shard_judged(tmp_path):
    """Measured on nightly_full in two shards: the merge named 'lost trials' (exit 3) for cells whose
    kind runs fewer trials than the scenario's `trials` by design: shared_state stops once every
    schedule is explored (6 of 12), an upgrade cell's trials are points, a case the framework does
    not support runs none. A shard's own results.json says how many it judged; only a journal
    holding fewer than that lost any."""
    from chaos.running.merge import _lost
    from chaos.scenario.model import expand, parse_scenario

    cells = {
        c.index: c
        for c in expand(
            parse_scenario('name: x\nkind: race\nworkload: gate_after_interrupt\nresume: "command:true"\ntrials: 12\nmatrix: {k: [2, 3]}\n')
        )
    }
    records = _journal(tmp_path / "journal.jsonl", {0: [f"c000-t{i:04d}" for i in range(6)], 1: []})
    assert _lost({0, 1}, cells, records, {}, judged={0: 6, 1: 0}) == {}  # as many as the shard judged
    lost = _lost({0, 1}, cells, records, {}, judged={0: 7, 1: 0})
    assert set(lost) == {0} and "holds 6 of the 7 trials its results.json counted" in lost[0]
    # no results.json (a queue shard that died after its credits): a race cell's count is the scenario's
    assert set(_lost({0, 1}, cells, records, {}, judged=None)) == {0, 1}
    assert _lost({0, 1}, cells, records, {"0": "failed", "1": "failed"}, judged=None) == {}  # a failed cell says why itself

"""Story: the team's static shards end far apart (one wrong cost estimate), so they switch to queue
mode: every shard runs `chaos nightly --shard I/N --shard-queue DIR` on one shared folder and pulls
the next cell until none is left. Together they must run every cell exactly once and merge into
what one machine says; a shard SIGKILLed mid-cell must lose nothing: the survivor finishes its
cell; a queue folder that cannot be used, or one of another suite, is one line and exit 3.

Real LangGraph racers and real SIGKILLs on the tiny suite of ``tests/test_shard.py`` (four cells).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kits.robustkit import chaos, chaos_bg, one_line, wait_for
from kits.shardkit import CELLS, ROOT, SHARDS, seeds, summary, verdicts, write_tiny_suite

from chaos.running.cellqueue import CREDITS, QUEUE, CellQueue, seed_of
from chaos.running.shard import Shard, plan_suite
from chaos.scenario.suite import load_suite

DATE = "2026-01-04"
# one worker runs the shard files (tiny_full_night once); slow by hand: they start first without tests/durations.json
pytestmark = [pytest.mark.xdist_group(SHARDS), pytest.mark.slow]


def queue(folder: Path) -> dict:
    return json.loads((folder / QUEUE).read_text())


def credited(night: Path) -> list[tuple[str, int]]:
    path = night / CREDITS
    return [(c["scenario"], c["index"]) for c in map(json.loads, path.read_text().splitlines())] if path.exists() else []


def queue_lock_free(folder: Path) -> bool:
    """Nobody holds the queue's lock now (a shard stopped while holding it would stop the others)."""
    fd = os.open(folder / "queue.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def nights(tmp_path_factory, tiny_full_night):
    d = tmp_path_factory.mktemp("queue")
    write_tiny_suite(d)
    state = d / "state"
    shards = [
        chaos_bg(
            [
                "nightly",
                str(d / "suite.yaml"),
                "--out",
                str(d / f"s{i}"),
                "--date",
                DATE,
                "-q",
                "--shard",
                f"{i}/2",
                "--shard-queue",
                str(d / "q"),
            ],
            state,
        )
        for i in (1, 2)
    ]
    logs = [p.communicate(timeout=600) for p in shards]
    merged = chaos(["merge", str(d / "s1" / DATE), str(d / "s2" / DATE), "--out", str(d / "merged")], state, timeout=600)
    return {
        "d": d,
        "state": state,
        "full": tiny_full_night.proc,
        "one": tiny_full_night.night,
        "codes": [p.returncode for p in shards],
        "logs": logs,
        "merged": merged,
    }


def test_two_queue_shards_run_every_cell_once_and_merge_into_what_one_machine_says(nights):
    d, full, merged = nights["d"], nights["full"], nights["merged"]
    assert full.returncode in (0, 1, 2), full.stdout[-2000:] + full.stderr[-2000:]
    assert all(c in (0, 1, 2) for c in nights["codes"]), nights["logs"]
    # the queue: every cell done, each claimed once, by one shard or the other
    q = queue(d / "q")
    assert len(q["cells"]) == CELLS
    assert all(c["state"] == "done" and c["claims"] == 1 and not c["requeued_from"] for c in q["cells"])
    # each shard's own record of what it finished: together every cell, none twice
    parts = [credited(d / f"s{i}" / DATE) for i in (1, 2)]
    assert sorted(parts[0] + parts[1]) == sorted((c["scenario"], c["index"]) for c in q["cells"])
    assert not set(parts[0]) & set(parts[1])
    # merged, it says what one machine says: verdicts, exit code, and every trial with its seed
    assert merged.returncode == full.returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    one, joined = summary(nights["one"]), summary(d / "merged" / DATE)
    assert verdicts(joined) == verdicts(one)
    assert seeds(d / "merged" / DATE) == seeds(nights["one"]) != {}
    assert [(s["status"], s["cells"]) for s in joined["shards"]] == [("ok", len(parts[0])), ("ok", len(parts[1]))]


def test_a_shard_killed_mid_cell_has_that_cell_finished_by_the_other(nights, tmp_path):
    d, state = nights["d"], tmp_path / "state"
    q, out = tmp_path / "q", [tmp_path / "s1", tmp_path / "s2"]
    args = ["nightly", str(d / "suite.yaml"), "--date", DATE, "-q", "--shard-queue", str(q)]
    a = chaos_bg([*args, "--out", str(out[0]), "--shard", "1/2"], state)
    b = None
    try:

        def held_mid_cell():
            """Shard 1's claim, once it has journaled a trial of that cell but not finished it;
            checked with shard 1 stopped, so what is read is what it holds when killed."""
            if not (q / QUEUE).exists():
                return None
            claim = next((c for c in queue(q)["cells"] if c["state"] == "claimed" and c["shard"] == "1/2"), None)
            journal = next(out[0].glob(f"{DATE}/{claim['scenario']}/2*/journal.jsonl"), None) if claim else None
            if journal is None or not any(json.loads(x)["cell_index"] == claim["index"] for x in journal.read_text().splitlines()):
                return None
            os.kill(claim["pid"], signal.SIGSTOP)  # found through its claim: the pid it recorded
            now = next((c for c in queue(q)["cells"] if c["state"] == "claimed" and c["shard"] == "1/2"), None)
            finishing = (claim["scenario"], claim["index"]) in credited(out[0] / DATE)
            if now == claim and not finishing and queue_lock_free(q):
                return now
            os.kill(claim["pid"], signal.SIGCONT)  # it was finishing that cell as we looked (or held the queue): look again
            return None

        claim = wait_for(held_mid_cell, 300, "shard 1 in the middle of a cell")
        assert claim["pid"] == a.pid and claim["host"]
        done_by_a = len(credited(out[0] / DATE))
        # shard 2 runs every other cell, then waits for the cell shard 1 still holds
        b = chaos_bg([*args, "--out", str(out[1]), "--shard", "2/2"], state)
        wait_for(lambda: len(credited(out[1] / DATE)) == CELLS - done_by_a - 1, 300, "shard 2 to run every other cell")
        assert b.poll() is None, "shard 2 ended while shard 1 still held a cell"
        os.kill(claim["pid"], signal.SIGKILL)
        a.wait(timeout=30)
        b_out, b_err = b.communicate(timeout=600)
    finally:
        for p in (a, b):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    assert a.returncode == -signal.SIGKILL
    assert b.returncode in (0, 1, 2), b_out[-2000:] + b_err[-2000:]
    cells = {(c["scenario"], c["index"]): c for c in queue(q)["cells"]}
    killed_in = cells[(claim["scenario"], claim["index"])]
    assert killed_in["state"] == "done" and killed_in["shard"] == "2/2" and killed_in["claims"] == 2
    assert killed_in["requeued_from"] == [claim["worker"]]
    assert all(c["state"] == "done" for c in cells.values())
    parts = [credited(o / DATE) for o in out]
    assert sorted(parts[0] + parts[1]) == sorted(cells) and (claim["scenario"], claim["index"]) in parts[1]

    merged = chaos(["merge", str(out[0] / DATE), str(out[1] / DATE), "--out", str(tmp_path / "merged")], state, timeout=600)
    full = nights["full"]
    assert merged.returncode == full.returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    joined = summary(tmp_path / "merged" / DATE)
    assert verdicts(joined) == verdicts(summary(nights["one"]))
    assert seeds(tmp_path / "merged" / DATE) == seeds(nights["one"])  # shard 1's cut-off trials left out
    assert [s["status"] for s in joined["shards"]] == ["failed", "ok"]
    assert "went back to the queue" in joined["shards"][0]["reason"]
    # what the dead shard left (its racers, its registry entry) is reaped as after any SIGKILLed run
    clean = chaos(["clean"], state)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert not list((state / "active").glob("*.json"))


@pytest.fixture
def pg_queue(pg_dsn):
    """The Postgres queue of the tiny suite's night: none before the test, none left after it."""
    import psycopg

    def drop():
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS chaos_shard_queue (night text PRIMARY KEY, body text NOT NULL)")
            conn.execute("DELETE FROM chaos_shard_queue WHERE night LIKE 'tiny/%'")

    drop()
    yield pg_dsn
    drop()


def pg_cells(dsn: str, night: str) -> list[dict]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT body FROM chaos_shard_queue WHERE night = %s", (night,)).fetchone()
    return json.loads(row[0])["cells"]


@pytest.mark.parametrize("where", ["folder", "postgres"])
def test_a_live_shards_claim_is_never_taken_and_a_dead_ones_is(tmp_path, where, request):
    """The rule, with no chaos run around it: a claim is re-queued only once its claimer's process
    is gone (its liveness lock free), never because of how long it has held it."""
    d = tmp_path
    write_tiny_suite(d)
    spec = str(d / "q") if where == "folder" else request.getfixturevalue("pg_queue")
    plan = plan_suite(load_suite(d / "suite.yaml"), Shard(index=1, of=2), DATE, None, queue=str(d / "q"))

    def cells() -> list[dict]:
        return queue(d / "q")["cells"] if where == "folder" else pg_cells(spec, f"tiny/{DATE}")

    code = (
        "import sys; from pathlib import Path; from chaos.running.cellqueue import CellQueue, QueueFile\n"
        "q = CellQueue(sys.argv[1], '1/2', QueueFile.model_validate_json(sys.argv[2]), Path(sys.argv[3])); q.join()\n"
        "print(q.claim('tiny_stray'), q.claim('tiny_stray'), flush=True); sys.stdin.read()\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code, spec, seed_of(plan).model_dump_json(), str(d)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    me = CellQueue(spec, "2/2", seed_of(plan), d)
    try:
        assert other.stdout is not None
        held = sorted(map(int, other.stdout.readline().split()))
        assert held == [0, 1]  # both cells of tiny_stray
        me.join()
        assert me.claim("tiny_stray") is None  # held by a live shard, however long
        assert me.next_step(set()) == ("run", "tiny_sweep")
        (worker,) = {c["worker"] for c in cells() if c["state"] == "claimed"}
        assert me.next_step({"tiny_sweep"}) == ("wait", worker)  # nothing else to run: wait for the live claimer
        other.kill()
        other.wait()
        me.wait_for(worker)  # as a shard does: woken when the lock goes (Postgres: when the server ends the dead session)
        assert sorted([me.claim("tiny_stray"), me.claim("tiny_stray")]) == [0, 1]  # type: ignore[type-var]
        assert all(c["claims"] == 2 for c in cells() if c["scenario"] == "tiny_stray")
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
        me.close()
    assert all(c["state"] == "pending" for c in cells()), "a leaving shard gives back what it did not finish"


def test_two_shards_that_share_no_folder_pull_from_a_postgres_queue(nights, pg_queue, tmp_path):
    d, state = nights["d"], tmp_path / "state"
    args = ["nightly", str(d / "suite.yaml"), "--date", DATE, "-q", "--shard-queue", pg_queue]
    shards = [chaos_bg([*args, "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2"], state) for i in (1, 2)]
    logs = [p.communicate(timeout=600) for p in shards]
    assert all(p.returncode in (0, 1, 2) for p in shards), logs
    cells = pg_cells(pg_queue, f"tiny/{DATE}")
    assert len(cells) == CELLS and all(c["state"] == "done" and c["claims"] == 1 for c in cells)
    plan = json.loads((tmp_path / "s1" / DATE / "shard.json").read_text())
    assert plan["mode"] == "queue" and "***" in plan["queue"] and "chaos:chaos@" not in plan["queue"]  # the password is not kept
    merged = chaos(["merge", str(tmp_path / "s1" / DATE), str(tmp_path / "s2" / DATE), "--out", str(tmp_path / "m")], state)
    assert merged.returncode == nights["full"].returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    assert verdicts(summary(tmp_path / "m" / DATE)) == verdicts(summary(nights["one"]))
    assert seeds(tmp_path / "m" / DATE) == seeds(nights["one"])


def test_a_queue_folder_that_cannot_be_used_is_one_line_and_exit_3(tmp_path):
    write_tiny_suite(tmp_path)
    not_a_folder = tmp_path / "q"
    not_a_folder.write_text("a file where the queue folder should be\n")
    res = chaos(
        ["nightly", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--shard", "1/2", "--shard-queue", str(not_a_folder)],
        tmp_path / "state",
    )
    assert res.returncode == 3, res.stdout + res.stderr
    assert str(not_a_folder) in one_line(res.stderr.split("hint:")[0]) and "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists(), "a refused shard left a night folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder; the not-a-folder case above covers root")
def test_a_read_only_queue_folder_is_one_line_and_exit_3(tmp_path):
    write_tiny_suite(tmp_path)
    ro = tmp_path / "q"
    ro.mkdir(mode=0o555)
    try:
        args = ["nightly", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--shard", "1/2", "--shard-queue", str(ro)]
        res = chaos(args, tmp_path / "state")
    finally:
        ro.chmod(0o755)
    assert res.returncode == 3 and str(ro) in one_line(res.stderr.split("hint:")[0]), res.stdout + res.stderr


def test_a_queue_seeded_from_another_suite_is_refused_naming_the_folder(tmp_path):
    write_tiny_suite(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text("name: other\nscenarios:\n  - file: sweep.yaml\n")
    plan = plan_suite(load_suite(other), Shard(index=1, of=2), DATE, None, queue=str(tmp_path / "q"))
    seeded = CellQueue(tmp_path / "q", "1/2", seed_of(plan), tmp_path)
    seeded.join()
    seeded.close()
    args = ["nightly", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--shard", "2/2", "--shard-queue", str(tmp_path / "q")]
    res = chaos([*args, "--date", DATE, "-q"], tmp_path / "state")
    assert res.returncode == 3, res.stdout + res.stderr
    line = one_line(res.stderr.split("hint:")[0])
    assert str(tmp_path / "q") in line and "'other'" in line and "'tiny'" in line
    assert not (tmp_path / "out").exists()
    # last night's queue folder, reused by mistake, is another night's: refused too
    plan = plan_suite(load_suite(tmp_path / "suite.yaml"), Shard(index=1, of=2), "2026-01-05", None, queue=str(tmp_path / "q2"))
    seeded = CellQueue(tmp_path / "q2", "1/2", seed_of(plan), tmp_path)
    seeded.join()
    seeded.close()
    res = chaos([*args[:-1], str(tmp_path / "q2"), "--date", DATE, "-q"], tmp_path / "state")
    assert res.returncode == 3 and "night 2026-01-05" in res.stderr, res.stdout + res.stderr


def test_shard_queue_without_a_shard_number_is_refused(tmp_path):
    write_tiny_suite(tmp_path)
    res = chaos(
        ["nightly", str(tmp_path / "suite.yaml"), "--out", str(tmp_path / "out"), "--shard-queue", str(tmp_path / "q")], tmp_path / "s"
    )
    assert res.returncode == 3 and "--shard I/N" in res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "q").exists()


def test_a_queue_shards_night_is_not_resumed_its_cells_went_back_to_the_queue(nights):
    res = chaos(["nightly", "--resume", str(nights["d"] / "s1" / DATE), "-q"], nights["state"])
    assert res.returncode == 3 and "queue" in res.stderr and "Traceback" not in res.stderr, res.stdout + res.stderr

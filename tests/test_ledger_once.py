"""The idempotent effect (``ctx.effect_once``): a second attempt with the same key adds no row,
even when racers try at the same moment; a different key (another trial, another value) does."""

from __future__ import annotations

import threading

from chaos.racer.ledger import SqliteLedger


def _ledger(path, trial="t0", racer="r0"):
    return SqliteLedger(str(path), {"run_id": "run", "cell_id": "c", "trial_id": trial, "racer_id": racer, "host": "h"})


def test_append_once_is_idempotent_per_key(tmp_path):
    db = tmp_path / "ledger.sqlite"
    a = _ledger(db)
    seq, inserted = a.append_once(task="b", value=None, thread_id="th")
    assert inserted
    assert a.append_once(task="b", value=None, thread_id="th") == (seq, False)
    assert a.append_once(task="b", value="v2", thread_id="th")[1]  # another key
    assert _ledger(db, trial="t1").append_once(task="b", value=None, thread_id="th")[1]  # another trial
    assert [r["effect_key"] for r in a.rows(run_id="run", trial_id="t0")] == ["b", "b:v2"]


def test_concurrent_attempts_insert_once(tmp_path):
    db = tmp_path / "ledger.sqlite"
    _ledger(db).close()
    n = 8
    start = threading.Barrier(n)
    results = []

    def attempt(i):
        led = _ledger(db, racer=f"r{i}")  # one connection per racer, as in racer processes
        start.wait()
        results.append(led.append_once(task="gate", value="True", thread_id="th")[1])
        led.close()

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [False] * (n - 1) + [True]
    assert len(_ledger(db).rows(run_id="run", trial_id="t0")) == 1

"""A team points chaos at its own LangGraph graph (an approval subgraph reached by
``Command(goto=...)``, two approvals) and gets answers about *its* nodes: which node and subgraph
fired each effect, what the durable frontier is inside the subgraph, which interrupt a replayed
answer addresses, and an answer for every approval."""

from __future__ import annotations

import secrets
import sqlite3

from kits.graphkit import GraphThread

from chaos.racer.ledger import COLUMNS, SqliteLedger, open_ledger
from chaos.running.resume import set_aside_unjournaled

APPROVALS = "tests.workloads.graph_workloads:approvals"
ANSWER = {"op": "resume", "form": "command"}


def test_each_effect_names_the_node_and_subgraph_that_fired_it(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    t.racer("a", [{"op": "run"}, {**ANSWER, "value": "ok"}])
    rows = {r["effect_key"]: r for r in t.ledger()}
    pay = rows["send_payment:ok"]
    assert (pay["node"], pay["namespace"], pay["outside_task"]) == ("interrupt_handler", "response_agent", 0)
    assert pay["task_id"]  # LangGraph's id of the task that ran


def test_an_effect_fired_from_a_thread_the_node_started_is_marked_outside_any_task(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    t.racer("a", [{"op": "run"}])
    (audit,) = t.ledger()
    assert audit["effect_key"] == "audit"
    assert (audit["node"], audit["namespace"], audit["outside_task"]) == (None, None, 1)


def test_a_fact_the_workload_observes_is_reported_but_is_not_an_effect(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    result = t.racer("a", [{"op": "run"}])
    (run,) = result["outcomes"]
    (fact,) = run["facts"]
    assert (fact["name"], fact["value"], fact["node"], fact["namespace"]) == ("triage ran", "thread-1", "triage", "")
    assert [r["effect_key"] for r in t.ledger()] == ["audit"]  # the fact is in no ledger row
    # the workload knew its trial and wrote into the trial's scratch folder
    assert (tmp_path / "scratch" / "triage.txt").read_text() == "t0"


def test_inspect_reports_the_durable_frontier_inside_the_subgraph(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    t.racer("a", [{"op": "run"}, {**ANSWER, "value": "ok"}])
    seen = t.racer("b", [{"op": "inspect"}])["outcomes"][0]["inspect"]
    assert seen["completed_tasks"] == ["triage"]  # the root graph: response_agent has not returned
    assert seen["completed_by_namespace"] == {"": ["triage"], "response_agent": ["interrupt_handler"]}
    assert seen["durable_checkpoints"] > seen["checkpoints"]  # the subgraph's checkpoints count too


def test_a_replayed_answer_by_id_addresses_the_interrupt_the_first_answer_consumed(tmp_path):
    """Both approvals sit in the subgraph under one parent checkpoint, whose record of the
    subgraph's interrupt LangGraph replaces by the live one: "first" must not be read from it."""
    t = GraphThread(tmp_path, APPROVALS)
    first = t.racer("a", [{"op": "run"}, {**ANSWER, "value": "ok"}])["outcomes"]
    consumed, live = first[0]["interrupt_ids"][0], first[1]["interrupt_ids"][0]
    assert consumed != live
    replay = t.racer("b", [{**ANSWER, "value": "ok", "interrupt": "first"}])["outcomes"][0]
    assert replay["addressed"] == consumed


def test_an_answer_plan_answers_every_approval_in_order(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    out = t.racer("a", [{"op": "run"}, {**ANSWER, "answers": ["ok", "send"]}])["outcomes"][-1]
    assert out["status"] == "done"
    assert [v for _id, v in out["answered"]] == ["ok", "send"]
    assert [r["effect_key"] for r in t.ledger()] == ["audit", "send_payment:ok", "send_email:send"]


def test_an_answer_plan_picks_up_in_a_fresh_process_where_the_thread_is(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    t.racer("a", [{"op": "run"}, {**ANSWER, "answers": ["ok"]}])  # the plan ends after one answer
    out = t.racer("b", [{**ANSWER, "answers": ["ok", "send"]}])["outcomes"][-1]
    assert [v for _id, v in out["answered"]] == ["send"]  # the payment was answered: the e-mail is next
    assert [r["effect_key"] for r in t.ledger()] == ["audit", "send_payment:ok", "send_email:send"]


def test_the_workloads_answer_callable_answers_each_interrupt_by_its_payload(tmp_path):
    t = GraphThread(tmp_path, APPROVALS)
    out = t.racer("a", [{"op": "run"}, {**ANSWER, "answers": "workload"}])["outcomes"][-1]
    assert out["status"] == "done"
    assert [r["effect_key"] for r in t.ledger()] == ["audit", "send_payment:pay", "send_email:mail"]


def _old_ledger(path, *tables: str) -> None:
    """A ledger as chaos wrote it before the attribution columns, one row in ``effects``."""
    conn = sqlite3.connect(path)
    for table in tables:
        conn.execute(
            f"CREATE TABLE {table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, cell_id TEXT NOT NULL,"
            " trial_id TEXT NOT NULL, thread_id TEXT NOT NULL, effect_key TEXT NOT NULL, task TEXT NOT NULL, value TEXT,"
            " racer_id TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, t_wall REAL NOT NULL, t_mono_ns INTEGER NOT NULL)"
        )
    conn.execute("INSERT INTO effects VALUES (1, 'r', 'c', 't', 'th', 'a', 'a', NULL, 'x', 'h', 1, 0, 0)")
    conn.commit()
    conn.close()


def test_a_ledger_written_before_attribution_is_read_with_empty_attribution(tmp_path):
    path = tmp_path / "old.sqlite"
    _old_ledger(path, "effects")
    ledger = SqliteLedger(str(path), {"run_id": "r", "trial_id": "t"})
    ledger.append(task="b", value=None, thread_id="th", where={"node": "b", "namespace": "", "outside_task": False})
    old, new = ledger.rows(run_id="r")
    ledger.close()
    assert set(old) == set(COLUMNS)
    assert (old["effect_key"], old["node"], old["outside_task"]) == ("a", None, None)
    assert (new["effect_key"], new["node"], new["namespace"], new["outside_task"]) == ("b", "b", "", 0)


def test_durability_default_runs_the_graph_with_langgraphs_own_mode(tmp_path):
    """``durability: default`` passes none: LangGraph's default; the plan still reaches the end."""
    t = GraphThread(tmp_path, APPROVALS, durability="default")
    out = t.racer("a", [{"op": "run"}, {**ANSWER, "answers": ["ok", "send"]}])["outcomes"][-1]
    assert out["status"] == "done"
    assert [r["effect_key"] for r in t.ledger()] == ["audit", "send_payment:ok", "send_email:send"]


def test_resuming_a_run_whose_ledger_predates_attribution_sets_its_rows_aside(tmp_path):
    path = tmp_path / "ledger.sqlite"
    _old_ledger(path, "effects", "effects_aborted")
    SqliteLedger(str(path), {"run_id": "r"}).close()  # a racer of the resumed run opens it: effects gains the columns
    assert set_aside_unjournaled(path, "r", journaled=set()) == 1
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT effect_key, node FROM effects_aborted").fetchall() == [("a", None)]
    conn.close()


def test_a_postgres_ledger_table_made_before_attribution_gains_its_columns(pg_dsn):
    import psycopg

    table = f"chaos_effects_old{secrets.token_hex(3)}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE {table} (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id TEXT NOT NULL,"
            " cell_id TEXT NOT NULL, trial_id TEXT NOT NULL, thread_id TEXT NOT NULL, effect_key TEXT NOT NULL,"
            " task TEXT NOT NULL, value TEXT, racer_id TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
            " t_wall DOUBLE PRECISION NOT NULL, t_mono_ns BIGINT NOT NULL)"
        )
        conn.execute(
            f"INSERT INTO {table} (run_id, cell_id, trial_id, thread_id, effect_key, task, racer_id, host, pid, t_wall,"
            " t_mono_ns) VALUES ('R', 'c', 't', 'th', 'a', 'a', 'x', 'h', 1, 0, 0)"
        )
    ledger = open_ledger({"kind": "postgres", "dsn": pg_dsn, "table": table}, {"run_id": "R", "trial_id": "t"})
    try:
        ledger.append(task="b", value=None, thread_id="th", where={"node": "b", "namespace": "sub", "outside_task": False})
        old, new = ledger.rows(run_id="R")
    finally:
        ledger.close()
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {table}")
    assert (old["effect_key"], old["node"], old["outside_task"]) == ("a", None, None)
    assert (new["node"], new["namespace"], new["outside_task"]) == ("b", "sub", 0)

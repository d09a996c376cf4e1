"""One real racer process over a LangGraph workload, driven from a test as the orchestrator would.

``GraphThread`` is one trial's folder (store, ledger, barriers): ``racer(id, actions)`` writes a
racer spec, runs ``python -m chaos.racer.main`` on it in a fresh process and returns its result;
``ledger()`` reads the effect rows. No barrier is armed, so nothing waits: each racer runs to its end.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


class GraphThread:
    def __init__(self, tmp: Path, workload: str, backend: str = "sqlite", durability: str = "sync"):
        self.tmp, self.workload, self.backend, self.durability = tmp, workload, backend, durability

    def racer(self, racer_id: str, actions: list[dict], **extra: Any) -> dict:
        spec = {
            "run_id": "run",
            "cell_id": "cell",
            "trial_id": "t0",
            "racer_id": racer_id,
            "target": {"framework": "langgraph", "backend": self.backend, "durability": self.durability},
            "distributions": [],
            "workload": self.workload,
            "workload_params": {},
            "thread_id": "thread-1",
            "store": {"path": str(self.tmp / "store.sqlite")},
            "ledger": {"kind": "sqlite", "path": str(self.tmp / "ledger.sqlite")},
            "barrier": {"dir": str(self.tmp / "barriers"), "armed": []},
            "actions": actions,
            "result_path": str(self.tmp / f"result-{racer_id}.json"),
            **extra,
        }
        path = self.tmp / f"spec-{racer_id}.json"
        path.write_text(json.dumps(spec))
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.run([sys.executable, "-m", "chaos.racer.main", str(path)], env=env, capture_output=True, timeout=120)
        result = json.loads((self.tmp / f"result-{racer_id}.json").read_text())
        assert proc.returncode == 0, (proc.stderr.decode()[-2000:], result.get("error"))
        return result

    def ledger(self) -> list[dict]:
        conn = sqlite3.connect(self.tmp / "ledger.sqlite")
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute("SELECT * FROM effects ORDER BY seq")]
        finally:
            conn.close()

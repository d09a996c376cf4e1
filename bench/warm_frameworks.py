"""Per framework: what a warm racer costs next to a cold one, and what the fork server's start costs.

Usage: ``python bench/warm_frameworks.py [--racers 8] [framework ...]``

For each framework, in its own racer environment (``chaos.envs.python_for``):

* server start: wall seconds from launching ``python -m chaos.racer.forkserver --target X`` to its
  ``ready`` event, and the ``import_s`` it reports (imports + prewarm), with the modules preloaded;
* warm racer: wall ms from asking the server for a racer to seeing its exit, for a racer that runs
  the built-in ``three_step`` to the end with nothing armed (median and min over ``--racers``);
  and the racer's own phases (setup = ledger + session; action = the run);
* cold racer: the same racer as a fresh ``python -m chaos.racer.main`` (median of 3).

Numbers only, no assertion; quote them with the load average printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypeGuard

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chaos.envs import python_for, racer_env
from chaos.launchers.warm.client import WarmLauncher
from chaos.racer.ledger import SqliteLedger
from chaos.running.trial import wait_until

BACKENDS = {
    "langgraph": "sqlite",
    "crewai": "sqlite",
    "llamaindex": "file",
    "pydantic_graph": "file",
    "autogen": "file",
    "openai_agents": "sqlite_session",
}


def racer_spec(fw: str, d: Path, i: int) -> dict:
    (d / "barriers").mkdir(parents=True, exist_ok=True)
    return {
        "run_id": "bench",
        "cell_id": "bench",
        "trial_id": f"t{i}",
        "racer_id": f"r{i}",
        "target": {"framework": fw, "backend": BACKENDS[fw], "durability": "sync", "version": None},
        "workload": "three_step",
        "workload_params": {},
        "thread_id": f"bench-{fw}-{i}",
        "store": {"path": str(d / f"checkpoints-{i}.sqlite")},
        "ledger": {"kind": "sqlite", "path": str(d / "ledger.sqlite")},
        "barrier": {"dir": str(d / "barriers"), "armed": []},
        "actions": [{"op": "run"}],
        "result_path": str(d / f"result-{i}.json"),
        "distributions": [],
    }


def done(result: dict | None) -> TypeGuard[dict]:
    if not result:
        return False
    return (result.get("outcomes") or [{}])[-1].get("status") == "done"


def measure(fw: str, n: int, base: Path) -> dict:
    python = python_for(fw)
    env = racer_env(python)
    d = base / fw
    d.mkdir(parents=True)
    SqliteLedger(str(d / "ledger.sqlite")).close()
    out: dict = {"framework": fw}
    launcher = WarmLauncher(python=python, env=env, log_dir=d)
    try:
        t = time.monotonic()
        client = launcher.server(fw, str(d / "x"))
        out["server_start_s"] = time.monotonic() - t
        out["server_import_s"] = client.ready.get("import_s")
        out["preloaded"] = len(client.ready.get("preloaded") or [])
        walls, setups, actions = [], [], []
        for i in range(n):
            s = racer_spec(fw, d, i)
            t = time.monotonic()
            (h,) = launcher.start_group([s], str(d))
            wait_until(lambda: h.state() == "exited", 300, launcher.wait_change)  # noqa: B023  (called before the loop moves on)
            walls.append((time.monotonic() - t) * 1000)
            r = h.result()
            if not done(r):
                raise SystemExit(f"{fw}: the warm racer did not finish three_step: {h.log_tail()}")
            setups.append((r["t_ready_mono_ns"] - r["t_start_mono_ns"]) / 1e6)
            actions.append((r["t_return_mono_ns"] - r["t_invoke_mono_ns"]) / 1e6)
        out.update(
            warm_ms=statistics.median(walls),
            warm_min_ms=min(walls),
            setup_ms=statistics.median(setups),
            action_ms=statistics.median(actions),
        )
    finally:
        launcher.reap()
    colds = []
    for i in range(n, n + 3):
        s = racer_spec(fw, d, i)
        (d / f"spec-{i}.json").write_text(json.dumps(s))
        t = time.monotonic()
        subprocess.run([python, "-m", "chaos.racer.main", str(d / f"spec-{i}.json")], env=env, check=True, capture_output=True)
        colds.append((time.monotonic() - t) * 1000)
        if not done(json.loads(Path(s["result_path"]).read_text())):
            raise SystemExit(f"{fw}: the cold racer did not finish three_step")
    out["cold_ms"] = statistics.median(colds)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--racers", type=int, default=8)
    ap.add_argument("frameworks", nargs="*", default=list(BACKENDS))
    args = ap.parse_args()
    import chaos

    print(f"warm vs cold racers per framework: load average {os.getloadavg()}, chaos from {Path(chaos.__file__).parent}")
    print(
        f"{'framework':<15} {'server start s':>14} {'(import s)':>10} {'warm racer ms':>14} {'(min)':>7} "
        f"{'setup ms':>9} {'action ms':>10} {'cold racer ms':>14} {'cold/warm':>10}"
    )
    with tempfile.TemporaryDirectory(prefix="chaos-bench-warmfw-") as tmp:
        for fw in args.frameworks:
            r = measure(fw, args.racers, Path(tmp))
            print(
                f"{fw:<15} {r['server_start_s']:>14.2f} {r['server_import_s']:>10.2f} {r['warm_ms']:>14.1f} {r['warm_min_ms']:>7.1f} "
                f"{r['setup_ms']:>9.1f} {r['action_ms']:>10.1f} {r['cold_ms']:>14.0f} {r['cold_ms'] / r['warm_ms']:>9.1f}x",
                flush=True,
            )
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""The Agent Server inside a racer: the whole server process as a sweep's victim (racer side).

Why: a kill sweep stops the victim at a persistence boundary and SIGKILLs it. Behind the Agent
Server the boundaries are the server's (its worker's checkpoint writes, the graph's effects), so
the victim must be the server process. Here the racer process IS the server: it runs
``langgraph_api.cli.run_server`` (what ``langgraph dev --no-reload`` runs: uvicorn serving
``langgraph_api.server:app`` over the in-memory runtime) on a thread, in the trial's server folder
(``.langgraph_api/`` is relative to the working directory), and drives it through langgraph-sdk
like any client. The barrier's SIGSTOP stops the whole process, so the orchestrator's SIGKILL at a
boundary kills the server exactly there; the recovery racer starts the server again on the same
folder and reads the thread back through the API.

What it promises: ``start(folder, graphs, barrier, ledger)`` returns the URL once ``/ok`` answers;
from then on every checkpoint write of the runtime's saver (``InMemorySaver.put`` / ``put_writes``)
passes ``barrier.hit`` before and after, named as the in-process LangGraph adapter names them
(``put(step=N,source=S)``, ``put_writes(node=X,channels=...)``), and every effect of a deployed
built-in appends to the racer's own ledger and passes ``effect(task=X):after``
(``chaos.targets.langgraph_server.app`` reads ``BARRIER`` / ``LEDGER`` here). One server per
process: the hooks are process-wide.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger
from chaos.targets.base import error_of

BARRIER: BarrierClient | None = None
LEDGER: Ledger | None = None
READY_TIMEOUT_S = 90.0


def _patch_saver(barrier: BarrierClient) -> None:
    """Barriers around the in-memory runtime's checkpoint writes (its ``aput`` / ``aput_writes`` call these)."""
    from langgraph_runtime_inmem.checkpoint import InMemorySaver

    from chaos.targets.langgraph.saver_boundaries import put_name, writes_name

    if getattr(InMemorySaver, "_chaos_patched", False):
        return
    put, put_writes = InMemorySaver.put, InMemorySaver.put_writes

    def passed(name: str, call: Any) -> Any:
        barrier.hit(name + ":before")
        try:
            out = call()
        except BaseException as exc:
            barrier.failed(name, error_of(exc))
            raise
        barrier.hit(name + ":after")
        return out

    def chaos_put(self: Any, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return passed(put_name(metadata), lambda: put(self, config, checkpoint, metadata, new_versions))

    def chaos_put_writes(self: Any, config: Any, writes: Any, task_id: Any, task_path: str = "") -> Any:
        return passed(writes_name(writes, task_path), lambda: put_writes(self, config, writes, task_id, task_path))

    InMemorySaver.put = chaos_put
    InMemorySaver.put_writes = chaos_put_writes
    InMemorySaver._chaos_patched = True


def start(
    folder: Path,
    graphs: dict[str, str],
    barrier: BarrierClient,
    ledger: Ledger,
    *,
    paths: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> str:
    """Serve ``graphs`` from this process, in ``folder``; the URL once it answers. ``paths`` go on
    ``sys.path`` (a team's langgraph.json folder and local dependencies) and ``env`` into the
    server's environment, as ``langgraph dev`` does with the file's ``dependencies`` and ``env``."""
    global BARRIER, LEDGER
    from langgraph_api.cli import run_server

    from chaos.targets.langgraph_server.offline import OFFLINE_ENV, free_port

    folder.mkdir(parents=True, exist_ok=True)
    sys.path.extend(p for p in paths if p not in sys.path)
    os.environ.update(env or {})
    os.chdir(folder)
    os.environ.update(OFFLINE_ENV)
    BARRIER, LEDGER = barrier, ledger
    _patch_saver(barrier)
    port = free_port()
    failed: list[BaseException] = []

    def serve() -> None:
        try:
            # allow_blocking: an armed barrier writes its arrival file from the server's event loop, which
            # the server's blocking-call detector (blockbuster) would turn into a BlockingError; it only
            # switches that detector off (``langgraph dev --allow-blocking``), nothing the runs do
            run_server(
                host="127.0.0.1", port=port, reload=False, graphs=graphs, open_browser=False, server_level="ERROR", allow_blocking=True
            )
        except BaseException as exc:  # reported by the wait below
            failed.append(exc)

    threading.Thread(target=serve, name="agent-server", daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if failed:
            raise RuntimeError(f"the in-process Agent Server did not start: {type(failed[0]).__name__}: {failed[0]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as r:
                if r.status == 200:
                    return url
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.02)  # the port opens when uvicorn is up: nothing to wait on but the port
    raise RuntimeError(f"the in-process Agent Server did not answer /ok within {READY_TIMEOUT_S:.0f} s")

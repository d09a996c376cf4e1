"""Helpers for the robustness tests: run the real CLI as a user would, observe files and /proc.

Every chaos process started here gets its own ``CHAOS_STATE_DIR`` (run registry), so these tests
never see, or reap, the runs of anyone else sharing the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def chaos_env(state_dir: Path) -> dict:
    env = dict(os.environ)
    env["CHAOS_STATE_DIR"] = str(state_dir)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("CHAOS_RUN_ID", None)
    env.pop("CHAOS_RUN_REGISTRY", None)
    return env


def chaos(args: list[str], state_dir: Path, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m chaos ARGS`` from the repository root, as a user runs it (``env``: variables set on top)."""
    return subprocess.run(
        [sys.executable, "-m", "chaos", *args],
        cwd=ROOT,
        env={**chaos_env(state_dir), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def chaos_bg(args: list[str], state_dir: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "chaos", *args],
        cwd=ROOT,
        env={**chaos_env(state_dir), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def wait_for(pred, timeout: float, what: str):
    """Observe ``pred`` until it returns something truthy (returned); fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


def journal_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def one_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{text}"
    return lines[0]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie or a dead process is not alive), read from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def docker_containers(run_id: str) -> list | None:
    """Containers labelled with the run, or None when no Docker engine answers here."""
    try:
        import docker

        client = docker.from_env(timeout=5)
        return client.containers.list(all=True, filters={"label": f"chaos.run={run_id}"})
    except Exception:
        return None

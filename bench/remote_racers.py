"""Benchmark: race trials in Docker and on SSH hosts, cold racers vs warm racers.

Prints, per placement and mode, the median wall time of a race trial at k racers (first trial
apart: for warm racers it includes starting the fork server), the fires, and the load average at
start and end. Docker: the offline racer image, SQLite files bind-mounted. SSH: the netns lab of
``tests/kits/lab.py`` (two hosts, real sshd; needs root), Postgres ledger and checkpoints
(``CHAOS_PG_DSN``). Numbers, not assertions: see bench/README.md.

    python bench/remote_racers.py --placements docker,ssh --k 4 --trials 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kits.racekit import new_run_id  # noqa: E402
from kits.warmkit import race_records  # noqa: E402

from chaos.running import pgstore  # noqa: E402


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def row(placement: str, mode: str, recs: list, total_s: float) -> None:
    walls = [r.wall_s for r in recs]
    rest = walls[1:] or walls
    fires = [r.observations.get("fires") for r in recs]
    bad = [r.invalid_reason for r in recs if not r.valid]
    print(
        f"{placement:7} {mode:5} trials {len(recs):3}  first {walls[0] * 1000:8.0f} ms  median(rest) "
        f"{statistics.median(rest) * 1000:7.0f} ms  total {total_s:6.1f} s  fires {fires}" + (f"  INVALID {bad}" if bad else ""),
        flush=True,
    )


def docker_case(mode: str, k: int, trials: int, base: Path) -> None:
    from chaos.launchers.docker import DockerLauncher
    from chaos.launchers.warm.docker import DockerWarmLauncher

    run_id = new_run_id()
    launcher = (DockerWarmLauncher if mode == "warm" else DockerLauncher)(run_id)
    t0 = time.monotonic()
    recs = race_records(base / f"docker-{mode}", launcher, k, trials, placement="docker", run_id=run_id)
    row("docker", mode, recs, time.monotonic() - t0)


def ssh_case(lab, mode: str, k: int, trials: int, base: Path) -> None:
    from chaos.launchers.ssh import SshLauncher
    from chaos.launchers.warm.ssh import SshWarmLauncher

    dsn = lab.pg_dsn(os.environ.get("CHAOS_PG_DSN", "postgresql://chaos:chaos@127.0.0.1:5432/chaos"))
    run_id = new_run_id()
    pgstore.create_run_schema(dsn, run_id)
    try:
        launcher = (SshWarmLauncher if mode == "warm" else SshLauncher)(
            run_id, hosts=[h.name for h in lab.hosts], inventory=str(lab.inventory())
        )
        t0 = time.monotonic()
        recs = race_records(
            base / f"ssh-{mode}",
            launcher,
            k,
            trials,
            backend="postgres",
            run_id=run_id,
            ledger_config={"kind": "postgres", "dsn": dsn, "table": "chaos_effects"},
            store_for=pgstore.store_for(dsn, run_id),
        )
        row("ssh", mode, recs, time.monotonic() - t0)
    finally:
        pgstore.drop_run_schema(dsn, run_id)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--placements", default="docker,ssh", help="comma list of docker, ssh")
    ap.add_argument("--modes", default="cold,warm", help="comma list of cold, warm")
    ap.add_argument("--k", type=int, default=4, help="racers per race")
    ap.add_argument("--trials", type=int, default=5, help="trials per placement and mode")
    a = ap.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="chaos-bench-remote-"))
    print(f"start: {load()}; race k={a.k}, {a.trials} trials per row", flush=True)
    try:
        placements, modes = a.placements.split(","), a.modes.split(",")
        if "docker" in placements:
            for mode in modes:
                docker_case(mode, a.k, a.trials, base)
        if "ssh" in placements:
            from kits.lab import Lab

            with Lab(2) as lab:
                for mode in modes:
                    ssh_case(lab, mode, a.k, a.trials, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        print(f"end: {load()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A private PostgreSQL cluster for one test: started, stopped and started again at will.

Why: an outage story stops the server under a run. Stopping the shared cluster (scripts/postgres.sh)
would cut every other test and helper using it; this one is the test's own, on a free port, in a
folder of its own, removed afterwards. Needs the server binaries (Debian's postgresql package) and
root (the server runs as the ``postgres`` user); the test skips and says why otherwise.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest


class Cluster:
    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not bins or os.geteuid() != 0 or shutil.which("runuser") is None:
            pytest.skip("a private Postgres cluster needs Debian's postgresql binaries, root and runuser")
        self.bin = Path(bins[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="chaos-pg-"))
        shutil.chown(self.root, "postgres", "postgres")
        self.data = self.root / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "chaos", "--no-sync")
        self.dsn = f"postgresql://chaos@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *argv: str) -> None:
        p = subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {p.stderr[-500:]}")

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start")

    def stop(self) -> None:
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def remove(self) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(self.root, ignore_errors=True)

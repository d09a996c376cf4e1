"""Fixtures for the "across machines" tests: a real Postgres, a real Docker engine, an SSH lab.

Nothing here is mocked. Postgres comes from CHAOS_PG_DSN (CI: .ci/infra.sh starts it); the docker
tests skip (with the reason) only when no engine answers; the SSH lab skips only when the kernel
refuses network namespaces or sshd is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

DEFAULT_DSN = "postgresql://chaos:chaos@127.0.0.1:5432/chaos"


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    import psycopg

    dsn = os.environ.get("CHAOS_PG_DSN")
    if not dsn:
        # scripts/postgres.sh is idempotent and quick once installed: it (re)starts the cluster and
        # prints the DSN, whatever port the installed cluster uses
        script = Path(__file__).resolve().parents[2] / "scripts" / "postgres.sh"
        if shutil.which("pg_lsclusters") and os.geteuid() == 0:
            p = subprocess.run(["bash", str(script)], capture_output=True, text=True)
            dsn = p.stdout.strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else None
        dsn = dsn or DEFAULT_DSN
    try:
        psycopg.connect(dsn, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        from chaos.racer.redact import redact_dsn

        pytest.fail(
            f"Postgres at {redact_dsn(dsn)} refuses connections ({' '.join(str(exc).split())[:160]}):"
            " run scripts/postgres.sh (or .ci/infra.sh) and export CHAOS_PG_DSN",
            pytrace=False,
        )
    return dsn


@pytest.fixture(scope="session")
def docker_client():
    from chaos.launchers.docker import DockerError, client

    try:
        return client()
    except DockerError as exc:
        pytest.skip(f"no Docker engine: {exc.message}")


@pytest.fixture(scope="session")
def racer_image(docker_client) -> str:
    from chaos.remote.images import ensure_image

    return ensure_image(docker_client)


@pytest.fixture(scope="module")
def lab():
    from .lab import Lab, LabUnavailable, probe

    why = probe()
    if why:
        pytest.skip(f"SSH lab unavailable: {why}")
    try:
        lab = Lab(2).up()
    except LabUnavailable as exc:
        pytest.skip(f"SSH lab unavailable: {exc}")
    try:
        yield lab
    finally:
        lab.down()

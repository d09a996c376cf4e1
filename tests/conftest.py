"""Fixtures shared by every test; the helpers the tests import live in ``tests/kits/``.

pytest puts this folder on ``sys.path`` (rootdir conftest, no ``__init__.py``), so a test imports a
kit as ``from kits.runs import run_text``; the user-workload modules in ``tests/workloads/`` are
named from the repository root (``tests.workloads.user_workloads:hang_forever``), as a user names
their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Postgres, Docker and SSH-lab fixtures of the "across machines" tests.
from kits.infra import docker_client, lab, pg_dsn, racer_image  # noqa: F401

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    yield

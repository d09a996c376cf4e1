"""Fixtures shared by every test; the helpers the tests import live in ``tests/kits/``.

pytest puts this folder on ``sys.path`` (rootdir conftest, no ``__init__.py``), so a test imports a
kit as ``from kits.runs import run_text``; the user-workload modules in ``tests/workloads/`` are
named from the repository root (``tests.workloads.user_workloads:hang_forever``), as a user names
their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Fixture kits: Postgres, Docker and the SSH lab for the "across machines" tests; headless Chromium
# for the HTML report checks; the tiny suite's unsharded night, once per session, for the shard stories.
pytest_plugins = ("kits.infra", "kits.browserkit", "kits.parallel", "kits.shardkit")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _no_bytecode(monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    yield

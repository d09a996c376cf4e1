"""How the suite runs on several workers (pytest-xdist) without two tests stepping on each other.

Why: the suite is mostly real processes waiting on each other (racers, servers, browsers), so one
pytest process leaves cores idle; ``pyproject.toml`` runs it with ``-n auto --dist loadgroup``. What
this plugin promises, so that a test written as a story stays correct when another runs beside it:

* **A file runs on one worker.** Every test without an ``xdist_group`` mark is grouped by its file,
  so module-scoped fixtures (a scenario run once, read by several tests) run once, as without
  xdist. Files that share something machine-wide name one group (``pytestmark =
  pytest.mark.xdist_group("lab")``): their tests run one after another on one worker.
* **Slow files start first.** Groups holding ``slow`` tests are handed out before the rest, the
  ones with more slow tests first, so the last minutes are not one long file on one worker.
* **``@pytest.mark.exclusive`` runs alone.** For a test that creates, or must observe, what any
  other chaos process on the machine would reap or report (a deliberate stray racer, a dead run's
  lazy mount, "nothing to clean"): while it runs, no other worker runs a test. It waits for the
  tests in flight to end, and others wait for it (a read-write lock of files in a folder the
  controller makes for the run, a turnstile so it is never starved), from its setup to its
  teardown, module fixtures included. Without xdist the mark costs nothing.

Rules for a new test are in ``tests/README.md`` ("Running in parallel").
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

LOCKS = "chaos_lock_dir"  # the workers' shared lock folder, handed to each in its workerinput


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "exclusive: runs alone: no test on another xdist worker runs meanwhile (tests/kits/parallel.py)")
    config.addinivalue_line("markers", "xdist_group(name): the tests of every file in the group run on one worker, one after another")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow: dict[str, int] = {}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
        group = _group(item)
        slow[group] = slow.get(group, 0) + (item.get_closest_marker("slow") is not None)
    # a stable order (every worker must collect the same list): slow groups first, the rest as written
    first = {g: i for i, g in enumerate(dict.fromkeys(_group(it) for it in items))}
    items.sort(key=lambda it: (-slow[_group(it)], first[_group(it)]))


def _group(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    assert mark is not None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # xdist, in the controller: one lock folder for the run's workers
    config = node.config
    if not hasattr(config, "_chaos_lock_dir"):
        config._chaos_lock_dir = tempfile.mkdtemp(prefix="chaos-suite-locks-")
    node.workerinput[LOCKS] = config._chaos_lock_dir


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "_chaos_lock_dir"):
        shutil.rmtree(config._chaos_lock_dir, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Under xdist: a shared hold on the run's lock for every test, an exclusive one for a test marked
    ``exclusive``; held from its setup (the module's fixtures too) to its teardown."""
    folder = getattr(item.config, "workerinput", {}).get(LOCKS)
    if folder is None:  # one process: nothing runs beside it
        yield
        return
    exclusive = item.get_closest_marker("exclusive") is not None
    with _held(Path(folder) / "turnstile", fcntl.LOCK_EX):
        # an exclusive test keeps the turnstile until it has the lock: no new shared holder gets in
        lock = _held(Path(folder) / "suite", fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        lock.__enter__()
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


class _held:
    """An ``flock`` on ``path`` for the ``with`` block (blocking: the holder is a test, which ends)."""

    def __init__(self, path: Path, how: int) -> None:
        self.path, self.how = path, how

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(self.fd, self.how)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing drops the lock

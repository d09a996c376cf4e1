"""How the suite runs on several workers (pytest-xdist) without two tests stepping on each other.

Why: the suite is mostly real processes waiting on each other (racers, servers, browsers), so one
pytest process leaves cores idle; ``pyproject.toml`` runs it with ``-n auto --dist loadgroup``. What
this plugin promises, so that a test written as a story stays correct when another runs beside it:

* **A file runs on one worker.** Every test without an ``xdist_group`` mark is grouped by its file,
  so module-scoped fixtures (a scenario run once, read by several tests) run once, as without
  xdist. Files that share something machine-wide name one group (``pytestmark =
  pytest.mark.xdist_group("lab")``): their tests run one after another on one worker.
* **Long groups start first, and ``slow`` is measured.** ``tests/durations.json`` holds each
  file's seconds in the last recording (``python -m pytest --store-durations`` rewrites it).
  Groups are handed out longest first, so the last minutes are not one long file on one worker.
  The longest files that together took ``SLOW_SHARE`` of the recorded time have every test marked
  ``slow`` (a share, not seconds: the rule holds on a fast or a loaded machine), so ``-m "not
  slow"`` is the quick subset, about a sixth of the suite's time. A file the recording does not
  know is quick, and runs after the known long ones, until the next recording; among such files
  (every file, without a recording) those with a test marked ``slow`` by hand start first.
* **``@pytest.mark.exclusive`` runs alone.** For a test that creates, or must observe, what any
  other chaos process on the machine would reap or report (a deliberate stray racer, a dead run's
  lazy mount, "nothing to clean"): while it runs, no other worker runs a test. It waits for the
  tests in flight to end, and others wait for it (a read-write lock of files in a folder the
  controller makes for the run, a turnstile so it is never starved), from its setup to its
  teardown, module fixtures included. Without xdist the mark costs nothing.
* **A worker's runs take one job.** Each xdist worker is already one of the machine's cores at
  work, so in a worker ``CHAOS_JOBS`` is 1 (unless the environment says otherwise): a run that left
  ``--jobs`` out would start a second job slot, whose fork server imports the framework again (a
  second of CPU for LangGraph, three for CrewAI) for trials the other worker's core is busy with
  anyway. A test that is about parallel trials says ``jobs=`` itself.

Rules for a new test are in ``tests/README.md`` ("Running in parallel").
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chaos.running.jobs import JOBS_ENV

DURATIONS = Path(__file__).resolve().parents[1] / "durations.json"
ABOUT = "each test file's seconds (setup, call, teardown), written by `python -m pytest --store-durations`; read by tests/kits/parallel.py"
SLOW_SHARE = 0.85  # the longest files that together took this share of the recorded seconds: their tests are `slow`
LOCKS = "chaos_lock_dir"  # the workers' shared lock folder, handed to each in its workerinput


@pytest.hookimpl(tryfirst=True)  # before xdist's hook reads the groups and -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    recorded = _recorded()
    slow = _slow_files(recorded)
    group_of: dict[str, str] = {}
    marked: set[str] = set()  # groups with a test marked slow by hand (before the measured marks below)
    for item in items:
        path = _file(item)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(path))
        if item.get_closest_marker("slow") is not None:
            marked.add(_group(item))
        elif path in slow:
            item.add_marker(pytest.mark.slow)
        group_of.setdefault(path, _group(item))
    seconds = dict.fromkeys(group_of.values(), 0.0)
    for path, group in group_of.items():  # a group's recorded seconds: its files'
        seconds[group] += recorded.get(path, 0.0)
    # a stable order (every worker must collect the same list): longest recorded groups first; among
    # those the recording does not know (every group, without tests/durations.json), the ones with a
    # test marked slow by hand first; the rest as written
    first = {g: i for i, g in enumerate(dict.fromkeys(group_of.values()))}
    items.sort(key=lambda it: (-seconds[_group(it)], _group(it) not in marked, first[_group(it)]))
    folder = getattr(config, "workerinput", {}).get(LOCKS)
    if folder is not None:  # a worker: tell the controller's scheduler each test's group
        mine = Path(folder) / f"groups-{config.workerinput['workerid']}.json"
        mine.with_suffix(".tmp").write_text(json.dumps({it.nodeid: _group(it) for it in items}))
        mine.with_suffix(".tmp").rename(mine)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # xdist, in the controller
    """``--dist loadgroup`` by this plugin's groups. xdist's own loadgroup renames each test's node
    id, which pytest 9.2 no longer lets it do (it silently runs a file's tests on several workers);
    here the workers write each test's group into the run's lock folder as they collect, and the
    scheduler reads it: a group is one unit of work, handed out in collection order."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # scopes are asked for once every worker has collected
                written = sorted(Path(config._chaos_lock_dir).glob("groups-*.json"))
                self.groups = json.loads(written[0].read_text()) if written else {}
            return self.groups.get(nodeid) or super()._split_scope(nodeid)

    return ByGroup(config, log)


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _slow_files(recorded: dict[str, float]) -> set[str]:
    out: set[str] = set()
    total, taken = sum(recorded.values()), 0.0
    for path, s in sorted(recorded.items(), key=lambda kv: -kv[1]):
        if taken >= SLOW_SHARE * total:
            break
        out.add(path)
        taken += s
    return out


def _recorded() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}  # no recording: every group as written, nothing measured slow
    files = data.get("files") if isinstance(data, dict) else None
    return {str(k): float(v) for k, v in files.items() if isinstance(v, (int, float))} if isinstance(files, dict) else {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help="after the run, write each file's seconds into tests/durations.json (tests/kits/parallel.py)",
    )


class _Durations:
    """Each file's seconds (setup, call and teardown of its tests), summed in the process that
    receives every report: xdist's controller, or the only process."""

    def __init__(self) -> None:
        self.files: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        self.files[path] = self.files.get(path, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        root = DURATIONS.parent.parent
        kept = {k: v for k, v in _recorded().items() if (root / k).exists()}  # files not run this time keep theirs
        files = {**kept, **{k: round(v, 1) for k, v in self.files.items()}}
        body = {"about": ABOUT, "machine": f"{os.cpu_count()} cores", "files": dict(sorted(files.items()))}
        DURATIONS.write_text(json.dumps(body, indent=1) + "\n")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "exclusive: runs alone: no test on another xdist worker runs meanwhile (tests/kits/parallel.py)")
    config.addinivalue_line("markers", "xdist_group(name): the tests of every file in the group run on one worker, one after another")
    if config.getoption("store_durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Durations(), "chaos-durations")
    if hasattr(config, "workerinput"):  # a worker is a core at work already: its runs take one job
        os.environ.setdefault(JOBS_ENV, "1")


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

"""A pytest session that runs chaos stops when it is told to (issue 40, point 5).

Before: SIGTERM (a CI job cancelled) or Ctrl-C to a pytest whose test ran the ``chaos_run``
fixture marked the run interrupted, and pytest went on and exited 0, "2 passed", with 2-3 of 44
trials measured. Now the run ends cleanly, then the signal reaches pytest: the session stops,
non-zero, and the test after it never runs. A run that did not finish fails its test.

The user's suite is a real pytest process in a folder of its own; the signal is sent from the
outside once the run has journaled a trial (a racer is mid-run: the signal lands inside chaos).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from kits.robustkit import journal_lines, wait_for

REPO = Path(__file__).resolve().parents[1]

USER_TESTS = """
SCENARIO = {
    "name": "long_one",
    "kind": "kill_sweep",
    "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
    "workload": "three_step",
    "resume": "none",
    "trials": 40,
    "seed": 5,
}


def test_a_long_crash_sweep(chaos_run, tmp_path):
    chaos_run(SCENARIO, out=OUT)


def test_after_it():
    open(MARK, "w").close()
"""


def _as_in_a_terminal() -> None:
    """The user's pytest starts with SIGINT's default disposition, as from a terminal: a suite run
    as a background job of a non-interactive shell (``cmd &``) inherits SIGINT ignored, and an ignored
    SIGINT is what the caller asked for (chaos delivers it again, and it is ignored again: the run
    fails its test, as ``test_a_run_that_did_not_finish_fails_its_test`` shows for SIGTERM)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _plugin_args() -> list[str]:
    installed = any(ep.value == "chaos.pytest_plugin" for ep in metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "chaos.pytest_plugin"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_pytest_during_a_chaos_run_stops_the_session_non_zero(tmp_path, signum):
    out, mark = tmp_path / "runs", tmp_path / "after.mark"
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_user.py").write_text(f"OUT = {str(out)!r}\nMARK = {str(mark)!r}\n" + textwrap.dedent(USER_TESTS))
    env = {**os.environ, "PYTHONPATH": str(REPO), "CHAOS_STATE_DIR": str(tmp_path / "state")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_args(), str(suite)],
        cwd=suite,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_as_in_a_terminal,
    )
    try:
        journal = wait_for(lambda: next(out.glob("long_one/2*/journal.jsonl"), None), 300, "the run's journal")
        wait_for(lambda: journal_lines(journal) >= 1, 300, "a journaled trial")
        proc.send_signal(signum)
        text, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0, text
    assert "2 passed" not in text and "1 passed" not in text, text
    assert not mark.exists(), "pytest went on to the next test"
    run_json = journal.parent / "run.json"
    assert '"interrupted": true' in run_json.read_text()  # the run itself ended cleanly, resumable


def test_a_run_that_did_not_finish_fails_its_test(tmp_path):
    """A run whose SIGTERM the process ignores (as some CI runners set it up) still ends interrupted:
    the plugin fails the test (exit code 3) instead of passing it."""
    out = tmp_path / "runs"
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_user.py").write_text(f"OUT = {str(out)!r}\nMARK = {str(tmp_path / 'after.mark')!r}\n" + textwrap.dedent(USER_TESTS))
    (suite / "conftest.py").write_text(
        textwrap.dedent(
            """
            import signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the session ignores SIGTERM: chaos's run still stops on it
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "CHAOS_STATE_DIR": str(tmp_path / "state")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_args(), str(suite), "-k", "long"],
        cwd=suite,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        journal = wait_for(lambda: next(out.glob("long_one/2*/journal.jsonl"), None), 300, "the run's journal")
        wait_for(lambda: journal_lines(journal) >= 1, 300, "a journaled trial")
        proc.send_signal(signal.SIGTERM)
        text, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, text  # pytest: a test failed
    assert "did not finish (exit code 3)" in text and "1 failed" in text, text

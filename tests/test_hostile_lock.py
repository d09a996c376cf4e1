"""A run folder's ``.lock`` comes with the folder, from anywhere: it is never trusted.

Before, ``chaos run --resume`` opened a ``.lock`` that was a symbolic link ``O_RDWR|O_CREAT`` and
truncated the file it pointed to, writing its holder note there; a FIFO ``.lock`` hung ``report``;
a holder note with terminal escapes was printed raw; and a ``.lock`` linked to a lock another
process held made ``report`` refuse a folder no chaos process runs (issue 40, point 1). Each story
forges the lock from the outside in a copy of a real run folder and runs the real command line.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest
from kits.robustkit import chaos
from kits.runs import small_sweep


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("lock_run")
    res = small_sweep(d, "lock_run")
    return Path(res.run_dir)


def _downloaded(run_dir: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "downloaded"
    shutil.copytree(run_dir, dst, ignore=shutil.ignore_patterns("latest", ".lock"))
    return dst


def test_a_lock_linked_to_a_users_file_is_refused_and_the_file_left_as_it_was(run_dir, tmp_path):
    folder = _downloaded(run_dir, tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's data\n")
    (folder / ".lock").symlink_to(precious)
    p = chaos(["run", "--resume", str(folder)], tmp_path / "state")
    assert p.returncode == 3, p.stdout + p.stderr
    assert precious.read_text() == "the user's data\n"  # not truncated, no holder note written into it
    assert ".lock" in p.stderr and "not a regular file" in p.stderr


def test_a_fifo_lock_does_not_hang_report_or_analyze(run_dir, tmp_path):
    folder = _downloaded(run_dir, tmp_path)
    os.mkfifo(folder / ".lock")
    for cmd in (["report", str(folder)], ["analyze", str(folder)]):
        p = chaos(cmd, tmp_path / "state", timeout=120)  # a hang is a TimeoutExpired: the test fails
        assert p.returncode in (0, 1, 2), p.stdout + p.stderr  # a verdict, as the folder's journal says


def test_a_holder_note_with_terminal_escapes_is_printed_escaped(run_dir, tmp_path):
    """Another process holds the lock; its note (written by whoever forged the folder) tries to
    clear the screen and forge a second line: report refuses, naming the holder, escapes shown."""
    folder = _downloaded(run_dir, tmp_path)
    note = {"pid": 4242, "host": "ci\x1b[2J", "command": "x\n\x1b[32mall verdicts hold, exit 0\x1b[0m"}
    (folder / ".lock").write_text(json.dumps(note))
    fd = os.open(folder / ".lock", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held by this test process: "another chaos process" to the CLI
    try:
        p = chaos(["report", str(folder)], tmp_path / "state")
    finally:
        os.close(fd)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "\x1b" not in p.stderr and "\x1b" not in p.stdout
    assert "\\x1b[2J" in p.stderr and "pid 4242" in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if "still being executed" in x]
    assert "all verdicts hold" in line  # the forged "second line" stays inside the one refusal line


def test_a_lock_linked_to_a_lock_held_elsewhere_does_not_make_report_refuse(run_dir, tmp_path):
    folder = _downloaded(run_dir, tmp_path)
    elsewhere = tmp_path / "held.lock"
    elsewhere.write_text("{}")
    fd = os.open(elsewhere, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        (folder / ".lock").symlink_to(elsewhere)
        p = chaos(["report", str(folder)], tmp_path / "state")
    finally:
        os.close(fd)
    assert p.returncode in (0, 1, 2), p.stdout + p.stderr  # rendered: no chaos process runs this folder
    assert (folder / "report.md").exists()

"""A run folder owns its liveness: the lock of the one chaos process that executes it.

Why: the run registry (``chaos.running.registry``) lives in a *state folder* (``CHAOS_STATE_DIR``,
``~/.cache/chaos``), which differs between users, shells, ``sudo`` and CI steps, and which a cache
cleaner may empty. A resume that looked for the run's liveness there counted a live run as dead,
killed its racers, set its ledger rows aside and ran the same trials again (61 journal lines for 40
trials). The folder itself is what two processes share, so the lock is there.

What it promises:

* ``FolderLock(folder)`` takes an exclusive ``flock`` on ``<folder>/.lock`` (created, never
  removed: removing a lock file lets two processes each lock a different inode). The kernel drops
  the lock the instant its process dies, however it dies; the descriptor is close-on-exec, so
  racers never inherit it (a stray racer does not keep a dead run "alive").
* Taking it again in the process that holds it is free (counted); the lock is released when the
  last holder releases it. So ``resume`` can hold it from its first check through ``execute``.
* A second process gets ``FolderBusy`` (a ``ChaosError``: one line, exit 3) naming the folder and,
  when the holder wrote them, its pid, host and command.
* ``held_elsewhere(folder)`` is true only while *another* process holds the lock: every command
  that would touch a live folder (resume, clean's reaper, merge, analyze / report) asks it. A lock
  file it may not read is an ``OSError``: the reaper then leaves the run alone, a command refuses.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
from pathlib import Path

from chaos.racer.errors import ChaosError
from chaos.racer.redact import redact_text

LOCK_NAME = ".lock"

_held: dict[str, list[int]] = {}  # resolved folder -> [descriptor, holders] in this process


class FolderBusy(ChaosError):
    """Another live chaos process executes this folder."""


def _key(folder: str | Path) -> str:
    return str(Path(folder).resolve())


def _holder(folder: Path) -> str:
    """Who holds the lock, as the holder wrote it (best effort: the lock, not this text, is the truth)."""
    try:
        info = json.loads((folder / LOCK_NAME).read_text() or "{}")
    except (OSError, ValueError):
        return ""
    if not isinstance(info, dict) or not info.get("pid"):
        return ""
    return f" (pid {info.get('pid')} on {info.get('host', '?')}: {str(info.get('command', ''))[:80]})"


def held_elsewhere(folder: str | Path) -> bool:
    """True while a process other than this one holds ``folder``'s lock."""
    folder = Path(folder)
    if _key(folder) in _held:
        return False
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False  # no lock file: no chaos process ever executed it since locks exist
    return locked_exclusively(fd)


def locked_exclusively(fd: int) -> bool:
    """True while another open file holds an exclusive flock on ``fd``'s file (a shared lock is
    tried without blocking and dropped again); ``fd`` is closed either way."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def refuse_if_live(folder: str | Path, doing: str) -> None:
    """Raise ``FolderBusy`` (one line) when another process executes ``folder``."""
    folder = Path(folder)
    try:
        live = held_elsewhere(folder)
    except OSError as exc:  # another user's lock file we may not read: we cannot tell, so we do not touch it
        raise ChaosError(f"{folder}: cannot {doing}: cannot read its lock file {LOCK_NAME}: {exc.strerror or exc}") from None
    if live:
        raise FolderBusy(
            f"{folder}: cannot {doing}: it is still being executed by another chaos process{_holder(folder)}",
            hint="wait for it to end, or stop it (Ctrl-C / SIGTERM), then try again",
        )


class FolderLock:
    """The exclusive lock on one folder, held while this process executes it."""

    def __init__(self, folder: str | Path, doing: str = "execute it"):
        self.folder = Path(folder)
        self.doing = doing
        self._mine = False
        self._key = _key(self.folder)  # fixed now: the folder may be gone (discarded) by release

    def acquire(self) -> FolderLock:
        key = self._key
        if key in _held:
            _held[key][1] += 1
            self._mine = True
            return self
        try:
            fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise ChaosError(f"{self.folder}: cannot {self.doing}: cannot open its lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            refuse_if_live(self.folder, self.doing)  # names the holder
            raise FolderBusy(f"{self.folder}: cannot {self.doing}: it is still being executed by another chaos process") from None
        with contextlib.suppress(OSError):  # readable by every user, whatever the umask: all of them must see it held
            os.fchmod(fd, 0o644)
        command = redact_text(" ".join(map(str, sys.argv)))[:200]  # like run.json's argv: no secret in any file of the folder
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, only the holder's note is missing
        _held[key] = [fd, 1]
        self._mine = True
        return self

    def release(self) -> None:
        if not self._mine:
            return
        self._mine = False
        key = self._key
        slot = _held.get(key)
        if slot is None:
            return
        slot[1] -= 1
        if slot[1] <= 0:
            del _held[key]
            os.close(slot[0])  # closing the descriptor drops the flock

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

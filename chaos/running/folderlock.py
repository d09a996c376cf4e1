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
* The lock file is untrusted (a folder may be downloaded from anywhere): it is opened with
  ``O_NOFOLLOW`` and ``O_NONBLOCK`` and must be a regular file. A symbolic link, a FIFO or a device
  named ``.lock`` is no chaos process's lock: ``held_elsewhere`` says False (so ``report`` never
  refuses a folder because its ``.lock`` points at a lock held elsewhere), and ``FolderLock``
  refuses, one line, exit 3, before writing anything (a linked user file is never truncated).
* The holder's note is read capped (``NOTE_MAX`` bytes) and printed with control characters
  escaped (``chaos.inputfile.printable``): a note cannot paint the terminal or forge a line.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import sys
from pathlib import Path

from chaos.inputfile import printable
from chaos.racer.errors import ChaosError
from chaos.racer.redact import redact_text

LOCK_NAME = ".lock"
NOTE_MAX = 4096  # bytes of the holder's note read (chaos writes about 300)
_OPEN = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class _NotALock(Exception):
    """The folder's ``.lock`` is a link, FIFO, device or folder: no chaos process made it."""


_held: dict[str, list[int]] = {}  # resolved folder -> [descriptor, holders] in this process


class FolderBusy(ChaosError):
    """Another live chaos process executes this folder."""


def _key(folder: str | Path) -> str:
    return str(Path(folder).resolve())


def _open_lock(folder: Path, flags: int) -> int:
    """A descriptor of ``folder/.lock`` opened without following a link or blocking on a FIFO;
    ``_NotALock`` when it is anything but a regular file."""
    try:
        fd = os.open(folder / LOCK_NAME, flags | _OPEN, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):  # a link; a FIFO with no reader; a folder
            raise _NotALock from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotALock
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(folder: Path) -> str:
    """Who holds the lock, as the holder wrote it (best effort: the lock, not this text, is the
    truth), read capped and printable (its control characters escaped)."""
    try:
        fd = _open_lock(folder, os.O_RDONLY)
    except (OSError, _NotALock):
        return ""
    try:
        raw = os.pread(fd, NOTE_MAX, 0)
    except OSError:
        return ""
    finally:
        os.close(fd)
    try:
        info = json.loads(raw.decode("utf-8", "replace") or "{}")
    except ValueError:
        return ""
    if not isinstance(info, dict) or not info.get("pid"):
        return ""
    pid, host, command = (printable(str(info.get(k, d)))[:80] for k, d in (("pid", ""), ("host", "?"), ("command", "")))
    return f" (pid {pid} on {host}: {command})"


def held_elsewhere(folder: str | Path) -> bool:
    """True while a process other than this one holds ``folder``'s lock (a ``.lock`` that is not a
    regular file is no chaos process's: False)."""
    folder = Path(folder)
    if _key(folder) in _held:
        return False
    try:
        fd = _open_lock(folder, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return False  # no lock file: no chaos process ever executed it since locks exist
    except _NotALock:
        return False
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
            fd = _open_lock(self.folder, os.O_RDWR | os.O_CREAT)
        except _NotALock:
            raise ChaosError(
                f"{self.folder}: cannot {self.doing}: its lock file {LOCK_NAME} is not a regular file (a link, FIFO or device): "
                "chaos never made it",
                hint=f"remove {self.folder / LOCK_NAME} and try again",
            ) from None
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

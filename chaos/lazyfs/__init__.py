"""A lazy filesystem under the framework's store, started and stopped by chaos (orchestrator side).

Why: power loss and torn writes (``fault: power_loss | torn`` on a sweep) need a filesystem that
forgets what was never fsynced; ``chaos.lazyfs.fs`` is that filesystem (its docstring states the
model). This module starts it as its own process, mounts it, talks to its control socket and
unmounts it, and says in one line what is missing on a machine without FUSE.

What it promises:

* ``missing()`` is None when this machine can mount it, else one line naming what is missing
  (``/dev/fuse``, ``fusermount3``, libfuse3, the ``mfusepy`` package) and how to install it.
* ``LazyMount(below, mount, ...)`` as a context manager: on enter the filesystem process runs and
  the kernel has the mount (it waits for the process's ``ready``, never a sleep); on exit it is
  unmounted (``fusermount3 -u``, lazily ``-uz`` if busy) and the process reaped, whatever happened.
  ``power_loss(prefix)`` and ``torn(prefix)`` return the filesystem's account of what was lost;
  ``durable_image(prefix, dest)`` copies what a power loss would leave into ``dest`` and drops nothing.
* ``unmount_stale(alive)`` unmounts every lazy mount on this machine whose run is not alive (by
  the run id in its fsname, ``chaos-lazyfs-<run_id>``); without ``alive``, every mount whose
  process died or lost its orchestrator. For ``chaos clean`` after a SIGKILLed orchestrator.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

FSNAME = "chaos-lazyfs"
INSTALL = "install it (Debian: apt-get install fuse3 libfuse3-dev; Python: pip install mfusepy)"


def missing() -> str | None:
    """None when a lazy filesystem can be mounted here, else what is missing and how to install it."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (the fuse kernel module; in a container run it with --device /dev/fuse --cap-add SYS_ADMIN)"
    if shutil.which("fusermount3") is None:
        return f"fusermount3 is not installed: {INSTALL}"
    if importlib.util.find_spec("mfusepy") is None:
        return f"the Python package mfusepy is not installed: {INSTALL}"
    try:
        import mfusepy  # noqa: F401  (loads libfuse3 through ctypes)
    except (OSError, ImportError) as exc:
        return f"libfuse3 cannot be loaded ({type(exc).__name__}: {str(exc)[:80]}): {INSTALL}"
    return None


def abstract(name: str) -> str:
    """The address of an abstract Unix socket written ``@name`` (Linux: a leading NUL byte)."""
    return "\0" + name[1:] if name.startswith("@") else name


def fsname(run_id: str) -> str:
    return f"{FSNAME}-{run_id}"


def _fusermount(mount: str, *, lazy: bool = False) -> bool:
    args = ["fusermount3", "-u", "-q"] + (["-z"] if lazy else []) + [mount]
    return subprocess.run(args, capture_output=True, check=False).returncode == 0


class LazyMountError(RuntimeError):
    pass


class LazyMount:
    """One lazy filesystem process and its mount (see the module)."""

    def __init__(self, below: Path, mount: Path, *, run_id: str = "", log: Path | None = None, env: dict[str, str] | None = None):
        self.below, self.mount = Path(below), Path(mount)
        # an abstract Unix socket (``@name``): no file to leave behind, no 108-byte path limit
        self.control = f"@{FSNAME}-{secrets.token_hex(8)}"
        self.errors = str(self.mount.parent / f".{self.mount.name}.err")  # the process's stderr
        self.log = log
        self.name = fsname(run_id) if run_id else FSNAME
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LazyMount:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 30.0) -> None:
        self.below.mkdir(parents=True, exist_ok=True)
        self.mount.mkdir(parents=True, exist_ok=True)
        r, w = os.pipe()
        chaos_root = str(Path(__file__).resolve().parents[2])
        env = dict(self.env if self.env is not None else os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (chaos_root, env.get("PYTHONPATH", "")) if p)
        cmd = [sys.executable, "-m", "chaos.lazyfs.fs", str(self.below), str(self.mount), "--control", self.control, "--ready", str(w)]
        cmd += ["--name", self.name, "--owner", str(os.getpid())] + (["--log", str(self.log)] if self.log else [])
        # its own session: a Ctrl-C at the terminal reaches the orchestrator, which unmounts it in order
        with open(self.errors, "wb") as err_file:
            self.proc = subprocess.Popen(cmd, pass_fds=(w,), env=env, stdout=subprocess.DEVNULL, stderr=err_file, start_new_session=True)
        os.close(w)
        try:
            ready, _, _ = select.select([r], [], [], timeout)
            said = os.read(r, 64) if ready else b""
        finally:
            os.close(r)
        if said.strip() != b"ready":
            self.stop()
            err = Path(self.errors).read_bytes()[-300:] if os.path.exists(self.errors) else b""
            raise LazyMountError(
                f"the lazy filesystem did not mount at {self.mount}: {err.decode(errors='replace').strip() or 'no ready signal'}"
            )

    def request(self, req: dict[str, object]) -> dict[str, object]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(abstract(self.control))
            s.sendall(json.dumps(req).encode() + b"\n")
            raw = b""
            while not raw.endswith(b"\n"):
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                raw += chunk
        out = json.loads(raw or b"{}")
        if "error" in out:
            raise LazyMountError(f"lazy filesystem: {out['error']}")
        return out

    def power_loss(self, prefix: str = "") -> dict[str, object]:
        """Drop every unsynced write under ``prefix`` (relative to the mount)."""
        return self.request({"op": "power_loss", "prefix": prefix})

    def torn(self, prefix: str = "", keep: int | None = None) -> dict[str, object]:
        """Drop every unsynced write under ``prefix`` but a prefix of the last one."""
        return self.request({"op": "torn", "prefix": prefix, "keep": keep})

    def durable_image(self, prefix: str, dest: Path, *, torn: bool = False, keep: int | None = None) -> dict[str, object]:
        """Copy the files under ``prefix`` as a power loss (``torn``: a torn write) now would leave them
        into ``dest``, a plain folder; answers as ``power_loss`` (``torn``) would, but drops nothing."""
        req = {"op": "durable_image", "prefix": prefix, "dest": str(Path(dest).resolve()), "torn": torn, "keep": keep}
        return self.request(req)

    def forget(self, prefix: str) -> dict[str, object]:
        """A finished trial's folder leaves the filesystem's cache (what it held is synced first)."""
        return self.request({"op": "forget", "prefix": prefix})

    def stats(self) -> dict[str, object]:
        return self.request({"op": "stats"})

    def stop(self, timeout: float = 10.0) -> None:
        """Unmount and reap the process (idempotent)."""
        p = self.proc
        if p is None:
            return
        if p.poll() is None and not _fusermount(str(self.mount)):
            _fusermount(str(self.mount), lazy=True)  # busy: detach now, the kernel lets go when the last user does
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if is_mounted(str(self.mount)):  # the process died without unmounting (SIGKILL): the mount is dead
            _fusermount(str(self.mount), lazy=True)
        self.proc = None


def lazy_mounts() -> list[tuple[str, str]]:
    """(fsname, mount point) of every chaos lazy filesystem mounted on this machine."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0].startswith(FSNAME) and parts[2].startswith("fuse"):
                out.append((parts[0], parts[1].replace("\\040", " ")))
    return out


def is_mounted(mount: str) -> bool:
    real = os.path.realpath(mount)
    return any(m == real or m == mount for _, m in lazy_mounts())


def unmount_stale(alive: Callable[[str], bool] | None = None) -> list[str]:
    """Unmount every lazy mount whose run (named in its fsname) is not ``alive``, and kill its
    process. Without ``alive``: every mount whose process is gone or orphaned (its orchestrator,
    the ``--owner`` it was started by, is no longer its parent), whichever state folder its run used."""
    gone = []
    for name, mount in lazy_mounts():
        run_id = name[len(FSNAME) + 1 :] if name.startswith(FSNAME + "-") else ""
        daemons = _daemons_of(mount)
        if alive is not None and run_id and alive(run_id):
            continue
        if alive is None and daemons and not any(_orphaned(pid) for pid in daemons):
            continue
        for pid in daemons:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if _fusermount(mount, lazy=True):
            gone.append(mount)
    return gone


def _daemons_of(mount: str) -> list[int]:
    """Pids of lazy filesystem processes serving ``mount`` (by their command line)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"chaos.lazyfs.fs" in argv and mount.encode() in argv:
            out.append(int(name))
    return out


def _orphaned(pid: int) -> bool:
    """Has the lazy filesystem process ``pid`` lost the orchestrator that started it?"""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return True
    owner = argv[argv.index(b"--owner") + 1].decode() if b"--owner" in argv else ""
    return owner != str(ppid)

"""The lazy filesystem daemon: a FUSE filesystem that forgets what was never fsynced.

Why: a SIGKILL keeps the kernel's page cache, so a write that was never fsynced still reaches the
disk. A power loss does not. This filesystem (the model of LazyFS, dsrhaslab/lazyfs, that Jepsen
uses) keeps file *data* in its own cache and writes to the folder below only what was made
durable, so chaos can take away exactly what a power loss takes away.

What it promises (the model, stated once; docs/contract.md repeats it):

* **Data** of a regular file is cached: every ``write`` and ``truncate`` is pending until an
  ``fsync`` or ``fdatasync`` of that file, which applies the file's pending operations in order to
  the file below and fsyncs it there. Reads see the cache (the file as the writer left it).
* **Metadata** goes straight through, as in LazyFS: create, mkdir, unlink, rmdir, rename, chmod
  and utimens are applied below at once (durable). So a file written and renamed without an fsync
  survives a power loss under its new name, with only its synced data (zero bytes if none): the
  classic "rename without fsync" loss (ext4 without auto_da_alloc) is what this models.
* ``power_loss(prefix)`` drops every pending operation of the files under ``prefix``; the next
  reader sees the folder below. ``torn(prefix)`` does the same, except that the last pending write
  (the latest in the operation log, any file under ``prefix`` but a SQLite ``-shm`` index) persists a prefix of its bytes (half,
  rounded down, unless ``keep`` says how many). Both answer with what was lost.
* ``durable_image(prefix, dest, torn)`` copies the files under ``prefix`` as a power loss (or a torn
  write) now would leave them (the folder below: only what was synced; torn: with the kept prefix of
  the last pending write) to the plain folder ``dest``, and answers as ``power_loss`` (``torn``)
  would, dropping nothing: the writer may go on. A
  recorded sweep takes every kill point's power-loss state this way (``chaos.kinds.durable_states``).
* Every operation is appended to the operation log (JSON lines: seq, op, path, offset, length), so
  a report can name the writes a fault took away.

Control: a Unix socket (``--control``); one JSON request per connection, one JSON answer:
``{"op": "power_loss" | "torn", "prefix": "c000-p001-r000", "keep": null}``, ``{"op":
"durable_image", "prefix": ..., "dest": "/abs/folder", "torn": false, "keep": null}``, ``{"op": "forget",
"prefix": ...}`` (a finished trial: its files leave the cache, synced) or ``{"op": "stats"}``.
Filesystem operations and control requests are serialised by one lock (the filesystem runs
single-threaded), so a drop sees no half-done write.

Run by ``chaos.lazyfs.LazyMount`` (orchestrator side): ``python -m chaos.lazyfs.fs BELOW MOUNT
--control SOCK --log LOG --ready FD``; it writes ``ready`` on FD once mounted, and exits when
unmounted (``fusermount3 -u``).
"""

from __future__ import annotations

import argparse
import errno
import functools
import json
import os
import shutil
import socket
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import mfusepy as fuse

F = TypeVar("F", bound=Callable[..., object])


@dataclass
class PendingOp:
    """One unsynced data operation: a write (``data``) or a truncate (``size``)."""

    seq: int
    op: str  # "write" | "truncate"
    offset: int = 0
    data: bytes = b""
    size: int = 0

    def describe(self, path: str) -> dict[str, object]:
        if self.op == "write":
            return {"seq": self.seq, "op": "write", "path": path, "offset": self.offset, "length": len(self.data)}
        return {"seq": self.seq, "op": "truncate", "path": path, "size": self.size}


@dataclass
class Node:
    """A regular file's cached data: ``data`` (None: not loaded, read from below) and its pending operations."""

    path: str
    data: bytearray | None = None
    pending: list[PendingOp] = field(default_factory=list)


def _locked(method: F) -> F:
    @functools.wraps(method)
    def wrapper(self: LazyOps, *args: object, **kwargs: object) -> object:
        with self.mutex:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]  # it is method with a lock held; mypy cannot prove the wrapper is an F


class LazyOps(fuse.Operations):
    use_ns = True

    def __init__(self, below: str, log_path: str | None = None):
        self.below = os.path.realpath(below)
        self.mutex = threading.RLock()
        self.nodes: dict[str, Node] = {}
        self.handles: dict[int, Node] = {}
        self.next_fh = 1
        self.seq = 0
        self.counts = {"write": 0, "truncate": 0, "fsync": 0, "bytes_written": 0, "bytes_synced": 0}
        self.log = open(log_path, "a", buffering=1 << 16) if log_path else None

    # ------------------------------------------------------------------ helpers

    def _below(self, path: str) -> str:
        return os.path.join(self.below, path.lstrip("/"))

    def _rel(self, path: str) -> str:
        return path.lstrip("/")

    def _log(self, **entry: object) -> None:
        self.seq += 1
        if self.log is not None:
            self.log.write(json.dumps({"seq": self.seq, **entry}) + "\n")

    def _node(self, path: str) -> Node:
        rel = self._rel(path)
        n = self.nodes.get(rel)
        if n is None:
            n = self.nodes[rel] = Node(rel)
        return n

    def _load(self, n: Node) -> bytearray:
        if n.data is None:
            try:
                with open(self._below(n.path), "rb") as f:
                    n.data = bytearray(f.read())
            except FileNotFoundError:
                n.data = bytearray()
        return n.data

    def _sync(self, n: Node) -> None:
        if not n.pending:
            return
        fd = os.open(self._below(n.path), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for op in n.pending:
                if op.op == "write":
                    os.pwrite(fd, op.data, op.offset)
                    self.counts["bytes_synced"] += len(op.data)
                else:
                    os.ftruncate(fd, op.size)
            os.fsync(fd)
        finally:
            os.close(fd)
        n.pending = []

    # ------------------------------------------------------------------ metadata: straight through

    @_locked
    def getattr(self, path: str, fh: int | None = None) -> dict[str, object]:
        try:
            st = os.lstat(self._below(path))
        except OSError as exc:
            raise fuse.FuseOSError(exc.errno) from None
        out = {k: getattr(st, k) for k in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime")}
        for k in ("st_atime", "st_mtime", "st_ctime"):
            out[k] = getattr(st, k + "_ns")
        n = self.nodes.get(self._rel(path))
        if n is not None and n.data is not None and stat.S_ISREG(st.st_mode):
            out["st_size"] = len(n.data)
        return out

    @_locked
    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._below(path))]

    @_locked
    def statfs(self, path: str) -> dict[str, int]:
        sv = os.statvfs(self._below(path))
        return {
            k: getattr(sv, k)
            for k in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
        }

    @_locked
    def mkdir(self, path: str, mode: int) -> int:
        os.mkdir(self._below(path), mode)
        self._log(op="mkdir", path=self._rel(path))
        return 0

    @_locked
    def rmdir(self, path: str) -> int:
        os.rmdir(self._below(path))
        self._log(op="rmdir", path=self._rel(path))
        return 0

    @_locked
    def unlink(self, path: str) -> int:
        os.unlink(self._below(path))
        n = self.nodes.pop(self._rel(path), None)
        if n is not None:
            n.path = ""  # open handles keep writing to a file no name reaches: nothing to persist
            n.pending = []
        self._log(op="unlink", path=self._rel(path))
        return 0

    @_locked
    def rename(self, old: str, new: str) -> int:
        os.rename(self._below(old), self._below(new))
        ro, rn = self._rel(old), self._rel(new)
        gone = self.nodes.pop(rn, None)
        if gone is not None:
            gone.path, gone.pending = "", []
        for key in [k for k in self.nodes if k == ro or k.startswith(ro + "/")]:
            n = self.nodes.pop(key)
            n.path = rn + key[len(ro) :]
            self.nodes[n.path] = n
        self._log(op="rename", path=ro, to=rn)
        return 0

    @_locked
    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._below(path), mode)
        return 0

    @_locked
    def chown(self, path: str, uid: int, gid: int) -> int:
        os.chown(self._below(path), uid, gid)
        return 0

    @_locked
    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._below(path), ns=times) if times else os.utime(self._below(path))
        return 0

    @_locked
    def access(self, path: str, amode: int) -> int:
        if not os.access(self._below(path), amode):
            raise fuse.FuseOSError(errno.EACCES)
        return 0

    # ------------------------------------------------------------------ data: cached until fsync

    @_locked
    def create(self, path: str, mode: int, fi: object = None) -> int:
        fd = os.open(self._below(path), os.O_WRONLY | os.O_CREAT, mode)
        os.close(fd)
        self._log(op="create", path=self._rel(path))
        return self._open_node(path, os.O_TRUNC)

    @_locked
    def open(self, path: str, flags: int) -> int:
        if not os.path.exists(self._below(path)):
            raise fuse.FuseOSError(errno.ENOENT)
        return self._open_node(path, flags)

    def _open_node(self, path: str, flags: int) -> int:
        n = self._node(path)
        if flags & os.O_TRUNC:
            self._truncate(n, 0)
        fh = self.next_fh
        self.next_fh += 1
        self.handles[fh] = n
        return fh

    @_locked
    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        n = self.handles.get(fh) or self._node(path)
        return bytes(self._load(n)[offset : offset + size])

    @_locked
    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        n = self.handles.get(fh) or self._node(path)
        buf = self._load(n)
        if offset > len(buf):
            buf.extend(bytes(offset - len(buf)))
        buf[offset : offset + len(data)] = data
        self._log(op="write", path=n.path, offset=offset, length=len(data))
        if n.path:
            n.pending.append(PendingOp(self.seq, "write", offset=offset, data=bytes(data)))
        self.counts["write"] += 1
        self.counts["bytes_written"] += len(data)
        return len(data)

    def _truncate(self, n: Node, length: int) -> None:
        buf = self._load(n)
        if length < len(buf):
            del buf[length:]
        else:
            buf.extend(bytes(length - len(buf)))
        self._log(op="truncate", path=n.path, size=length)
        if n.path:
            n.pending.append(PendingOp(self.seq, "truncate", size=length))
        self.counts["truncate"] += 1

    @_locked
    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        n = (self.handles.get(fh) if fh else None) or self._node(path)
        self._truncate(n, length)
        return 0

    @_locked
    def fsync(self, path: str, datasync: int, fh: int) -> int:
        n = self.handles.get(fh) or self._node(path)
        self._log(op="fdatasync" if datasync else "fsync", path=n.path, pending=len(n.pending))
        if n.path:
            self._sync(n)
        self.counts["fsync"] += 1
        return 0

    @_locked
    def release(self, path: str, fh: int) -> int:
        self.handles.pop(fh, None)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0  # close() makes nothing durable

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        return 0  # metadata is durable already (see the module)

    # ------------------------------------------------------------------ faults

    @_locked
    def drop(self, prefix: str, *, torn: bool = False, keep: int | None = None) -> dict[str, object]:
        """Power loss (or a torn write) under ``prefix``: what was pending is lost; say what."""
        prefix = prefix.strip("/")
        under = self._under(prefix)
        report = self._loss(prefix, under, "torn" if torn else "power_loss")
        if torn:
            report["torn"] = self._tear(under, keep, self._below)
        for n in under:
            n.pending = []
            n.data = None
        self._log(op=report["fault"], path=prefix, lost_ops=report["lost_ops"], torn=report["torn"])
        if self.log is not None:
            self.log.flush()
        return report

    def _tear(self, under: list[Node], keep: int | None, where: Callable[[str], str]) -> dict[str, object] | None:
        """Persist a prefix of the last pending write under a folder (half, or ``keep`` bytes) to the
        file ``where(path)`` names, and say which; None when nothing is pending."""
        # SQLite's -shm is a memory index rebuilt after a crash: tearing it tears nothing durable
        writes = [(op, n) for n in under if not n.path.endswith("-shm") for op in n.pending if op.op == "write"]
        if not writes:
            return None
        op, n = max(writes, key=lambda w: w[0].seq)
        k = len(op.data) // 2 if keep is None else max(0, min(keep, len(op.data)))
        if k:
            fd = os.open(where(n.path), os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.pwrite(fd, op.data[:k], op.offset)
                os.fsync(fd)
            finally:
                os.close(fd)
        return {"path": n.path, "seq": op.seq, "offset": op.offset, "length": len(op.data), "persisted": k}

    def _under(self, prefix: str) -> list[Node]:
        return [n for k, n in self.nodes.items() if not prefix or k == prefix or k.startswith(prefix + "/")]

    def _loss(self, prefix: str, under: list[Node], fault: str) -> dict[str, object]:
        """What a fault under ``prefix`` loses now: every pending operation of the files ``under`` it."""
        pending = sorted(((op, n.path) for n in under for op in n.pending), key=lambda p: p[0].seq)
        lost = [op.describe(path) for op, path in pending]
        return {
            "fault": fault,
            "prefix": prefix,
            "lost_ops": len(lost),
            "lost_bytes": sum(len(op.data) for op, _ in pending if op.op == "write"),
            "files": sorted({path for _, path in pending}),
            "lost": lost[-50:],  # the latest 50 (the log has them all)
            "torn": None,
        }

    @_locked
    def durable_image(self, prefix: str, dest: str, *, torn: bool = False, keep: int | None = None) -> dict[str, object]:
        """Copy what a power loss (or a torn write) under ``prefix`` would leave now (the folder below
        it, and for ``torn`` the kept prefix of the last pending write) into the plain folder ``dest``,
        and say what it would lose, as ``drop`` would; nothing is dropped (see the module)."""
        prefix = prefix.strip("/")
        src = os.path.join(self.below, prefix)
        if not prefix or not os.path.isdir(src):
            raise ValueError(f"durable_image: no folder {prefix!r} on this filesystem")
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        under = self._under(prefix)
        report = self._loss(prefix, under, "torn" if torn else "power_loss")
        if torn:
            report["torn"] = self._tear(under, keep, lambda path: os.path.join(dest, path[len(prefix) + 1 :]))
        self._log(op="durable_image", path=prefix, pending_ops=report["lost_ops"], torn=report["torn"])
        return report

    @_locked
    def forget(self, prefix: str) -> dict[str, object]:
        """Sync, then drop from memory, the files under ``prefix`` (a finished trial's folder): a
        long run's cache holds only its live trials."""
        prefix = prefix.strip("/")
        keys = [k for k in self.nodes if k == prefix or k.startswith(prefix + "/")]
        for k in keys:
            n = self.nodes.pop(k)
            if os.path.exists(self._below(n.path)):
                self._sync(n)
            n.data = None
        return {"forgotten": len(keys)}

    @_locked
    def stats(self) -> dict[str, object]:
        pending = sum(len(n.pending) for n in self.nodes.values())
        return {**self.counts, "pending_ops": pending, "files": len(self.nodes)}


def serve_control(ops: LazyOps, sock_path: str) -> threading.Thread:
    """Answer control requests on a Unix socket (a daemon thread of the filesystem process)."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("\0" + sock_path[1:] if sock_path.startswith("@") else sock_path)  # @name: an abstract socket
    srv.listen(4)

    def loop() -> None:
        while True:
            conn, _ = srv.accept()
            with conn:
                raw = b""
                while not raw.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    raw += chunk
                try:
                    req = json.loads(raw or b"{}")
                    if req.get("op") in ("power_loss", "torn"):
                        out: dict[str, object] = ops.drop(req.get("prefix") or "", torn=req["op"] == "torn", keep=req.get("keep"))
                    elif req.get("op") == "durable_image":
                        out = ops.durable_image(req.get("prefix") or "", str(req["dest"]), torn=bool(req.get("torn")), keep=req.get("keep"))
                    elif req.get("op") == "forget":
                        out = ops.forget(req.get("prefix") or "")
                    elif req.get("op") == "stats":
                        out = ops.stats()
                    else:
                        out = {"error": f"unknown control op {req.get('op')!r}"}
                except Exception as exc:  # a bad request must not end the filesystem
                    out = {"error": f"{type(exc).__name__}: {exc}"}
                conn.sendall(json.dumps(out).encode() + b"\n")

    t = threading.Thread(target=loop, name="lazyfs-control", daemon=True)
    t.start()
    return t


class _Ready(LazyOps):
    """Says ``ready`` on a pipe once the kernel has the mount (libfuse calls ``init`` then)."""

    ready_fd: int = -1

    def init(self, path: str) -> None:
        if self.ready_fd >= 0:
            os.write(self.ready_fd, b"ready\n")
            os.close(self.ready_fd)
            self.ready_fd = -1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m chaos.lazyfs.fs")
    p.add_argument("below")
    p.add_argument("mount")
    p.add_argument("--control", required=True)
    p.add_argument("--log")
    p.add_argument("--ready", type=int, default=-1)
    p.add_argument("--name", default="chaos-lazyfs")
    p.add_argument("--owner", default="", help="the orchestrator's pid (a reaper finds an orphaned filesystem by it)")
    a = p.parse_args(argv)
    ops = _Ready(a.below, a.log)
    ops.ready_fd = a.ready
    serve_control(ops, a.control)
    fuse.FUSE(
        ops,
        a.mount,
        foreground=True,
        nothreads=True,
        fsname=a.name,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

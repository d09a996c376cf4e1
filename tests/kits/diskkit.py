"""A small file system that fills up, for the full-disk stories: a real tmpfs mounted for one test.

``small_tmpfs(path, size)`` mounts a tmpfs of ``size`` at ``path`` and always unmounts it (lazily,
so a folder still open under it cannot keep it); tests that use it skip where mounting is not
allowed (not root, no tmpfs). ``fill(folder)`` writes one file until the file system says ENOSPC:
what the disk looks like when another program took the last byte.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(path: Path, size: str = "2m") -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(folder: Path) -> Path:
    """Take every free byte of ``folder``'s file system with one file (returned; delete it to free them)."""
    filler = folder / "filler.bin"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]
    return filler

"""A real headless browser for the report tests: Debian's chromium, run once per page.

``load_page`` opens a file from disk the way a person would (file://, no server), returns the
DOM after scripts ran and every console message the page produced (console.* calls, uncaught
exceptions, failed resource loads), read from chromium's own log (--enable-logging=stderr).
CI installs chromium with .ci/browser.sh; without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

CONSOLE_RE = re.compile(r":CONSOLE(?:[:(]\d*\)?)?\]\s*(.*)")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--hide-scrollbars",
]


def chromium_path() -> str | None:
    return os.environ.get("CHAOS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: CI must run .ci/browser.sh first")
        pytest.skip("chromium is not installed (run .ci/browser.sh)")
    return path


@dataclass
class Page:
    dom: str
    console: list[str]
    log: str


def _run(chromium: str, args: list[str], timeout: float) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="chaos-chromium-") as profile:
        p = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = p.communicate(timeout=timeout)
        finally:  # reap the whole process group (renderer, gpu, zygote helpers) in any case
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    return out, err


def load_page(chromium: str, path: Path, timeout: float = 120) -> Page:
    out, err = _run(
        chromium, ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom", Path(path).resolve().as_uri()], timeout
    )
    console = [m.group(1) for line in err.splitlines() if (m := CONSOLE_RE.search(line))]
    return Page(dom=out, console=console, log=err)


def screenshot(chromium: str, path: Path, png: Path, size: str = "1300,1800", timeout: float = 120) -> Path:
    _run(chromium, [f"--screenshot={png}", f"--window-size={size}", Path(path).resolve().as_uri()], timeout)
    return png

"""The SSH lab works from a virtual environment, as a new user's checkout runs it (issue 40, point 7).

The lab's hosts ran `python3` from the machine: in a virtual environment its packages were not
there, and every SSH test failed with "No module named 'langgraph'". This runs the lab's own check
(`test_lab_hosts_run_the_interpreter_chaos_runs_under`) in a pytest started from a virtual
environment over this interpreter's packages: its hosts must run the venv's interpreter.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import venv
from pathlib import Path

import pytest

# the SSH lab: one per machine (fixed addresses, a lock); its files run on one worker, one after another
pytestmark = pytest.mark.xdist_group("lab")

REPO = Path(__file__).resolve().parents[1]


def test_the_ssh_lab_runs_from_a_virtual_environment(tmp_path):
    if os.geteuid() != 0 or not shutil.which("sshd") and not Path("/usr/sbin/sshd").exists():
        pytest.skip("the SSH lab needs root (network namespaces) and sshd")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, symlinks=True).create(env_dir)  # no pip: nothing downloaded
    python = env_dir / "bin" / "python"
    # over *this* interpreter's packages: when it is itself a virtual environment (CI's), the new one's
    # system site is the base Python's, which may lack pytest; a .pth adds this one's site-packages
    mine = [p for p in site.getsitepackages() if Path(p).is_dir()]
    inner = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True, text=True, check=True)
    Path(inner.stdout.strip(), "chaos-test-parent.pth").write_text("\n".join(mine) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("VIRTUAL_ENV", None)
    p = subprocess.run(
        # -o addopts=: one process (the repository's -n auto needs pytest-xdist, which the venv may lack)
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "tests/test_infra_ssh.py",
            "-k",
            "interpreter_chaos_runs_under",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout[-3000:] + p.stderr[-2000:]

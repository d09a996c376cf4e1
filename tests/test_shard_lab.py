"""Story: the team runs each shard of the nightly on its own machine, over SSH, and merges at home.

Two lab hosts (network namespaces with their own hostname and a real sshd; ``tests/kits/lab.py``)
stand in for the machines. The test does what a CI job does across machines: it ships the suite to
each host (``tar c | ssh host tar x``), starts ``chaos nightly SUITE --shard 1/2`` on lab1 and
``--shard 2/2`` on lab2 at the same time through two ``ssh`` processes, each writing to a folder of
its own host, and brings each shard's night folder back over SSH (``ssh host tar c | tar x``) into
a merge folder, the way an artifact is uploaded and downloaded. The hosts share this machine's
files, but nothing relies on it: every byte that crosses goes through ssh.

What the user sees: the merged night says what one machine says for the same suite run here,
unsharded: the same cells, trial seeds, exit code, and verdicts (outside race kinds, whose outcome
is the scheduler's); each shard's run.json names the lab host it ran on; and nothing is left on the
hosts: no racer, no orchestrator, no work folder, no live run in the host's registry. Real
LangGraph racers, real SIGKILLs, real sshd; the tiny suite of ``tests/test_shard.py``, eight trials
(~46 s on a loaded 2-core machine, lab included: measured 45.9 s and 47.7 s).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kits.shardkit import CELLS, OPEN_KINDS, ROOT, chaos, seeds, summary, verdicts, write_tiny_suite

from chaos.envs import env_root
from chaos.running.trial import wait_until

# the SSH lab: one per machine (fixed addresses, a lock); its files run on one worker, one after another
pytestmark = pytest.mark.xdist_group("lab")

DATE = "2026-01-04"
SUITE_FILES = ("suite.yaml", "sweep.yaml", "stray.yaml")
NIGHTLY = b"-m\0chaos\0nightly"  # in /proc/PID/cmdline: a shard's orchestrator
# what a finished run must not leave in its output or state folder: a work folder (in the run folder
# or under --work-in) or a registry entry of a live run
LEFT = r"\( -name work -o -name 'chaos-work-*' -o -path '*/active/*' \) -print"


def host_env(h) -> dict[str, str]:
    """What chaos needs on a host: this machine's checkout first on PYTHONPATH (the worktree, as a
    host's own checkout would be), the host's own state folder (its run registry), the framework
    environments already made (``CHAOS_ENV_DIR``), and a PATH that finds this machine's tools."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",  # a host's locale (without one, Python coerces LC_CTYPE itself)
        "PYTHONPATH": str(ROOT),
        "CHAOS_STATE_DIR": str(h.dir / "state"),
        "CHAOS_ENV_DIR": str(env_root()),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def on_host(h, argv: list[str]) -> str:
    """The shell line sshd runs: in the host's own folder, with exactly ``host_env``, this machine's
    python (``sys.executable``) and ``argv``."""
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in host_env(h).items())
    return f"cd {shlex.quote(str(h.dir))} && exec env -i {assignments} {shlex.join([sys.executable, *argv])}"


PROBE = (
    "import json, os, socket, sys, importlib.util, chaos; print(json.dumps({'hostname': socket.gethostname(),"
    " 'python': sys.executable, 'chaos': chaos.__file__, 'langgraph': importlib.util.find_spec('langgraph') is not None,"
    " 'env': dict(os.environ), 'cwd': os.getcwd()}))"
)


def ssh(lab, h, command: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(lab.ssh_argv(h, command), input=stdin, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def night(lab, tmp_path_factory):
    d = tmp_path_factory.mktemp("sshshard")
    suite = write_tiny_suite(d)
    t0 = time.monotonic()
    # the environment each host runs chaos in, as the host itself reports it
    probes = {h.name: ssh(lab, h, on_host(h, ["-c", PROBE])) for h in lab.hosts}
    # ship the suite to each host: its own copy, in its own folder
    bundle = subprocess.run(["tar", "c", "-C", str(d), *SUITE_FILES], capture_output=True, check=True).stdout
    for h in lab.hosts:
        p = ssh(lab, h, f"mkdir -p {shlex.quote(str(h.dir / 'suite'))} && tar x -C {shlex.quote(str(h.dir / 'suite'))}", bundle)
        assert p.returncode == 0, p.stderr
    # both shards at once, each over its own ssh connection, and the unsharded night here beside them
    shards = [
        subprocess.Popen(
            lab.ssh_argv(
                h,
                on_host(
                    h,
                    ["-m", "chaos", "nightly", str(h.dir / "suite" / "suite.yaml"), "--shard", f"{h.index}/2"]
                    + ["--out", str(h.dir / "out"), "--date", DATE, "-q"],
                ),
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for h in lab.hosts
    ]
    full = chaos("nightly", suite, "--out", d / "full", "--date", DATE, "-q", wait=False)
    try:
        # at the same time: a shard's orchestrator is seen in each host at one moment (looked for
        # every 50 ms until then, or until a shard's ssh ends: each runs for many seconds, so a miss
        # means they ran one after the other)
        seen: list[bool] = []

        def both_running() -> bool:
            seen.append(all(lab.chaos_processes(NIGHTLY, hosts=[h]) for h in lab.hosts))
            return seen[-1] or any(p.poll() is not None for p in shards)

        wait_until(both_running, 120, idle=lambda _: time.sleep(0.05))
        together = any(seen)
        logs = [p.communicate(timeout=300)[0] for p in shards]
        full_log = full.communicate(timeout=300)[0]
    finally:
        for p in (*shards, full):
            if p.poll() is None:
                p.kill()
                p.wait()
    sharded_s = time.monotonic() - t0
    # bring each shard's night home over ssh, as a CI job downloads an artifact
    fetched, fetch_errors = {}, {}
    for h in lab.hosts:
        dest = d / "artifacts" / h.name
        dest.mkdir(parents=True)
        pack = ssh(lab, h, f"tar c -C {shlex.quote(str(h.dir / 'out'))} {DATE}")
        if pack.returncode != 0:
            fetch_errors[h.name] = pack.stderr.decode()
            continue
        subprocess.run(["tar", "x", "-C", str(dest)], input=pack.stdout, check=True)
        fetched[h.name] = dest / DATE
    merged = chaos("merge", *fetched.values(), "--out", d / "merged")
    # what each host has left once its shard ended: racers, orchestrators, work folders, live runs
    leftovers = {
        "processes": lab.chaos_processes(b"chaos.racer", NIGHTLY),
        "files": {
            h.name: ssh(lab, h, f"find {shlex.quote(str(h.dir / 'out'))} {shlex.quote(str(h.dir / 'state'))} {LEFT}")
            .stdout.decode()
            .split()
            for h in lab.hosts
        },
    }
    return {
        "d": d,
        "lab": lab,
        "probes": probes,
        "codes": [p.returncode for p in shards],
        "together": together,
        "logs": logs,
        "full": full,
        "full_log": full_log,
        "fetched": fetched,
        "fetch_errors": fetch_errors,
        "merged": merged,
        "leftovers": leftovers,
        "seconds": time.monotonic() - t0,
        "sharded_s": sharded_s,
    }


def test_each_host_runs_chaos_with_this_checkout_and_its_own_hostname(night):
    for h in night["lab"].hosts:
        p = night["probes"][h.name]
        assert p.returncode == 0, p.stderr.decode()
        seen = json.loads(p.stdout)
        assert seen["hostname"] == h.name != socket.gethostname()  # its own UTS namespace
        assert seen["python"] == sys.executable
        assert Path(seen["chaos"]).resolve().is_relative_to(ROOT)  # this checkout, not an installed copy
        assert seen["langgraph"]  # the suite's framework imports there
        assert seen["cwd"] == str(h.dir)
        assert seen["env"] == host_env(h)  # exactly what the command line set, nothing inherited


def test_two_hosts_in_parallel_merged_say_what_one_machine_says(night):
    d, full, merged = night["d"], night["full"], night["merged"]
    assert full.returncode in (0, 1, 2), night["full_log"][-3000:]
    assert all(c in (0, 1, 2) for c in night["codes"]), night["logs"]
    assert night["together"], "the two shards never ran at the same time"
    assert night["fetch_errors"] == {}
    assert merged.returncode == full.returncode, merged.stdout[-2000:] + merged.stderr[-2000:]
    one, joined = summary(d / "full" / DATE), summary(d / "merged" / DATE)
    assert [(r["scenario"], [c["cell_id"] for c in r["cells"]]) for r in joined["runs"]] == [
        (r["scenario"], [c["cell_id"] for c in r["cells"]]) for r in one["runs"]
    ]
    assert len([c for r in joined["runs"] for c in r["cells"]]) == CELLS
    assert verdicts(joined, OPEN_KINDS) == verdicts(one, OPEN_KINDS)
    assert joined["exit_code"] == one["exit_code"]
    assert [(s["shard"], s["status"]) for s in joined["shards"]] == [("1/2", "ok"), ("2/2", "ok")]
    # every trial ran once, on one host or the other, with the seed it has on one machine
    assert seeds(d / "merged" / DATE) == seeds(d / "full" / DATE) != {}
    ran = [seeds(night["fetched"][h.name]) for h in night["lab"].hosts]
    assert ran[0] and ran[1] and not set(ran[0]) & set(ran[1])
    # the budget this test keeps: lab up is the fixture's; the rest is measured here
    print(f"\nshards on ssh + unsharded here: {night['sharded_s']:.1f}s; with fetch and merge: {night['seconds']:.1f}s")


def test_each_shard_records_the_host_it_ran_on(night):
    for h in night["lab"].hosts:
        shard_night = night["fetched"][h.name]
        assert summary(shard_night)["shard"] == f"{h.index}/2"
        metas = [json.loads(p.read_text()) for p in sorted(shard_night.glob("*/*/run.json"))]
        assert metas, f"{h.name} brought back no run folder"
        for meta in metas:
            assert (meta["host"], meta["shard"]) == (h.name, f"{h.index}/2")
    here = [json.loads(p.read_text())["host"] for p in (night["d"] / "full" / DATE).glob("*/*/run.json")]
    assert here and set(here) == {socket.gethostname()}


def test_nothing_is_left_on_the_hosts(night):
    assert night["leftovers"]["processes"] == []
    assert night["leftovers"]["files"] == {h.name: [] for h in night["lab"].hosts}

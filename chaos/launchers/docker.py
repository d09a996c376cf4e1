"""The docker launcher: each racer in its own container, on the local Docker engine.

Why it looks like this:
- The run's folders (the trial dir, barrier dir, SQLite files) are bind-mounted at the *same*
  paths, so specs need no rewriting and arrivals/results are plain files, as for local racers.
- A racer at a barrier SIGSTOPs itself. As PID 1 of its container that would be a no-op (a PID
  namespace's init ignores signals it sends itself), so the container's PID 1 is
  ``chaos.racer.wrapper``, which forks the racer, waits for it and records its exit status.
- The orchestrator sees container processes with host pids (local engine): the racer's state is
  read from ``/proc/<host pid>/stat``, release is SIGCONT and a kill is SIGKILL to that pid. The
  kill is confirmed by the wrapper's status file (killed by signal 9) and the container's exit.
- Containers use the host network (a loopback DSN means the same server inside), get their own
  hostname (so the ledger's ``host`` column names the container), and carry labels
  ``chaos.run``/``chaos.trial``/``chaos.racer``: ``reap_run(run_id)`` removes every one of a run.
- The chaos source is bind-mounted read-only: racers run exactly the orchestrator's code.
  The image is ``chaos.remote.images.ensure_image()`` (offline build) unless one is given.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chaos
from chaos.launchers import ExitStatus, RacerFiles, State
from chaos.racer.errors import EnvironmentProblem
from chaos.racer.procfs import proc_state
from chaos.remote.images import venv_site_packages

SRC_MOUNT = "/opt/chaos-src"
LABEL_RUN = "chaos.run"
_SAFE = re.compile(r"[^a-zA-Z0-9_.-]")


class DockerError(EnvironmentProblem):
    """The docker engine refused or is unreachable (a one-line reason and what to do)."""


def client():
    import docker

    try:
        c = docker.from_env(timeout=60)
        c.ping()
        return c
    except Exception as exc:  # docker.errors.DockerException and socket errors
        raise DockerError(f"docker: no engine answers ({' '.join(str(exc).split())[:200]}): start dockerd or set DOCKER_HOST") from None


def racer_image(docker_client, image: str | None = None) -> tuple[str, str]:
    """The racer image (given, ``CHAOS_IMAGE``, or the offline build) and its interpreter's path."""
    if image is None:
        from chaos.remote.images import ensure_image

        image = os.environ.get("CHAOS_IMAGE")
        if not image:
            try:
                image = ensure_image(docker_client)
            except Exception as exc:
                raise DockerError(
                    f"docker: cannot build the offline racer image ({' '.join(str(exc).split())[:200]}): build"
                    " compose/Dockerfile and set CHAOS_IMAGE to it"
                ) from None
    from chaos.remote.images import image_python

    return image, image_python(docker_client, image)


def racer_environment(extra_paths: list[str]) -> dict[str, str]:
    """A racer's environment in a container: the mounted chaos source, user workloads, the venv."""
    return {
        "PYTHONPATH": os.pathsep.join([SRC_MOUNT, *extra_paths, *venv_site_packages()]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


def extra_volumes(volumes: dict, extra_paths: list[str], python: str, src: str) -> dict:
    """``volumes`` plus the user's workload folders (read-only) and the chaos source (read-only)."""
    out = dict(volumes)
    for p in extra_paths:
        shadows = python.startswith(p + "/") or p in ("/", "/tmp", "/usr", "/lib", "/etc")
        if p not in out and not any(p.startswith(v + "/") for v in out) and not shadows:
            out[p] = {"bind": p, "mode": "ro"}
    out[src] = {"bind": f"{SRC_MOUNT}/chaos", "mode": "ro"}
    return out


def _paths(obj, out: list[str]) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _paths(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _paths(v, out)
    elif isinstance(obj, str) and obj.startswith("/") and "\n" not in obj and len(obj) < 4096:
        out.append(obj)


def mounts_for(spec: dict, workdir: str) -> list[str]:
    """Host folders a racer needs: the trial dir and the folder of every absolute path in its spec."""
    dirs = [os.path.realpath(workdir)]
    paths: list[str] = []
    _paths({k: v for k, v in spec.items() if k not in ("target", "workload_params")}, paths)
    for p in paths:
        d = p if os.path.isdir(p) else os.path.dirname(p)
        if not os.path.isdir(d):
            continue
        if os.path.realpath(d) in ("/", "/tmp", "/var/tmp", os.path.expanduser("~")):
            raise DockerError(
                f"docker: {p} lies directly in {d}, which will not be mounted into racers:"
                " keep run folders (ledger, checkpoints) in a folder of their own"
            )
        dirs.append(os.path.realpath(d))
    out: list[str] = []
    for d in sorted(set(dirs)):
        if not any(d == o or d.startswith(o + "/") for o in out):
            out.append(d)
    return out


def _children(pid: int) -> list[int]:
    """Child pids of ``pid`` (the kernel's children list, else a scan of /proc for its PPid)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            fields = data[data.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == pid:
                out.append(int(d))
    return out


class DockerRacer(RacerFiles):
    def __init__(self, launcher: DockerLauncher, container, spec: dict, log_path: Path, status_path: Path):
        self.launcher = launcher
        self.container = container
        self.racer_id = spec["racer_id"]
        self.spec = spec
        self.host = container.name
        self.log_path = log_path
        self.status_path = status_path
        self.pid: int | None = None  # the racer's host pid
        self._wrapper_pid: int | None = None
        self._status: ExitStatus | None = None
        self.container_exit: int | None = None

    # -- pids -------------------------------------------------------------------------------
    def _resolve(self) -> None:
        if self._wrapper_pid is None:
            self.container.reload()
            wpid = (self.container.attrs.get("State") or {}).get("Pid") or 0
            if wpid and not os.path.exists(f"/proc/{wpid}"):
                raise DockerError(
                    f"docker: container {self.container.name} runs as host pid {wpid}, which this process cannot see:"
                    " the docker launcher needs a local engine (same machine, same pid namespace)"
                )
            self._wrapper_pid = wpid or None
        if self.pid is None and self._wrapper_pid:
            kids = _children(self._wrapper_pid)
            if kids:
                self.pid = kids[0]

    def _read_status(self) -> ExitStatus | None:
        try:
            ev = json.loads(self.status_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return ExitStatus(code=ev.get("code"), signal=ev.get("signal"))

    def _poll(self) -> ExitStatus | None:
        if self._status is None:
            st = self._read_status()
            if st is None:
                self._resolve()
                alive = self._wrapper_pid and proc_state(self._wrapper_pid) not in (None, "Z", "X")
                if not alive:
                    # the wrapper itself is gone without a word: the container's exit tells why
                    st = self._read_status() or self._from_container()
            self._status = st
            if st is not None:
                self.launcher._finish(self)
        return self._status

    def _from_container(self) -> ExitStatus | None:
        import docker

        try:
            code = int(self.container.wait(timeout=30)["StatusCode"])
        except docker.errors.NotFound:
            # removed under us (reap_run / chaos clean): it is gone, how it ended is unknown
            return ExitStatus(code=None, signal=None)
        except Exception:
            return None
        self.container_exit = code
        return ExitStatus(code=None, signal=code - 128) if code > 128 else ExitStatus(code=code, signal=None)

    # -- RacerHandle --------------------------------------------------------------------------
    def state(self) -> State:
        if self._poll() is not None:
            return "exited"
        if self.pid is None:
            return "running"
        s = proc_state(self.pid)
        if s in ("T", "t"):
            return "stopped"
        if s is None or s in ("Z", "X"):
            return "exited" if self._poll() is not None else "running"
        return "running"

    def arrivals(self) -> list[dict]:
        from chaos.racer.barrier import read_arrivals

        return read_arrivals(self.spec["barrier"]["dir"], self.racer_id)

    def _signal(self, sig: int) -> bool:
        self._resolve()
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, sig)
            return True
        except ProcessLookupError:
            return False

    def release(self) -> None:
        if self._status is None:
            self._signal(signal.SIGCONT)

    def kill(self) -> ExitStatus | None:
        """SIGKILL the racer's host pid; confirmed by the wrapper's record and the container's exit."""
        if self._poll() is None:
            if not self._signal(signal.SIGKILL):
                try:
                    self.container.kill(signal="SIGKILL")  # not started yet: kill the whole container
                except Exception:
                    pass
            deadline = time.monotonic() + 30
            while self._poll() is None and time.monotonic() < deadline:
                time.sleep(0.001)
        if self.container_exit is None and self._status is not None:
            try:
                self.container_exit = int(self.container.wait(timeout=30)["StatusCode"])
            except Exception:
                pass
        return self._status

    def exit_status(self) -> ExitStatus | None:
        return self._poll()

    def remove(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception as exc:
            if "No such container" not in str(exc) and "404" not in str(exc):
                raise


class DockerLauncher:
    name = "docker"

    def __init__(
        self, run_id: str, *, image: str | None = None, network: str = "host", docker_client=None, extra_paths: list[str] | None = None
    ):
        self.run_id = run_id
        # folders of user workload modules: mounted read-only at the same path, put on PYTHONPATH
        self.extra_paths = [os.path.realpath(p) for p in (extra_paths or []) if os.path.isdir(p)]
        self.client = docker_client or client()
        self.image, self.python = racer_image(self.client, image)
        self.network = network
        self.src = str(Path(chaos.__file__).resolve().parent)
        self._racers: list[DockerRacer] = []
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="chaos-docker-rm")
        self._pending: list = []

    def _start_one(self, spec: dict, workdir: str) -> DockerRacer:
        rid = spec["racer_id"]
        wd = Path(workdir)
        spec_path = wd / f"spec-{rid}.json"
        spec_path.write_text(json.dumps(spec))
        log_path = wd / f"racer-{rid}.log"
        status_path = wd / f"exit-{rid}.json"
        volumes = extra_volumes({d: {"bind": d, "mode": "rw"} for d in mounts_for(spec, workdir)}, self.extra_paths, self.python, self.src)
        tag = _SAFE.sub("_", f"{spec.get('trial_id', '')}-{rid}")
        name = f"chaos-{_SAFE.sub('_', self.run_id)}-{tag}-{secrets.token_hex(3)}"[:120]
        hostname = re.sub(r"[^a-z0-9-]", "-", f"c-{tag}".lower())[:63].strip("-")
        cmd = [
            self.python,
            "-m",
            "chaos.racer.wrapper",
            "--log",
            str(log_path),
            "--status",
            str(status_path),
            "--",
            self.python,
            "-m",
            "chaos.racer.main",
            str(spec_path),
        ]
        c = self.client.containers.run(
            self.image,
            cmd,
            detach=True,
            name=name,
            hostname=hostname,
            labels={LABEL_RUN: self.run_id, "chaos.trial": str(spec.get("trial_id", "")), "chaos.racer": rid},
            volumes=volumes,
            environment=racer_environment(self.extra_paths),
            network_mode=self.network,
            user=f"{os.getuid()}:{os.getgid()}",
            working_dir=str(wd),
            init=False,
        )
        h = DockerRacer(self, c, spec, log_path, status_path)
        self._racers.append(h)
        return h

    def _finish(self, h: DockerRacer) -> None:
        """Once a racer's exit is known: collect its container's exit code and remove it (in background)."""

        def done() -> None:
            if h.container_exit is None:
                try:
                    h.container_exit = int(h.container.wait(timeout=60)["StatusCode"])
                except Exception:
                    pass
            h.remove()

        self._pending.append(self._pool.submit(done))

    def start_group(self, specs: list[dict], workdir: str) -> list[DockerRacer]:
        if len(specs) == 1:
            return [self._start_one(specs[0], workdir)]
        with ThreadPoolExecutor(max_workers=min(8, len(specs))) as pool:
            return list(pool.map(lambda s: self._start_one(s, workdir), specs))

    def open_gate(self, handles: list[DockerRacer]) -> None:
        """SIGCONT every racer of the group (one host signal each, back to back)."""
        pids = []
        for h in handles:
            if h.exit_status() is None:
                h._resolve()
                if h.pid:
                    pids.append(h.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def reap(self) -> None:
        """Kill and remove every container this launcher started, then any left with the run's label."""
        for h in self._racers:
            if h.exit_status() is None:
                h.kill()
        for f in self._pending:
            f.result()
        for h in self._racers:
            h.remove()
        self._racers.clear()
        self._pending.clear()
        reap_run(self.run_id, self.client)


def run_containers(run_id: str | None = None, docker_client=None) -> list:
    """Containers (running or not) labelled by chaos, of one run or of all runs."""
    c = docker_client or client()
    label = f"{LABEL_RUN}={run_id}" if run_id else LABEL_RUN
    return c.containers.list(all=True, sparse=True, filters={"label": label})


def reap_run(run_id: str | None, docker_client=None) -> int:
    """Remove every container labelled with ``run_id`` (all chaos containers if None); returns how many."""
    n = 0
    for ct in run_containers(run_id, docker_client):
        try:
            ct.remove(force=True)
            n += 1
        except Exception as exc:
            if "No such container" not in str(exc) and "already in progress" not in str(exc):
                raise
    return n

"""A throwaway SSH lab: "remote hosts" that are network namespaces on this machine.

Each host is a network namespace with a veth into a lab bridge (10.77.0.0/24, hub 10.77.0.1,
hosts 10.77.0.11, .12, ...), its own UTS namespace (so ``hostname`` differs per host) and a real
OpenSSH ``sshd -D`` with a generated host key and one authorized key. A small TCP relay on the hub
address forwards 10.77.0.1:5432 to the local Postgres, so racers on the lab hosts reach the shared
ledger through a network address, as they would across machines. Everything is torn down at the
end: sshd processes, namespaces, links, the relay, the temp folder.

The addresses are fixed (``hosts/lab.yaml`` describes the same lab), so only one lab runs at a
time on a machine: a second one waits on a lock file until the first is torn down.

Manual use (for ``scenarios/crosshost_consume_once.yaml``):
    python -m tests.kits.lab up      # writes .lab/ (keys, known_hosts), runs until Ctrl-C, tears down
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HUB = "10.77.0.1"
PREFIX = 24
BRIDGE = "chaoslab0"
HOST_ADDR = "10.77.0.{}"  # host i -> 10.77.0.(10 + i)
SSHD = "/usr/sbin/sshd"
LOCK = "/run/lock/chaos-lab.lock" if os.path.isdir("/run/lock") else "/tmp/chaos-lab.lock"


def lab_python() -> str:
    """The interpreter the lab's hosts run racers with: the one chaos (and this test) runs under,
    so its packages are the hosts' too, in a virtual environment as on the machine's Python."""
    return os.path.abspath(sys.executable)


class LabUnavailable(RuntimeError):
    """The kernel or the machine cannot host the lab (no netns, no sshd): a reason to skip."""


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(list(argv), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"lab: {' '.join(argv)} failed: {p.stderr.strip() or p.stdout.strip()}")
    return p


def probe() -> str | None:
    """Why the lab cannot run here (None when it can)."""
    if os.geteuid() != 0:
        return "the SSH lab needs root (network namespaces, veth, sshd)"
    if not os.path.exists(SSHD):
        return "no /usr/sbin/sshd: run .ci/infra.sh (installs openssh-server)"
    if not shutil.which("ip"):
        return "no ip(8): run .ci/infra.sh (installs iproute2)"
    name = f"chaosprobe{os.getpid()}"
    p = _run("ip", "netns", "add", name, check=False)
    if p.returncode != 0:
        return f"the kernel refuses network namespaces: {p.stderr.strip()}"
    _run("ip", "netns", "del", name, check=False)
    return None


class Relay:
    """TCP relay listen_addr:port -> target (threads; closed with the lab)."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int]):
        self.target = target
        self.sock = socket.create_server(listen, reuse_port=False)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True, name="lab-relay")
        self.thread.start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            try:
                u = socket.create_connection(self.target, timeout=10)
            except OSError:
                c.close()
                continue
            c.settimeout(None)  # idle database connections must not time out in the relay
            u.settimeout(None)
            self._conns += [c, u]
            threading.Thread(target=self._pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=self._pipe, args=(u, c), daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self.thread.join(5)
        for s in self._conns:
            try:
                s.close()
            except OSError:
                pass


@dataclass
class LabHost:
    name: str
    index: int
    address: str
    netns: str
    dir: Path
    sshd: subprocess.Popen | None = None
    host_pub: str = ""

    @property
    def workdir(self) -> str:
        return str(self.dir / "work")


@dataclass
class Lab:
    """``Lab(n).up()`` ... ``down()``; or ``with Lab(2) as lab:``."""

    n: int = 2
    root: Path | None = None
    pg_target: tuple[str, int] | None = ("127.0.0.1", 5432)
    hosts: list[LabHost] = field(default_factory=list)
    relay: Relay | None = None
    _made_run_sshd: bool = False
    _own_root: bool = False
    _links: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ lifecycle
    def up(self) -> Lab:
        why = probe()
        if why:
            raise LabUnavailable(why)
        self._lock()  # one lab per machine (fixed addresses): wait for another test run's lab to end
        deadline = time.monotonic() + 900
        while _run("ip", "link", "show", BRIDGE, check=False).returncode == 0:
            # a lab that took no lock (older code) is up, or a crashed one left its bridge: never kill it
            if time.monotonic() > deadline:
                self.down()
                raise RuntimeError(f"lab: bridge {BRIDGE} stays up: a crashed lab? remove it with `python -m tests.kits.lab down`")
            time.sleep(0.2)  # polling the bridge's existence, an observable state
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="chaos-lab-"))
            self._own_root = True
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._keys()
            _run("ip", "link", "add", BRIDGE, "type", "bridge")
            self._links.append(BRIDGE)
            _run("ip", "addr", "add", f"{HUB}/{PREFIX}", "dev", BRIDGE)
            _run("ip", "link", "set", BRIDGE, "up")
            if not os.path.isdir("/run/sshd"):
                os.makedirs("/run/sshd", mode=0o755)
                self._made_run_sshd = True
            for i in range(1, self.n + 1):
                self.hosts.append(self._host(i))
            for h in self.hosts:
                self._wait_ssh(h)
            if self.pg_target:
                self.relay = Relay((HUB, self.pg_target[1]), self.pg_target)
            self._write_known_hosts()
        except BaseException:
            self.down()
            raise
        return self

    def _lock(self, timeout: float = 900) -> None:
        import fcntl

        self._lock_fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self._lock_fd)
                    self._lock_fd = None
                    raise RuntimeError(f"lab: another lab has held {LOCK} for {timeout:.0f}s: is a test run stuck?") from None
                time.sleep(0.05)  # polling the lock: another run's lab is up until it tears down

    def _keys(self) -> None:
        self.client_key = self.root / "id_ed25519"
        if not self.client_key.exists():
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "chaos-lab", "-f", str(self.client_key))

    def _host(self, i: int) -> LabHost:
        name = f"lab{i}"
        ns = f"chaoslab-{name}"
        hdir = self.root / name
        (hdir / "work").mkdir(parents=True, exist_ok=True)
        h = LabHost(name=name, index=i, address=HOST_ADDR.format(10 + i), netns=ns, dir=hdir)
        hostkey = hdir / "ssh_host_ed25519_key"
        if not hostkey.exists():
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(hostkey))
        h.host_pub = (hdir / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        shutil.copy(self.client_key.with_suffix(".pub"), hdir / "authorized_keys")
        # the interpreter chaos runs under, as it is named (a virtual environment's python is found
        # by its own path: resolving the link would give the base interpreter, without its packages)
        pybin = os.path.dirname(os.path.abspath(sys.executable))
        (hdir / "sshd_config").write_text(
            "\n".join(
                [
                    f"ListenAddress {h.address}:22",
                    f"HostKey {hostkey}",
                    f"AuthorizedKeysFile {hdir / 'authorized_keys'}",
                    f"PidFile {hdir / 'sshd.pid'}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "Subsystem sftp internal-sftp",
                    f"SetEnv PATH={pybin}:/usr/local/bin:/usr/bin:/bin",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        _run("ip", "netns", "add", ns)
        veth, peer = f"chl{i}h", f"chl{i}n"
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        self._links.append(veth)
        _run("ip", "link", "set", peer, "netns", ns)
        _run("ip", "link", "set", veth, "master", BRIDGE)
        _run("ip", "link", "set", veth, "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run("ip", "-n", ns, "link", "set", peer, "name", "eth0")
        _run("ip", "-n", ns, "addr", "add", f"{h.address}/{PREFIX}", "dev", "eth0")
        _run("ip", "-n", ns, "link", "set", "eth0", "up")
        _run("ip", "-n", ns, "route", "add", "default", "via", HUB)
        # own UTS namespace: the host's hostname is its lab name
        boot = f"import socket, os, sys; socket.sethostname({name!r}); os.execv({SSHD!r}, sys.argv[1:])"
        log = open(hdir / "sshd.log", "wb")
        h.sshd = subprocess.Popen(
            ["ip", "netns", "exec", ns, "unshare", "--uts", sys.executable, "-c", boot, SSHD, "-D", "-e", "-f", str(hdir / "sshd_config")],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return h

    def _wait_ssh(self, h: LabHost, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if h.sshd.poll() is not None:
                raise RuntimeError(f"lab: sshd of {h.name} exited {h.sshd.returncode}: {(h.dir / 'sshd.log').read_text()[-500:]}")
            try:
                with socket.create_connection((h.address, 22), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH"):
                        return
            except OSError:
                pass
            time.sleep(0.02)  # polling for the daemon's banner (an observable state)
        raise RuntimeError(f"lab: sshd of {h.name} does not answer on {h.address}:22 within {timeout}s")

    def _write_known_hosts(self) -> None:
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text("".join(f"{h.address} {h.host_pub[0]} {h.host_pub[1]}\n" for h in self.hosts))

    def ssh_argv(self, h: LabHost, command: str) -> list[str]:
        """The OpenSSH client command line that runs the shell line ``command`` on ``h`` as root:
        the lab's key and known_hosts only (no ~/.ssh/config, no agent), never a question asked."""
        opts = {
            "UserKnownHostsFile": str(self.known_hosts),
            "GlobalKnownHostsFile": "/dev/null",
            "StrictHostKeyChecking": "yes",
            "BatchMode": "yes",
            "IdentitiesOnly": "yes",
            "IdentityAgent": "none",
            "LogLevel": "ERROR",
        }
        return [
            "ssh",
            "-F",
            "/dev/null",
            "-i",
            str(self.client_key),
            *(a for k, v in opts.items() for a in ("-o", f"{k}={v}")),
            f"root@{h.address}",
            command,
        ]

    def inventory(
        self, path: Path | None = None, *, known_hosts: Path | None = None, extra: dict | None = None, hosts: list[dict] | None = None
    ) -> Path:
        """Write an inventory for this lab (YAML) and return its path."""
        import yaml

        path = path or (self.root / "inventory.yaml")
        data = {
            "known_hosts": str(known_hosts or self.known_hosts),
            "hosts": hosts
            if hosts is not None
            else [
                {
                    "name": h.name,
                    "address": h.address,
                    "port": 22,
                    "user": "root",
                    "key": str(self.client_key),
                    "python": lab_python(),
                    "workdir": h.workdir,
                }
                for h in self.hosts
            ],
        }
        data.update(extra or {})
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def pg_dsn(self, local_dsn: str) -> str:
        """``local_dsn`` as the lab hosts see it (through the relay on the hub address)."""
        from urllib.parse import urlsplit, urlunsplit

        p = urlsplit(local_dsn)
        userinfo = p.netloc.rsplit("@", 1)[0] + "@" if "@" in p.netloc else ""
        return urlunsplit((p.scheme, f"{userinfo}{HUB}:{self.pg_target[1]}", p.path, p.query, p.fragment))

    def sshd_pids(self) -> list[int]:
        return [h.sshd.pid for h in self.hosts if h.sshd and h.sshd.poll() is None]

    def processes_in(self, h: LabHost) -> list[int]:
        """Pids whose network namespace is the host's (its sshd and everything sshd started)."""
        p = _run("ip", "netns", "pids", h.netns, check=False)
        return [int(x) for x in p.stdout.split()]

    def chaos_processes(self, *names: bytes, hosts: list[LabHost] | None = None) -> list[int]:
        """Pids anywhere in the lab hosts (or in ``hosts``) whose command line names one of ``names`` (e.g.
        ``b"chaos.racer.main"``: racers and their wrappers; ``b"chaos.racer.forkserver"``: warm servers)."""
        out = []
        for h in self.hosts if hosts is None else hosts:
            for pid in self.processes_in(h):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read()
                except OSError:
                    continue
                if any(n in cmd for n in names):
                    out.append(pid)
        return out

    def down(self) -> None:
        if self.relay:
            self.relay.close()
            self.relay = None
        for h in self.hosts:
            for pid in self.processes_in(h):  # sshd, its sessions, any racer left: all of this host
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if h.sshd:
                try:
                    h.sshd.wait(10)
                except subprocess.TimeoutExpired:
                    pass
            _run("ip", "netns", "del", h.netns, check=False)
        self.hosts.clear()
        for link in reversed(self._links):
            _run("ip", "link", "del", link, check=False)
        self._links.clear()
        if self._made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)
            self._made_run_sshd = False
        if self._own_root and self.root:
            shutil.rmtree(self.root, ignore_errors=True)
        if getattr(self, "_lock_fd", None) is not None:
            os.close(self._lock_fd)  # releases the lock for the next lab
            self._lock_fd = None

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()


def force_down() -> None:
    """Remove a crashed lab's leftovers (namespaces and links by their fixed names)."""
    for i in range(1, 9):
        for pid in _run("ip", "netns", "pids", f"chaoslab-lab{i}", check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        _run("ip", "netns", "del", f"chaoslab-lab{i}", check=False)
        _run("ip", "link", "del", f"chl{i}h", check=False)
    _run("ip", "link", "del", BRIDGE, check=False)


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "up"
    if cmd == "down":
        force_down()
        return 0
    if cmd == "up":
        root = Path(__file__).resolve().parents[2] / ".lab"
        lab = Lab(2, root=root)
        lab.up()
        lab.inventory(root / "inventory.yaml")
        print(f"lab up: {', '.join(f'{h.name}={h.address}' for h in lab.hosts)}; keys and known_hosts in {root}")
        print(f"Postgres for lab hosts: {lab.pg_dsn('postgresql://chaos@127.0.0.1:5432/chaos')} (relay)")
        print("Ctrl-C tears it down")
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
        finally:
            lab.down()
            shutil.rmtree("/tmp/chaos-lab", ignore_errors=True)  # the workdirs hosts/lab.yaml names
        return 0
    print("usage: python -m tests.kits.lab up|down", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

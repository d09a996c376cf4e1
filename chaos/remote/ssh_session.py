"""One authenticated SSH connection to one inventory host (paramiko), with its control agent.

Why a module of its own: the launcher and ``chaos hosts check`` both need exactly the same
connection rules, and they are the security-relevant part:
- host keys are verified against the inventory's known_hosts (reject by default); trust on first
  use only when asked, printing and recording the fingerprint; a changed key is always refused;
- each failure is one line naming the host and saying what to do: unreachable (after retries with
  back-off), authentication refused, unknown or changed host key, unusable key file, missing python;
- remote commands are built with ``shlex`` from fixed words and validated inventory values only.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shlex
import threading
import time
from typing import TYPE_CHECKING

from chaos.racer.errors import EnvironmentProblem
from chaos.remote.inventory import Host, Inventory

if TYPE_CHECKING:  # paramiko is imported when a session connects, not when chaos loads
    import paramiko


class HostError(EnvironmentProblem):
    """A host that cannot be used: names it, says what is wrong and what to do."""


def fingerprint(key) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")


class HostSession:
    """One authenticated SSH connection to one inventory host, shared by its racers."""

    def __init__(self, host: Host, inventory: Inventory, *, trust_on_first_use: bool | None = None, say=None):
        self.host = host
        self.inv = inventory
        self.tofu = inventory.trust_on_first_use if trust_on_first_use is None else trust_on_first_use
        self.say = say or (lambda msg: print(msg, flush=True))
        self.client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.Lock()
        self._sftp_lock = threading.RLock()
        self._agent_lock = threading.Lock()
        self._agent: paramiko.Channel | None = None
        self.where = f"host {host.name} ({host.user}@{host.address}:{host.port})"

    # ------------------------------------------------------------------ connect
    def connect(self) -> HostSession:
        import paramiko

        h, inv = self.host, self.inv
        if not os.path.isfile(h.key):
            raise HostError(f"{self.where}: key file {h.key} does not exist: fix 'key' in the inventory")
        try:
            pkey = paramiko.PKey.from_path(h.key)
        except (OSError, paramiko.SSHException, ValueError) as exc:
            raise HostError(
                f"{self.where}: cannot use key file {h.key} ({' '.join(str(exc).split())}): give an unencrypted OpenSSH/PEM private key"
            ) from None
        attempts = inv.retries + 1
        last = ""
        for attempt in range(1, attempts + 1):
            client = paramiko.SSHClient()
            if os.path.exists(inv.known_hosts):
                client.load_host_keys(inv.known_hosts)
            # _Policy has paramiko's one policy method; subclassing would import paramiko with chaos
            client.set_missing_host_key_policy(_Policy(self))  # type: ignore[arg-type]
            try:
                client.connect(
                    h.address,
                    port=h.port,
                    username=h.user,
                    pkey=pkey,
                    timeout=inv.connect_timeout_s,
                    banner_timeout=inv.connect_timeout_s,
                    auth_timeout=inv.connect_timeout_s,
                    look_for_keys=False,
                    allow_agent=False,
                )
                self.client = client
                self.transport().set_keepalive(15)
                return self
            except paramiko.BadHostKeyException as exc:
                client.close()
                raise HostError(
                    f"{self.where}: host key CHANGED: {inv.known_hosts} has {fingerprint(exc.expected_key)}, the host offers"
                    f" {fingerprint(exc.key)}; refusing (possible impostor). If the host was really re-keyed, remove its"
                    f" line from {inv.known_hosts} and check the new fingerprint"
                ) from None
            except _UnknownHostKey as exc:
                client.close()
                raise HostError(
                    f"{self.where}: unknown host key {exc.fp} ({exc.kind}), not in {inv.known_hosts}; verify the"
                    " fingerprint on the host, then add it (ssh-keyscan) or allow trust_on_first_use"
                ) from None
            except paramiko.AuthenticationException as exc:
                client.close()
                raise HostError(
                    f"{self.where}: authentication refused for user {h.user} with key {h.key} ({exc}): install the public"
                    " key in the host's authorized_keys or fix 'user'/'key'"
                ) from None
            except (TimeoutError, OSError, paramiko.SSHException, EOFError) as exc:
                client.close()
                last = " ".join(str(exc).split()) or type(exc).__name__
                if isinstance(exc, paramiko.SSHException) and "Error reading SSH protocol banner" not in last:
                    if attempt == attempts:
                        break
                if attempt < attempts:
                    time.sleep(min(0.2 * 2**attempt, 2))  # back-off between connection attempts
        raise HostError(f"{self.where}: unreachable after {attempts} attempt(s): {last}; check the address/port and that sshd runs there")

    def connected(self) -> paramiko.SSHClient:
        """The SSH client; a session that is not connected is a host error, not an AttributeError."""
        if self.client is None:
            raise HostError(f"{self.where}: not connected (the session was closed or never connected)")
        return self.client

    def transport(self) -> paramiko.Transport:
        transport = self.connected().get_transport()
        if transport is None:
            raise HostError(f"{self.where}: not connected (the session was closed or never connected)")
        return transport

    def open_channel(self) -> paramiko.Channel:
        """A new session channel on the connection (one per racer, agent or fork server)."""
        return self.transport().open_session()

    # ------------------------------------------------------------------ commands
    def run(self, argv: list[str], *, timeout: float = 30, cwd: str | None = None) -> tuple[int, str, str]:
        """Run argv on the host (quoted word by word); returns (exit status, stdout, stderr)."""
        cmd = shlex.join(argv)
        if cwd:
            cmd = f"cd {shlex.quote(cwd)} && {cmd}"
        _, out, err = self.connected().exec_command(cmd, timeout=timeout)
        o, e = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        return out.channel.recv_exit_status(), o, e

    def start_agent(self, code_dir: str) -> None:
        """Start the host's control agent (``chaos.racer.remote_agent``) on its own channel."""
        py = self.host.python
        argv = ["env", f"PYTHONPATH={code_dir}", "PYTHONDONTWRITEBYTECODE=1", py, "-m", "chaos.racer.remote_agent"]
        chan = self.open_channel()
        chan.exec_command(f"exec {shlex.join(argv)}")
        self._agent = chan
        self._agent_out = chan.makefile("rb")
        hello = self._agent_out.readline()
        if not hello.startswith(b"{"):
            err = chan.makefile_stderr("rb").read(500).decode(errors="replace")
            raise HostError(f"{self.where}: the control agent did not start ({err.strip()}): is {py} a Python 3.11+?")

    def agent(self, **req) -> dict:
        """One request to the control agent (about a millisecond on a LAN)."""
        with self._agent_lock:
            if self._agent is None:
                raise HostError(f"{self.where}: the control agent is not running (the session was closed)")
            self._agent.sendall((json.dumps(req) + "\n").encode())
            line = self._agent_out.readline()
        if not line:
            raise HostError(f"{self.where}: the control agent's channel closed (connection lost?)")
        return json.loads(line)

    @contextlib.contextmanager
    def sftp(self):
        """The session's SFTP client, for one thread at a time. paramiko's SFTPClient can deadlock
        when threads share it (paramiko issues #718, #1836), and every cold racer's reader thread
        fetches its own result: unserialised, a race trial hung once for 186 s."""
        with self._sftp_lock:
            if self._sftp is None:
                self._sftp = self.connected().open_sftp()
            yield self._sftp

    def mkdirs(self, path: str) -> None:
        rc, _, err = self.run(["mkdir", "-p", "--", path])
        if rc != 0:
            raise HostError(f"{self.where}: cannot create {path}: {err.strip()}: fix 'workdir' in the inventory")

    def put_bytes(self, path: str, data: bytes) -> None:
        tmp = f"{path}.part"
        with self.sftp() as sftp:
            with sftp.open(tmp, "wb") as f:
                f.write(data)
            sftp.posix_rename(tmp, path)

    def get_bytes(self, path: str) -> bytes | None:
        try:
            with self.sftp() as sftp, sftp.open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            if getattr(exc, "errno", None) == 2:
                return None
            raise

    def check_python(self) -> str:
        rc, out, err = self.run([self.host.python, "-c", "import sys; print(sys.version.split()[0])"])
        if rc != 0:
            raise HostError(
                f"{self.where}: python {self.host.python!r} does not run there (exit {rc}: {err.strip()[-200:]}):"
                " set 'python' in the inventory to an interpreter with the framework installed"
            )
        return out.strip()

    def close(self) -> None:
        if self._agent is not None:
            try:
                self._agent.close()
            except Exception:
                pass
            self._agent = None
        if self._sftp is not None:
            try:
                self._sftp.close()
            except Exception:
                pass
            self._sftp = None
        if self.client is not None:
            self.client.close()
            self.client = None


class _UnknownHostKey(Exception):
    def __init__(self, fp: str, kind: str):
        self.fp, self.kind = fp, kind


class _Policy:
    """Reject unknown host keys (naming their fingerprint), or trust and record them on first use."""

    def __init__(self, session: HostSession):
        self.s = session

    def missing_host_key(self, client, hostname, key) -> None:
        fp = fingerprint(key)
        if not self.s.tofu:
            raise _UnknownHostKey(fp, key.get_name())
        path = self.s.inv.known_hosts
        client.get_host_keys().add(hostname, key.get_name(), key)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a") as f:
            f.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
        self.s.say(f"{self.s.where}: trusting host key on first use: {key.get_name()} {fp} (recorded in {path})")

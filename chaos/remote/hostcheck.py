"""``chaos hosts check``: is every host of an inventory usable, before a run spends time on it?

Per host: reachable, authenticated, host key fingerprint (verified like a run's connection),
Python and framework versions, hostname, and the clock offset against this machine (best of five
round trips to a running remote Python, so interpreter start-up does not count).
"""

from __future__ import annotations

import os
import shlex
import time
from concurrent.futures import ThreadPoolExecutor

from chaos.remote.inventory import Host, Inventory, load_inventory
from chaos.remote.ssh_session import HostError, HostSession, fingerprint


def probe() -> str:
    """The Python a host runs for the check: its version, hostname and the installed version of every
    distribution a registered framework's racers import (``racer_distributions``), then one clock
    reading per line it is sent."""
    from chaos.targets import racer_distributions

    return (
        "import sys, time, socket\n"
        "from importlib import metadata\n"
        "def v(d):\n"
        "    try: return metadata.version(d)\n"
        "    except Exception: return None\n"
        f"ds = {list(racer_distributions())!r}\n"
        "print('INFO', sys.version.split()[0], socket.gethostname(), *[f'{d}={v(d)}' for d in ds], flush=True)\n"
        "for _ in iter(sys.stdin.readline, ''):\n"
        "    print('T', repr(time.time()), flush=True)\n"
    )


def check_host(host: Host, inventory: Inventory, *, trust_on_first_use: bool | None = None, say=None) -> dict:
    """Reachability, authentication, host key, Python and framework versions, clock offset of one host."""
    out: dict = {"host": host.name, "address": f"{host.user}@{host.address}:{host.port}", "ok": False}
    s = HostSession(host, inventory, trust_on_first_use=trust_on_first_use, say=say)
    try:
        s.connect()
    except HostError as exc:
        out["error"] = exc.message
        return out
    try:
        out["reachable"] = out["authenticated"] = True
        key = s.transport().get_remote_server_key()
        out["host_key"] = f"{key.get_name()} {fingerprint(key)}"
        chan = s.open_channel()
        chan.exec_command(shlex.join([host.python, "-c", probe()]))
        f = chan.makefile("rb")
        first = f.readline().decode().split()
        if not first or first[0] != "INFO":
            err = chan.makefile_stderr("rb").read(300).decode(errors="replace").strip()
            out["error"] = (
                f"{s.where}: python {host.python!r} does not run there ({err or 'no output'}): set 'python' in"
                " the inventory to an interpreter with the framework installed"
            )
            chan.close()
            return out
        out["python"], out["hostname"] = first[1], first[2]
        out["versions"] = {k: (None if v == "None" else v) for k, v in (x.split("=", 1) for x in first[3:])}
        samples: list[tuple[float, float]] = []  # (round trip, clock offset)
        for _ in range(5):
            t0 = time.time()
            chan.sendall(b"\n")
            line = f.readline().decode().split()
            t1 = time.time()
            remote = float(line[1])
            samples.append((t1 - t0, remote - (t0 + t1) / 2))
        best = min(samples, key=lambda sample: sample[0])  # the fastest round trip bounds the offset best
        chan.shutdown_write()
        chan.close()
        out["rtt_ms"] = round(best[0] * 1000, 3)
        out["clock_offset_ms"] = round(best[1] * 1000, 3)
        out["ok"] = True
        return out
    finally:
        s.close()


def check_hosts(
    inventory_path: str | os.PathLike, names: list[str] | None = None, *, trust_on_first_use: bool | None = None, say=None
) -> list[dict]:
    inv = load_inventory(inventory_path)
    hosts = [inv.host(n) for n in names] if names else list(inv.hosts)
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(hosts)))) as pool:
        return list(pool.map(lambda h: check_host(h, inv, trust_on_first_use=trust_on_first_use, say=say), hosts))

"""A remote control agent: one long-lived process per SSH host, driven over one channel.

Why: every ``exec_command`` starts the user's login shell on the host (tens to hundreds of
milliseconds with a heavy ``.bashrc``), which would smear a race's start gate over a tenth of a
second. The agent answers JSON lines instead, in about a millisecond: ``signal`` (SIGCONT/SIGKILL
to racer pids), ``stat`` (a pid's state letter from /proc), ``time`` (the host's clock), ``find``
(pids whose command line contains a marker). It exits at end of stdin, i.e. with its session.
Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time

from chaos.racer.procfs import proc_state


def _find(marker: str) -> list[int]:
    out = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(d))
        except OSError:
            continue
    return out


def handle(req: dict) -> dict:
    op = req.get("op")
    if op == "signal":
        missing = []
        for pid in req["pids"]:
            try:
                os.kill(int(pid), int(req["sig"]))
            except ProcessLookupError:
                missing.append(pid)
        return {"ok": True, "missing": missing, "t": time.time()}
    if op == "stat":
        return {"ok": True, "state": proc_state(int(req["pid"]))}
    if op == "time":
        return {"ok": True, "t": time.time()}
    if op == "find":
        return {"ok": True, "pids": _find(str(req["marker"]))}
    return {"ok": False, "error": f"unknown op {op!r}"}


def main() -> int:
    sys.stdout.write(json.dumps({"ok": True, "agent": os.getpid(), "python": sys.version.split()[0]}) + "\n")
    sys.stdout.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        try:
            resp = handle(json.loads(line))
        except Exception as exc:  # a bad request is answered, never fatal
            resp = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(resp) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

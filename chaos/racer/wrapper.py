"""A tiny parent for a racer in a container or on a remote host: fork, wait, report the exit.

Why it exists:
- A racer stops itself with SIGSTOP at a barrier. As PID 1 of a container's PID namespace it
  could not (the kernel drops signals a namespace's init sends itself without a handler, and
  SIGSTOP has none). Under this wrapper the racer is PID 2, and stops for real.
- Over SSH nobody can ``waitpid`` the racer from the orchestrator's machine: the wrapper does, and
  reports the racer's exit (code or killing signal) so a remote SIGKILL is *confirmed*, not assumed.

The wrapper is never stopped by the racer (the racer stops only its own pid). It prints
``@@chaos-wrapper {json}`` lines: ``{"event": "started", "pid": N}`` and
``{"event": "exit", "code": C, "signal": S}``, optionally writes the exit JSON to ``--status``
atomically, and exits with the racer's code (128 + signal if killed). With ``--watch-stdin``
(SSH), end of stdin (the connection dropped) kills the racer: no orphan survives its session.
Standard library only.

Usage: python -m chaos.racer.wrapper [--log PATH] [--status PATH] [--watch-stdin] -- CMD ARGS...
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

PREFIX = "@@chaos-wrapper "


def _say(event: dict) -> None:
    sys.stdout.write(PREFIX + json.dumps(event) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    log = status = None
    watch = False
    while argv and argv[0] != "--":
        opt = argv.pop(0)
        if opt == "--log":
            log = argv.pop(0)
        elif opt == "--status":
            status = argv.pop(0)
        elif opt == "--watch-stdin":
            watch = True
        else:
            print(f"racer_wrapper: unknown option {opt!r}", file=sys.stderr)
            return 2
    if not argv or argv[0] != "--" or len(argv) < 2:
        print("usage: python -m chaos.racer.wrapper [--log P] [--status P] [--watch-stdin] -- CMD...", file=sys.stderr)
        return 2
    cmd = argv[1:]
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # the racer
        try:
            if log:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _say({"event": "started", "pid": pid, "wrapper_pid": os.getpid()})
    if watch:

        def watch_stdin() -> None:
            while os.read(0, 4096):
                pass
            try:
                os.kill(pid, signal.SIGKILL)  # our session is gone: the racer must not outlive it
            except ProcessLookupError:
                pass

        threading.Thread(target=watch_stdin, daemon=True).start()
    while True:
        try:
            _, st = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(st):
        ev = {"event": "exit", "code": None, "signal": os.WTERMSIG(st)}
        rc = 128 + os.WTERMSIG(st)
    else:
        ev = {"event": "exit", "code": os.WEXITSTATUS(st), "signal": None}
        rc = os.WEXITSTATUS(st)
    if status:
        tmp = f"{status}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(json.dumps(ev))
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, status)
    _say(ev)
    return rc


if __name__ == "__main__":
    sys.exit(main())

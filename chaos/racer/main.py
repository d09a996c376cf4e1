"""A racer: one OS process that performs one action of a workload and reports what it did.

``python -m chaos.racer.main SPEC.json`` reads a racer spec (plain JSON written by the orchestrator),
opens the effect ledger and the target's session (the workload over an instrumented persistence
layer), optionally waits at the start gate, sleeps its seeded jitter, performs its action, and
writes a result JSON atomically. A racer started ahead of its turn (``hold``: a sweep's resume
racer, started while its victim runs) imports what it needs, opens the ledger and builds its
workload once in memory (the adapter's ``prewarm``), then stops at the ``hold`` barrier until the
orchestrator continues it; only then does it open the session, so it touches the framework's store
no earlier than a racer started at that moment. A racer with ``afterwards`` actions stops at the
``afterwards`` barrier once its own actions are done, its session open, and performs them when
continued (a race's read of the checkpoint tree after every other racer ended, without a racer of
its own); their outcomes are kept apart from its own (``afterwards``). It knows nothing of other racers, and needs only the standard
library, the framework under test and its database driver.

A killed racer writes no result: the orchestrator records its call as ``info`` (indeterminate).
A racer that could not even build its workload exits 4 with ``status: harness_error``; one that has
no room left to write its result exits ``NO_SPACE_EXIT`` (75): a full disk, the environment's fault.

What the framework or the user's code raises is data, whatever its class: an action that raises a
``BaseException`` that is not an exit (pydantic-core's ``PanicException``, a user's own class) ends
as an ``error`` outcome like an ``Exception`` the adapter caught, so the racer still writes its
result and ``chaos.running.blame`` names the party by the traceback's frames. Only
``KeyboardInterrupt``, ``SystemExit`` and ``GeneratorExit`` end a racer unrecorded.

A thread that dies of an unhandled exception (``threading.excepthook``: a framework's background
saver, a thread the user's node started) is recorded in ``background_errors`` (``error_of`` plus the
thread's name), and at once in ``<result_path>.background.json`` too, so a racer that dies after it
without writing its result still leaves the evidence: its failure is then blamed on whoever owned
that thread, not on chaos.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import importlib
import json
import os
import random
import signal
import socket
import sys
import threading
import time
from typing import cast

from chaos.racer.barrier import BarrierClient, write_atomic
from chaos.racer.ledger import open_ledger
from chaos.racer.protocol import (
    NO_SPACE_EXIT,
    ActionOutcome,
    ActionSpec,
    BackgroundError,
    InspectResult,
    RacerResult,
    RacerSpec,
    background_path,
)
from chaos.racer.redact import declare_params
from chaos.targets import get_target
from chaos.targets.base import RacerHalf, Session, load_racer_half

HARNESS_ERROR_EXIT = 4
# workloads this process has built once in memory already (a fork server's pooled child does that
# before it is handed a spec): a held racer does not build them a second time
PREWARMED: set[str] = set()
# what ends a racer as asked, never recorded as anyone's error
EXITS = (KeyboardInterrupt, SystemExit, GeneratorExit)


class BackgroundErrors:
    """Records every thread that dies of an unhandled exception while a racer runs its spec.

    Installed as ``threading.excepthook`` for the duration (``with``); the previous hook still runs,
    so the log keeps the traceback. Each error is ``error_of(exc)`` plus ``thread`` (its name); the
    list is rewritten to ``path`` (if given) at every new error.
    """

    def __init__(self, path: str | None):
        self.path = path
        self.errors: list[BackgroundError] = []
        self._previous = threading.excepthook
        self._lock = threading.Lock()  # two threads dying at once write one file (its temp name is per process)

    def __enter__(self) -> BackgroundErrors:
        threading.excepthook = self._hook
        return self

    def __exit__(self, *exc: object) -> None:
        threading.excepthook = self._previous

    def _hook(self, args: threading.ExceptHookArgs) -> None:
        try:
            from chaos.targets.base import error_of

            if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
                err = cast(BackgroundError, {**error_of(args.exc_value), "thread": args.thread.name if args.thread is not None else "?"})
                with self._lock:
                    self.errors.append(err)
                    if self.path:
                        write_atomic(self.path, json.dumps(self.errors, default=repr).encode(), durable=False)
        finally:
            self._previous(args)


def set_parent_death_signal() -> bool:
    """Die with the orchestrator: a racer must never outlive the process that started it.

    Returns False where the kernel offers no parent-death signal (not Linux).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    except Exception:
        return False  # not Linux: the launcher's process group still reaps us


def preimport(adapter: RacerHalf) -> list[str]:
    """Import what the adapter's racers import (its ``PRELOAD``, and each of ``PRELOAD_OPTIONAL`` that
    is there); opens nothing, touches no store. Returns the modules imported."""
    loaded = []
    for name in adapter.PRELOAD:
        importlib.import_module(name)
        loaded.append(name)
    for name in adapter.PRELOAD_OPTIONAL:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except ImportError:
            pass  # e.g. no Postgres driver in this environment: racers that need it will say so
    return loaded


def adapter_module(spec: RacerSpec) -> str:
    """The adapter module the spec names (``target.module``, filled by the orchestrator from
    ``TargetInfo.module``); a spec written by hand may leave it out: then the registry's, by framework."""
    return spec["target"].get("module") or get_target(spec["target"]["framework"]).module


def run_spec(spec: RacerSpec) -> tuple[RacerResult, int]:
    """Perform the spec's actions; returns (result, exit code).

    A spec written by hand (tests, benchmarks) may leave out what has a default: no gate, no
    hold, no jitter, no inspections, no distributions."""
    from chaos.targets.base import distribution_versions

    t0 = time.monotonic_ns()
    result: RacerResult = {
        "racer_id": spec["racer_id"],
        "trial_id": spec.get("trial_id"),
        "pid": os.getpid(),
        "host": spec.get("host") or socket.gethostname(),
        "t_start_mono_ns": t0,
        "t_start_wall": time.time(),
    }
    result["versions"] = distribution_versions(spec.get("distributions") or [])
    barrier = BarrierClient.from_spec(spec["barrier"], spec["racer_id"])
    result_path = spec.get("result_path")
    with BackgroundErrors(background_path(result_path) if result_path else None) as background:
        code = _run(spec, result, barrier)
        result["background_errors"] = list(background.errors)
    result["trace"] = barrier.trace
    result["marks"] = barrier.marks
    result["t_end_mono_ns"] = time.monotonic_ns()
    return result, code


def _error_outcome(exc: BaseException) -> ActionOutcome:
    from chaos.targets.base import error_of, outcome

    return outcome("error", error=error_of(exc))


def _run(spec: RacerSpec, result: RacerResult, barrier: BarrierClient) -> int:
    """The racer's work on ``result`` (filled in place); returns the exit code."""
    from chaos.targets.base import error_of

    session: Session | None = None
    ledger = None
    try:
        ledger = open_ledger(
            spec["ledger"],
            context={
                "run_id": spec.get("run_id", ""),
                "cell_id": spec.get("cell_id", ""),
                "trial_id": spec.get("trial_id", ""),
                "racer_id": spec["racer_id"],
                "host": spec.get("host"),
            },
        )
        result["t_ledger_mono_ns"] = time.monotonic_ns()
        adapter = load_racer_half(adapter_module(spec))
        if spec.get("hold"):
            # what can be done before its turn, touching no store: a cold racer's framework import,
            # and a throwaway in-memory build of its workload (fills caches and, in a forked racer,
            # takes the first-touch copies of the server's pages off the path after the kill)
            preimport(adapter)
            if spec["workload"] not in PREWARMED:
                try:
                    adapter.prewarm(only=spec["workload"])
                except Exception:  # a throwaway build; the real one reports its own failure
                    pass
            barrier.hold()
            result["t_unheld_mono_ns"] = time.monotonic_ns()
        session = adapter.open_session(spec, barrier, ledger)
        result["gated_task"] = session.gated_task
        result["workload_meta"] = dict(session.meta or {})
        result["t_ready_mono_ns"] = time.monotonic_ns()
        if spec.get("inspect_before"):
            result["inspect_before"] = session.inspect()
            result["t_inspected_mono_ns"] = time.monotonic_ns()
        if spec.get("gate"):
            barrier.gate()
            result["t_released_mono_ns"] = time.monotonic_ns()
        jitter_ms = float(spec.get("jitter_ms") or 0)
        if jitter_ms > 0:
            delay = random.Random(int(spec.get("seed", 0))).uniform(0, jitter_ms) / 1000.0
            result["jitter_s"] = delay
            time.sleep(delay)  # the experiment's jitter, not synchronisation
        outcomes: list[ActionOutcome] = []
        result["outcomes"] = outcomes
        for action in spec.get("actions") or []:
            previous = outcomes[-1]["status"] if outcomes else None
            if action.get("if") and action["if"] != previous:
                continue  # e.g. answer an interrupt only if the run stopped at one
            if action.get("only_if_durable") and nothing_durable(result.get("inspect_before")):
                continue  # nothing was durably asked: there is no interrupt a human could answer
            if not result.get("t_invoke_mono_ns"):
                result["t_invoke_mono_ns"] = time.monotonic_ns()
            before = len(session.fired)
            outcome = _perform_one(session, action)
            for _ in range(int(action.get("repeat") or 1) - 1):  # every later pause, answered the same way
                if outcome["status"] != "interrupted":
                    break
                fired_so_far = len(session.fired) - before
                outcome = folded(outcome, _perform_one(session, action), fired_so_far)
            outcome["fired"] = [f["effect_key"] for f in list(session.fired)[before:]]
            outcome["action"] = action
            outcomes.append(outcome)
            result["t_return_mono_ns"] = time.monotonic_ns()
            if outcome["status"] in ("error", "unsupported", "nothing_saved") and not action.get("keep_going"):
                break  # later actions would act on a state the workload never reached
        if spec.get("inspect_after"):
            t_after = time.monotonic_ns()
            result["inspect_after"] = session.inspect()
            result["inspect_after_ms"] = (time.monotonic_ns() - t_after) / 1e6
        if spec.get("afterwards"):
            barrier.afterwards()
            result["t_afterwards_mono_ns"] = time.monotonic_ns()
            result["afterwards"] = [_perform_afterwards(session, action) for action in spec.get("afterwards") or []]
        result["fired"] = list(session.fired)
        result["status"] = "ok"
        code = 0
    except EXITS:
        raise
    except BaseException as exc:  # blamed by its frames: the factory's, the framework's or chaos's
        result["status"] = "harness_error"
        result["error"] = error_of(exc)
        result["fired"] = list(session.fired) if session is not None else []
        code = HARNESS_ERROR_EXIT
    finally:
        t_close = time.monotonic_ns()
        if session is not None:
            session.close()
        if ledger is not None:
            ledger.close()
        result["close_ms"] = (time.monotonic_ns() - t_close) / 1e6
    return code


def _perform_one(session: Session, action: ActionSpec) -> ActionOutcome:
    """One action performed by the session (``inspect`` by the racer itself): its outcome, an
    ``unsupported`` or ``error`` outcome for what the framework or the app raised."""
    from chaos.targets.base import Unsupported, outcome_of_inspect, unsupported_outcome

    try:
        if action.get("op") == "inspect":  # generic: every session has inspect()
            return outcome_of_inspect(session.inspect())
        return session.perform(action)
    except Unsupported as exc:
        return unsupported_outcome(str(exc))
    except Exception:
        raise  # the adapter catches what the framework raises: one escaping it is chaos's own (the racer's caller)
    except EXITS:
        raise
    except BaseException as exc:  # PanicException & co: the framework's or the app's answer all the same
        return _error_outcome(exc)


def folded(first: ActionOutcome, later: ActionOutcome, fired_before: int) -> ActionOutcome:
    """One outcome for an action performed again (``repeat``): the later call's, with the answers and
    approvals of both in order (``fired_before`` of the later call's approvals counted from the
    first call's start: ``fired_before`` effects had fired when the later call began)."""
    out = dict(later)
    if first.get("answered") is not None or later.get("answered") is not None:
        out["answered"] = [*(first.get("answered") or []), *(later.get("answered") or [])]
    approvals = [
        *(first.get("approvals") or []),
        *({**a, "fired_before": int(a.get("fired_before", 0)) + fired_before} for a in later.get("approvals") or []),
    ]
    if approvals:
        out["approvals"] = approvals
    return cast(ActionOutcome, out)


def _perform_afterwards(session: Session, action: ActionSpec) -> ActionOutcome:
    """One of the spec's ``afterwards`` actions (a read of the thread once the other racers ended):
    its outcome, or what it raised as an ``error`` outcome (the racer's own work is done and kept)."""
    from chaos.targets.base import Unsupported, unsupported_outcome

    try:
        return session.perform(action)
    except Unsupported as exc:
        return unsupported_outcome(str(exc))
    except EXITS:
        raise
    except BaseException as exc:
        return _error_outcome(exc)


def nothing_durable(state: InspectResult | None) -> bool:
    """Did the racer find the thread with nothing durable (no checkpoint, the store readable)?"""
    if state is None or state.get("error"):
        return False  # unknown is not empty: the action runs and its outcome says what happened
    if state.get("lost_thread"):
        # behind a server, a thread it created and then lost is no "nothing asked": its client was
        # told of the run (and of its pause); the recovery re-creates the thread and asks again
        return False
    return not state.get("checkpoints") and not state.get("durable_checkpoints")


def serve(spec: RacerSpec, *, forked: bool = False) -> int:
    """Run ``spec`` and write its result file: the whole life of a racer once it has its spec.

    A cold racer (``main``) and a warm one (forked by ``chaos.racer.forkserver``) both end up here, so
    both do exactly the same work from this point on; a forked one also says which modules it
    imported that its server had not (``late_imports``).
    """
    declare_params(spec.get("workload_params") or {})  # masked by value in what this racer writes
    imported = list(sys.modules) if forked else None
    result, code = run_spec(spec)
    if imported is not None:
        known = set(imported)
        result["late_imports"] = [m for m in sys.modules if m not in known]
    try:
        write_atomic(spec["result_path"], json.dumps(result, default=repr).encode(), durable=False)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # no room for the result: its exit code is all the orchestrator gets (a full disk, not chaos's fault)
        with contextlib.suppress(OSError):
            os.unlink(f"{spec['result_path']}.tmp{os.getpid()}")
        return NO_SPACE_EXIT
    return code


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    set_parent_death_signal()
    if len(argv) != 1:
        print("usage: python -m chaos.racer.main SPEC.json", file=sys.stderr)
        return 2
    with open(argv[0], "rb") as f:
        spec = json.loads(f.read())
    return serve(spec)


if __name__ == "__main__":
    sys.exit(main())

"""Guards (``target.guard``): a saver wrapper or an app-level guard, measured beside stock (racer side).

Why: a team that adopts a guard (the paper's REMIT, an idempotency table, a lock, a claim row)
needs chaos to say whether it holds, side by side with the stock framework, in one run. A guard is
a ``Guard`` record, from a built-in name or from ``package.module:factory`` (``factory(ctx) ->
Guard``, ``ctx`` a ``GuardContext``):

* ``wrap(saver, ctx) -> saver``: the guarded saver, built over the stock one (``None``: an
  app-level guard, one the workload's own code applies, e.g. a claim row before the gated effect);
* ``inspect``: the ``configurable`` keys every read chaos makes of a thread carries, so chaos's
  inspections never consume, claim or lock what the guard keys on (REMIT's ``remit_inspect``);
* ``refuses``: the exceptions that are the guard's loud refusal. A call they end before any effect
  fired is ``refused`` (an outcome, not an error); after an effect, the error names the guard;
* ``fork``: the ``configurable`` keys a fork carries (a guard whose fork intent is an explicit flag);
  ``intent``: the retry/fork discriminator the guard adds to the API (FI), if any.

Built-ins (REMIT, ``remit-contract`` on PyPI, imported only in the racers' Python):
``remit`` (the fork repair: an explicit ``checkpoint_id`` or ``remit_fork`` is fork intent),
``remit_gate`` (plus the cross-process consume-once gate), ``remit_validator`` (plus a validator
that refuses a state whose value breaks the graph's state schema), ``remit_fork_flag`` (the fork
repair keyed on REMIT's explicit flag only: a fork carries ``remit_fork``). REMIT wraps the synchronous
SqliteSaver / PostgresSaver (and InMemorySaver without the gate): the scenario refuses any other
backend at load (``check_guard``), one line, exit 3.

``Reads`` tells the saver's reads apart: those made while the app runs (the graph's invoke, an
``update_state``, the team's recovery) go through untouched; every other read is chaos's own and
carries the guard's ``inspect`` keys. ``python -m chaos.targets.langgraph.guards REF`` loads a guard in the
racers' Python (the preflight: a guard that does not import is refused before any trial).
"""

from __future__ import annotations

import sys
import tempfile
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos.targets import NO_GUARD, is_no_guard

# built-in guards: name -> what it is (the scenario field's documentation and the load check)
BUILTIN: dict[str, str] = {
    "remit": "REMIT's fork repair (remit.wrap; an explicit checkpoint_id or remit_fork is fork intent)",
    "remit_gate": "REMIT with its cross-process consume-once gate (remit.wrap(..., cross_process_gate=True))",
    "remit_validator": "REMIT with a validator refusing a state whose value breaks the graph's state schema",
    "remit_fork_flag": "REMIT's fork repair keyed on its explicit flag (fork_on_explicit_checkpoint=False; a fork carries remit_fork)",
}
REMIT_DIST = "remit-contract"
# the backends REMIT's shim wraps (synchronous savers; the gate needs a connection as ``.conn``)
REMIT_BACKENDS = ("sqlite", "postgres", "memory")
REMIT_GATE_BACKENDS = ("sqlite", "postgres")
NONE = NO_GUARD  # a matrix value meaning "no guard" (the stock arm)


@dataclass(frozen=True)
class GuardContext:
    """What a guard factory gets: the trial's ``folder`` (shared by its racers), its ids, and
    ``state_schema()``: the graph's state schema once the workload is built (None before)."""

    folder: Path
    trial_id: str = ""
    thread_id: str = ""
    racer_id: str = ""
    state_schema: Callable[[], Any] = lambda: None


@dataclass(frozen=True)
class Guard:
    name: str
    wrap: Callable[[Any, GuardContext], Any] | None = None
    inspect: dict[str, Any] = field(default_factory=dict)
    refuses: tuple[type[BaseException], ...] = ()
    # ``configurable`` keys a fork (the fork kind's second answer) carries: the guard's fork intent
    fork: dict[str, Any] = field(default_factory=dict)
    # the retry/fork discriminator the guard adds to the framework's API (FI), e.g. REMIT's fork flag
    intent: str = ""


class GuardError(Exception):
    """The guard could not be loaded or applied: the message names it and what to change."""


def is_none(ref: str | None) -> bool:
    return is_no_guard(ref)


def check_guard(ref: str, backend: str) -> str | None:
    """Why ``ref`` cannot guard ``backend`` (checked at load, without importing anything), or None."""
    if ref.startswith("remit") and ":" not in ref:
        if ref not in BUILTIN:
            return f"unknown guard {ref!r}: a built-in ({', '.join(BUILTIN)}) or package.module:factory"
        allowed = REMIT_GATE_BACKENDS if ref == "remit_gate" else REMIT_BACKENDS
        if backend not in allowed:
            why = (
                "REMIT's shim refuses async savers"
                if backend.endswith("_async")
                else "REMIT's gate takes its claim in the saver's own database connection"
                if ref == "remit_gate"
                else "REMIT's shim subclasses a saver chaos builds itself"
            )
            return f"guard {ref!r} cannot wrap backend {backend!r} ({why}): use backend {' or '.join(allowed)}"
        return None
    if ":" not in ref:
        return f"unknown guard {ref!r}: a built-in ({', '.join(BUILTIN)}) or package.module:factory"
    return None


def load_guard(ref: str, ctx: GuardContext) -> Guard:
    """The guard ``ref`` names (a built-in, or ``package.module:factory`` called with ``ctx``)."""
    if ref in BUILTIN:
        return _remit(ref)
    from chaos.workloads import call_factory

    guard = call_factory(ref, ctx, "target.guard", "guard", GuardError)
    if not isinstance(guard, Guard):
        raise GuardError(f"target.guard {ref!r} returned {type(guard).__name__}, not a chaos.targets.langgraph.guards.Guard")
    return guard


def _remit(name: str) -> Guard:
    try:
        import remit
    except ImportError as exc:
        raise GuardError(
            f"target.guard {name!r} needs REMIT in the racers' Python ({exc}): add {REMIT_DIST}==0.1.2 to target.requirements"
        ) from None

    def wrap(saver: Any, ctx: GuardContext) -> Any:
        inner = type(saver)
        opts: dict[str, Any] = {}
        if name == "remit_gate":
            opts["cross_process_gate"] = True
        if name == "remit_validator":
            opts["validator"] = schema_validator(ctx.state_schema)
        if name == "remit_fork_flag":
            opts["fork_on_explicit_checkpoint"] = False
        conn = getattr(saver, "conn", None)
        args = (conn,) if conn is not None else ()
        try:
            return remit.wrap(inner, *args, **opts)
        except Exception as exc:
            raise GuardError(f"target.guard {name!r} cannot wrap {inner.__name__}: {type(exc).__name__}: {exc}") from None

    fork = {"remit_fork": True} if name == "remit_fork_flag" else {}
    return Guard(
        name=name,
        wrap=wrap,
        inspect={"remit_inspect": True},
        refuses=(remit.RemitError,),
        fork=fork,
        intent="configurable.remit_fork (REMIT's explicit fork flag, read by every REMIT-wrapped saver)",
    )


_PLAIN = (int, float, str, bool, list, dict)


def schema_validator(state_schema: Callable[[], Any]) -> Callable[[dict], None]:
    """A validator for REMIT: raise when a channel value is not of its field's plain type (``int``,
    ``str``, ...) in the graph's state schema (a TypedDict or a class with annotations). A field of
    any other annotation (a union, a reducer's ``Annotated``, a model) is not checked."""

    def validate(checkpoint: dict) -> None:
        schema = state_schema()
        if schema is None:
            return
        try:
            hints = typing.get_type_hints(schema)
        except Exception:
            hints = dict(getattr(schema, "__annotations__", {}) or {})
        values = (checkpoint or {}).get("channel_values") or {}
        for name, hint in hints.items():
            if name in values and hint in _PLAIN and not (hint is float and isinstance(values[name], int)):
                v = values[name]
                if not isinstance(v, hint) or (hint is int and isinstance(v, bool)):
                    raise ValueError(f"state field {name!r} must be {hint.__name__}, got {type(v).__name__} {v!r:.60}")

    return validate


class Reads:
    """Which saver reads are the app's: those inside ``app_call()``; every other read is chaos's
    own, and ``config`` gives it the guard's inspection keys."""

    def __init__(self, inspect: dict[str, Any] | None = None):
        self.inspect = dict(inspect or {})
        self.depth = 0

    @contextmanager
    def app_call(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def config(self, config: Any) -> Any:
        if self.depth or not self.inspect or not isinstance(config, dict):
            return config
        return {**config, "configurable": {**(config.get("configurable") or {}), **self.inspect}}


def refused_by(guard: Guard | None, exc: BaseException) -> str | None:
    """The guard's name when ``exc`` (or what it was raised from) is the guard's refusal."""
    if guard is None or not guard.refuses:
        return None
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, guard.refuses):
            return guard.name
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def main(argv: list[str]) -> int:
    """The preflight's check, in the racers' Python: load the guard once over a temporary folder
    (REMIT imports, a factory returns a ``Guard``); one line on stderr and exit 3 if not."""
    # run as ``-m``, this module is ``__main__``: check against the Guard class factories import
    from chaos.targets.langgraph import guards

    with tempfile.TemporaryDirectory(prefix="chaos-guard-check-") as tmp:
        try:
            guards.load_guard(argv[0], guards.GuardContext(folder=Path(tmp), trial_id="preflight", thread_id="preflight"))
        except guards.GuardError as exc:
            print(exc, file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

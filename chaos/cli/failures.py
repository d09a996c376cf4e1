"""Exit codes that mean one thing: what reaches the user when a command cannot finish.

Why: CI reads chaos's exit code. 0, 1 and 2 are verdicts (every verdict holds, a violation was
found, some verdict is unknown); anything else that ends a command (bad input, a full disk, a
database that refuses the DSN, a bug in chaos) must not look like one of them. Before this module a
Python exception escaped as a traceback with exit 1, which CI reads as "a violation was found".

What it promises: ``ChaosGroup`` (the ``chaos`` command group) turns every exception a command
raises into exit 3 and one line on stderr, ``chaos: error: <what failed>; <what to do>``, secrets
masked. Usage errors (an unknown option, a bad integer) exit 3 too, not click's 2. ``--debug`` (or
``CHAOS_DEBUG=1``) also prints the traceback first. ``describe`` is the one-line wording, from
``chaos.running.failure``, shared with the orchestrator's failure path, which records it in run.json.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from typer._click.exceptions import ClickException, UsageError  # typer 0.29 vendors click; these are its errors
from typer.core import TyperGroup

from chaos.racer.redact import redact
from chaos.running.failure import describe

EXIT_RUN_FAILED = 3
DEBUG_ENV = "CHAOS_DEBUG"

_debug = False


def set_debug(on: bool) -> None:
    """``--debug``: print the traceback of a failing command as well as its one line."""
    global _debug
    _debug = on


def debugging() -> bool:
    return _debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def report(exc: BaseException, console: Console | None = None) -> None:
    """Print ``exc`` as the user sees it: its traceback first under ``--debug``, then one line."""
    console = console or Console(stderr=True, soft_wrap=True)
    if debugging():
        sys.stderr.write(redact("".join(traceback.format_exception(exc))))  # a frame's line can quote a secret
    console.print(f"[bold red]chaos: error:[/] {escape(describe(exc))}", highlight=False, soft_wrap=True)


class ChaosGroup(TyperGroup):
    """The ``chaos`` group: every failure of a command is exit 3 and one line (see the module)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except UsageError as exc:
            exc.exit_code = EXIT_RUN_FAILED
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except UsageError as exc:  # a sub-command's arguments: not a verdict either
            exc.exit_code = EXIT_RUN_FAILED
            raise
        except ClickException:
            raise
        except KeyboardInterrupt:
            Console(stderr=True).print("[yellow]chaos: interrupted[/]", highlight=False)
            raise typer.Exit(EXIT_RUN_FAILED) from None
        except Exception as exc:
            report(exc)
            raise typer.Exit(EXIT_RUN_FAILED) from None

"""The public API: ``chaos run``, ``chaos rerun`` and ``chaos analyze`` as Python calls.

Why: tests, notebooks and CI scripts want a run's verdicts as values, not an exit code to parse.
``chaos/__init__.py`` exposes these functions lazily (``chaos.run`` and friends), so importing
``chaos`` stays free of third-party packages; this module is where they are implemented, on top
of the orchestrator, and it is the only place that promises their signatures.

What it promises:

* ``run(scenario, options=None, **overrides)`` runs a scenario (a YAML path, a loaded
  ``Scenario``, or a plain dict with the fields of a scenario file) exactly as ``chaos run`` does
  and returns its ``RunResults``, with ``results.run_dir`` naming the run folder it wrote.
* ``rerun(run_dir, trial_ids, options=None)`` re-runs trials of a stored run alone, as
  ``chaos rerun`` does; the comparison with the stored verdicts is in the new run.json
  (``comparison``).
* ``analyze(run_dir, write=False)`` re-scores a stored run with the current checkers and, unlike
  ``chaos analyze``, writes nothing unless asked.
* ``load_scenario(path)`` loads and validates a scenario file.

A run that SIGINT or SIGTERM stopped is finished cleanly, then the signal reaches the caller's
handler (``run``, ``rerun``): a caller is never told "done" about a run it asked to stop.

Bad input, a broken environment or a damaged run folder raise ``chaos.errors.ChaosError``
(one line naming the file and field), before anything is written, as the command line refuses
them; what the framework did is never an exception: it is in the verdicts.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chaos.records import RunResults
from chaos.running.options import RunOptions, RunOutcome
from chaos.scenario.model import Scenario

__all__ = ["analyze", "load_scenario", "rerun", "run"]

UNNAMED = "<scenario>"  # what a scenario that came from no file is called in messages and run.json


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Load and validate a scenario file; a ``ScenarioError`` names the file, line and field."""
    from chaos.scenario.model import load_scenario as _load

    return _load(path)


def run(scenario: str | os.PathLike | Scenario | dict[str, Any], options: RunOptions | None = None, **overrides: Any) -> RunResults:
    """Run every cell and trial of ``scenario`` into ``<out>/<name>/<timestamp>/`` and return the results.

    ``overrides`` are ``RunOptions`` fields (``out``, ``seed``, ``trials``, ``racers``, ``only``,
    ``work_in``, ``keep_work``, ``on_trial``, ``on_cell_start``) applied over ``options``.
    ``results.exit_code`` is the code ``chaos run`` would exit with (3: the run was interrupted).
    A run stopped by SIGINT or SIGTERM ends cleanly (racers reaped, the run folder resumable), then
    the signal is delivered again to the caller's own handler: Ctrl-C is a ``KeyboardInterrupt``, a
    SIGTERM ends a process that does not handle it (a pytest session stops, non-zero).
    """
    from chaos.running.orchestrator import run_loaded

    opts = _options(options, overrides)
    loaded, path = _scenario(scenario)
    return _results(run_loaded(loaded, path, opts))


def rerun(run_dir: str | os.PathLike, trial_ids: str | Iterable[str], options: RunOptions | None = None) -> RunResults:
    """Re-run some trials of a stored run alone (same seed, cell and kill point) into a new run folder
    (beside the stored run unless ``options.out`` says where)."""
    from chaos.running.resume import rerun as _rerun

    ids = [trial_ids] if isinstance(trial_ids, str) else list(trial_ids)
    outcome, _comparison = _rerun(Path(run_dir), ids, options)
    return _results(outcome)


def analyze(run_dir: str | os.PathLike, *, write: bool = False) -> RunResults:
    """What a stored run concludes under the current checkers, from its journal (no racer runs).

    With ``write=True`` results.json and the reports are rewritten, as ``chaos analyze`` does;
    otherwise the run folder is only read."""
    from chaos.running.analysis import analyse_loaded, write_results
    from chaos.running.runfolder import load_run

    folder = Path(run_dir)
    meta, scenario, cells, records, _torn = load_run(folder)
    results = analyse_loaded(meta, scenario, cells, records)
    if write:
        write_results(folder, results, meta, records)
    results._run_dir = folder
    return results


def _options(options: RunOptions | None, overrides: dict[str, Any]) -> RunOptions:
    opts = options or RunOptions()
    names = {f.name for f in dataclasses.fields(RunOptions)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(f"chaos.run: unknown option {unknown[0]!r}; options are: {', '.join(sorted(names))}")
    if overrides.get("only") is not None:
        overrides["only"] = set(overrides["only"])
    if overrides.get("out") is not None:
        overrides["out"] = Path(overrides["out"])
    return dataclasses.replace(opts, **overrides)


def _scenario(scenario: str | os.PathLike | Scenario | dict[str, Any]) -> tuple[Scenario, str | os.PathLike]:
    """The scenario to run and the path that stands for it (run.json, where user workloads are found)."""
    if isinstance(scenario, Scenario):
        return scenario, UNNAMED
    if isinstance(scenario, dict):
        return _from_dict(scenario), UNNAMED
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario), scenario
    raise TypeError(f"chaos.run: a scenario is a path, a Scenario or a dict, not {type(scenario).__name__}")


def _from_dict(data: dict[str, Any]) -> Scenario:
    """A scenario written as a dict, refused as a file would be: one line naming the field."""
    from pydantic import ValidationError

    from chaos.racer.errors import ScenarioError
    from chaos.scenario.model import _describe

    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ScenarioError(f"{UNNAMED}: {_describe(dict(exc.errors()[0]))}{more}") from None


def _results(outcome: RunOutcome) -> RunResults:
    outcome.results._run_dir = outcome.run_dir
    if outcome.interrupted and outcome.signals:  # the run's handler took it: the caller's gets it now
        import signal

        signal.raise_signal(getattr(signal, outcome.signals[0], signal.SIGINT))
    return outcome.results

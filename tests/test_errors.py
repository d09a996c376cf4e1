"""A user catches chaos's errors from one public place, ``chaos.errors``, as Hypothesis users do
from ``hypothesis.errors``: every error chaos raises on purpose is named there, is a
``ChaosError`` (one line, exit code 3 on the command line), and importing the place is cheap."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import chaos
import chaos.errors
from chaos.racer import errors as racer_errors

CHAOS = Path(chaos.__file__).parent


def _error_classes_in_the_package() -> set[str]:
    """Every class under chaos/ that derives, directly or through another, from ChaosError."""
    bases: dict[str, set[str]] = {}
    for path in CHAOS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                named = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                bases.setdefault(node.name, set()).update(named)
    found = {"ChaosError"}
    while True:
        more = {name for name, parents in bases.items() if parents & found} - found
        if not more:
            return found
        found |= more


def test_every_error_chaos_raises_on_purpose_is_public_and_a_chaos_error():
    assert _error_classes_in_the_package() == set(chaos.errors.__all__)
    for name in chaos.errors.__all__:
        error = getattr(chaos.errors, name)
        assert error.__name__ == name
        assert issubclass(error, racer_errors.ChaosError), name
    assert set(chaos.errors.__all__) <= set(dir(chaos.errors))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        chaos.errors.Nope  # noqa: B018


def test_the_public_types_are_the_ones_chaos_raises():
    # the racer side keeps its module; the public one names the same classes, not copies
    assert chaos.errors.ChaosError is racer_errors.ChaosError
    assert chaos.errors.ScenarioError is racer_errors.ScenarioError
    from chaos.running.failure import RunFailed

    assert chaos.errors.RunFailed is RunFailed


def test_a_bad_scenario_is_caught_as_the_public_error(tmp_path):
    with pytest.raises(chaos.errors.ScenarioError) as caught:
        chaos.run({"name": "x", "kind": "no_such_kind"}, out=tmp_path)
    assert isinstance(caught.value, chaos.errors.ChaosError)
    assert caught.value.exit_code == 3 and "\n" not in caught.value.message
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_importing_the_errors_pulls_in_no_third_party_package():
    code = (
        "import json, sys; before = set(sys.modules); import chaos.errors; "
        "new = {m.partition('.')[0] for m in set(sys.modules) - before}; "
        "print(json.dumps(sorted(new - set(sys.stdlib_module_names) - {'chaos'})))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []

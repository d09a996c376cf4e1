"""No shell strings anywhere in chaos: every process is started from an argument list, so no value
from a scenario, inventory or journal can ever be read by a shell."""

from __future__ import annotations

import ast
from pathlib import Path

import chaos

PACKAGE = Path(chaos.__file__).resolve().parent


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            owner = getattr(f.value, "id", "") if isinstance(f, ast.Attribute) else ""
            yield node, owner, name


def test_no_module_starts_a_shell():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, owner, name in _calls(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            if (owner, name) in {("os", "system"), ("os", "popen"), ("subprocess", "getoutput"), ("subprocess", "getstatusoutput")}:
                offenders.append(f"{where}: {owner}.{name}")
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    offenders.append(f"{where}: {name}(shell=...)")
    assert offenders == []
    assert len(list(PACKAGE.rglob("*.py"))) > 20  # the scan saw the package

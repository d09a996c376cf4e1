"""docs/architecture.md names every module of chaos (issue 23): a newcomer reads the folder table to
learn where a job lives, so a module the table does not name is a job nobody can find. A module is
named when a code span of the document holds its stem (`lazy`, `lazy.py`), its path
(`chaos/racer/lazy.py`, `racer/lazy.py`) or its dotted name (`chaos.racer.lazy`). Two families are
named by their rule instead of one by one: a kind's own module (`chaos/kinds/<kind>.py`, one per
registered kind) and a framework's adapter and workloads (`chaos/targets/<framework>.py`,
`chaos/workloads/<framework>.py`, one per adapter in ``chaos.targets.TARGETS``)."""

from __future__ import annotations

import re
from pathlib import Path

import chaos.kinds
import chaos.targets

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TOKEN = re.compile(r"[A-Za-z0-9_./]+")


def _named() -> set[str]:
    spans = re.findall(r"`([^`\n]+)`", DOC.read_text())
    return {tok.strip("./") for span in spans for tok in TOKEN.findall(span)}


def _by_rule(rel: Path) -> bool:
    folder, stem = rel.parts[0] if len(rel.parts) > 1 else "", rel.stem
    if folder == "kinds" and len(rel.parts) == 2:
        return stem in chaos.kinds.KINDS
    return folder in ("targets", "workloads") and len(rel.parts) == 2 and stem in chaos.targets.TARGETS


def test_every_module_of_chaos_is_named_in_the_architecture_doc():
    named = _named()
    missing = []
    for path in sorted((ROOT / "chaos").rglob("*.py")):
        rel = path.relative_to(ROOT / "chaos")
        if rel.name == "__init__.py" or _by_rule(rel):
            continue
        forms = {
            rel.stem,
            rel.name,
            f"chaos/{rel.as_posix()}",
            rel.as_posix(),
            ".".join(("chaos", *rel.with_suffix("").parts)),
        }
        if not forms & named:
            missing.append(rel.as_posix())
    assert not missing, f"docs/architecture.md does not name these modules of chaos/: {', '.join(missing)}"

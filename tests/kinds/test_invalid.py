"""A user's node writes a value that breaks the state schema: refused loudly or persisted (CV)?

LangGraph issue 6491: a pydantic state field of the wrong type is checkpointed and the error only
comes when the next node reads it (and the thread can no longer be read). A reducer that refuses
the write raises at the step, and the checkpoint stays clean.
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

INVALID = """\
name: invalid_small
kind: invalid_state
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: invalid_type
trials: 1
seed: 6491
matrix:
  case:
    - {name: wrong-type, workload: invalid_type}
    - {name: refusing-reducer, workload: invalid_reducer, backend: memory}
"""


@pytest.fixture(scope="module")
def invalid_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("invalid"), INVALID)


def test_a_wrong_type_is_checkpointed_and_refused_only_when_read(invalid_run):
    cell = invalid_run.results.cells[0]
    (cv,) = cell.verdicts
    assert cv.status == "violated"
    assert "checkpoint holds count='not-a-number'" in cv.reason
    assert "thread unreadable (ValidationError)" in cv.reason
    # results come back as results.json holds them (masked, JSON keys): the one valid trial's thread was not readable
    assert cell.summary["readable_after"] in ({"false": 1}, {"False": 1}, {False: 1})


def test_a_refusing_reducer_raises_and_keeps_the_checkpoint_clean(invalid_run):
    (cv,) = invalid_run.results.cells[1].verdicts
    assert cv.status == "holds", cv.reason
    assert "refused loudly (TypeError" in cv.reason and "does not hold log=5" in cv.reason

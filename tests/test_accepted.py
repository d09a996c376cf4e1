"""A team's baseline of accepted violations: strict to read, and it never rewrites the evidence.

A violation it accepts is reported as accepted and the exit code is as if it held; a new one
still fails; an entry whose cells hold now is stale; an expired entry accepts nothing; JUnit
marks accepted verdicts skipped with the reason; results.json stays as the checkers wrote it.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest
from kits.runkit import verdict_cell

from chaos.accepted import BaselineError, apply_baseline, load_baseline
from chaos.records import CellResult, RunResults, Verdict
from chaos.reports.junit import junit_xml


def _cell(cell_id: str, framework: str, **statuses: str) -> CellResult:
    verdicts = [Verdict(property=p, status=s, reason=f"{p} is {s}") for p, s in statuses.items()]  # type: ignore[arg-type]
    return verdict_cell(verdicts, cell_id=cell_id, framework=framework)


def _results(*cells: CellResult) -> RunResults:
    from chaos.kinds.checking import exit_code, verdict_counts

    cs = list(cells)
    return RunResults(run_id="r", scenario="mine", seed=1, exit_code=exit_code(cs), verdict_counts=verdict_counts(cs), cells=cs)


def _write(tmp_path, text: str):
    p = tmp_path / "chaos-baseline.yaml"
    p.write_text(text)
    return p


def test_an_accepted_violation_exits_as_if_it_held_and_a_new_one_still_fails(tmp_path):
    base = load_baseline(
        _write(
            tmp_path,
            """\
            accepted:
              - {property: FI, framework: langgraph, reason: no fork discriminator}
              - {property: EO, cell: "sweep-*", reason: PSP dedupes}
            """.replace("            ", ""),
        )
    )
    res = _results(_cell("sweep-a", "langgraph", EO="violated", FI="violated"), _cell("other", "langgraph", EO="holds"))
    report = apply_baseline(res, base, dt.date(2026, 1, 1))
    assert [(a.cell_id, a.property, a.reason) for a in report.accepted] == [
        ("sweep-a", "EO", "PSP dedupes"),
        ("sweep-a", "FI", "no fork discriminator"),
    ]
    assert report.new == [] and report.exit_code == 0 and res.exit_code == 1  # the results are untouched

    res2 = _results(_cell("sweep-a", "langgraph", EO="violated"), _cell("other", "langgraph", EO="violated"))
    report2 = apply_baseline(res2, base, dt.date(2026, 1, 1))
    assert [(n.cell_id, n.property) for n in report2.new] == [("other", "EO")] and report2.exit_code == 1


def test_an_entry_whose_cells_hold_now_is_stale_and_an_expired_one_accepts_nothing(tmp_path):
    base = load_baseline(
        _write(
            tmp_path,
            "accepted:\n"
            "  - {property: EO, framework: langgraph, reason: old bug}\n"
            "  - {property: CO, framework: langgraph, reason: until the fix ships, expires: 2026-06-01}\n",
        )
    )
    res = _results(_cell("c", "langgraph", EO="holds", CO="violated"))
    before = apply_baseline(res, base, dt.date(2026, 5, 31))
    assert [a.property for a in before.accepted] == ["CO"] and before.exit_code == 0
    assert [s.label for s in before.stale] == ["EO (framework=langgraph)"]
    after = apply_baseline(res, base, dt.date(2026, 6, 1))
    assert after.accepted == [] and after.exit_code == 1
    assert [e.entry for e in after.expired] == [1] and "expired 2026-06-01" in after.expired[0].note


def test_junit_marks_an_accepted_violation_skipped_with_the_reason():
    res = _results(_cell("c", "langgraph", EO="violated", CO="violated"))
    root = ET.fromstring(junit_xml([res], accepted={("c", "EO"): "PSP dedupes"}).split("\n", 1)[1])
    cases = {c.get("name", "").split()[0]: c for c in root.iter("testcase")}
    skipped = cases["EO"].find("skipped")
    assert skipped is not None and "accepted by the baseline: PSP dedupes" in skipped.get("message", "")
    assert cases["CO"].find("failure") is not None
    assert root.get("failures") == "1" and root.get("skipped") == "1"


def test_assert_holds_counts_an_accepted_violation_as_holding(tmp_path):
    from chaos.accepted import accept

    res = _results(_cell("c", "langgraph", EO="violated"))
    with pytest.raises(AssertionError, match="EO does not hold"):
        res.assert_holds("EO")
    accept(res, _write(tmp_path, "accepted:\n  - {property: EO, cell: c, reason: known}\n"))
    res.assert_holds("EO")
    assert [cv.cell_id for cv in res.accepted("EO")] == ["c"] and len(res.violations("EO")) == 1
    assert "accepted" not in res.model_dump_json()  # analysis stays pure: acceptance is not in results.json


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("accepted:\n  - {property: XX, framework: langgraph, reason: r}\n", r"accepted\[0\]\.property: unknown property 'XX'"),
        ("accepted:\n  - {property: EO, framwork: langgraph, reason: r}\n", r"accepted\[0\]\.framwork: unknown key"),
        ("accepted:\n  - {property: EO, framework: langgraph}\n", r"accepted\[0\]\.reason: Field required"),
        ("accepted:\n  - {property: EO, reason: r}\n", r"accepted\[0\]: name the cell .* or the framework"),
        ("accepted:\n  - {property: EO, cell: c, reason: r, expires: soon}\n", r"accepted\[0\]\.expires: "),
        ("acepted: []\n", r"acepted: unknown key \(keys: about, accepted\)"),
        ("- EO\n", r"a mapping with an 'accepted:' list"),
    ],
)
def test_a_bad_baseline_is_one_line_naming_the_file_and_field(tmp_path, text, message):
    with pytest.raises(BaselineError, match=message) as err:
        load_baseline(_write(tmp_path, text))
    assert str(err.value).startswith(str(tmp_path / "chaos-baseline.yaml")) and "\n" not in str(err.value)
    assert err.value.exit_code == 3


def _chaos(cwd, *args: str):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "chaos", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


REPO = __import__("pathlib").Path(__file__).resolve().parent.parent
# pinned to sync: a user's workload runs with LangGraph's default durability unless the scenario says otherwise
SWEEP = "name: mine\nkind: kill_sweep\ntarget: {durability: sync}\nworkload: user_workloads:two_step\nresume: none\ntrials: 1\nseed: 5\n"


def test_chaos_run_with_a_baseline_exits_as_if_the_accepted_violations_held(tmp_path):
    import json
    import shutil

    shutil.copy(REPO / "tests" / "workloads" / "user_workloads.py", tmp_path / "user_workloads.py")
    (tmp_path / "s.yaml").write_text(SWEEP)
    _write(
        tmp_path,
        "accepted:\n  - {property: EO, framework: langgraph, reason: known duplicate}\n  - {property: LIVENESS, cell: default, reason: resume none}\n",
    )
    r = _chaos(tmp_path, "run", "s.yaml", "--out", "reports", "-q", "--baseline", "chaos-baseline.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "baseline: accepted: default EO: known duplicate" in r.stdout
    run_dir = tmp_path / "reports" / "mine" / "latest"
    stored = json.loads((run_dir / "results.json").read_text())
    assert stored["exit_code"] == 1 and {v["property"]: v["status"] for v in stored["cells"][0]["verdicts"]}["EO"] == "violated"
    assert json.loads((run_dir / "baseline.json").read_text())["exit_code"] == 0
    assert ET.parse(run_dir / "junit.xml").getroot().get("failures") == "0"


def test_chaos_run_refuses_a_bad_baseline_before_any_racer_runs(tmp_path):
    (tmp_path / "s.yaml").write_text(SWEEP)
    _write(tmp_path, "accepted:\n  - {property: EO, cel: default, reason: r}\n")
    r = _chaos(tmp_path, "run", "s.yaml", "--out", "reports", "-q", "--baseline", "chaos-baseline.yaml")
    assert r.returncode == 3 and "chaos-baseline.yaml: accepted[0].cel: unknown key" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "reports").exists()

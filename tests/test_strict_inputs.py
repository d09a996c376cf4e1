"""Strict inputs: a baseline, a scenario or a --shard value a user hands chaos is judged before it is
believed, and refused in one line naming the file and field (exit 3), fast and without reading
what is not a file.

Each story is a break found from the outside (issue 24, items 4 and 10): a baseline whose repeated
key made `property: FI` then `property: EO` accept EO (a false pass); a bad date, a deep nesting or
a binary baseline reported as "internal error ... a bug in chaos"; a 50 MB baseline accepted after
17 s; a FIFO that hung; `validate` reading a 50 MB file (16 s) or /dev/zero (until out of memory)
before refusing it; `--shard 2/2` of a one-cell scenario that exited 0 having run nothing.
"""

from __future__ import annotations

import os
import time

import pytest
from kits.robustkit import chaos, one_line
from kits.runkit import verdict_cell

from chaos.accepted import BaselineError, accept, load_baseline
from chaos.records import RunResults, Verdict

ONE_CELL = "name: one\nkind: kill_sweep\ntarget: {framework: langgraph, backend: sqlite, durability: sync}\nworkload: three_step\nresume: none\ntrials: 1\n"


def _eo_violated() -> RunResults:
    from chaos.kinds.checking import exit_code, verdict_counts

    cell = verdict_cell([Verdict(property="EO", status="violated", reason="c fired twice")])
    return RunResults(run_id="r", scenario="s", seed=1, exit_code=exit_code([cell]), verdict_counts=verdict_counts([cell]), cells=[cell])


def test_a_repeated_key_in_a_baseline_is_refused_not_a_false_pass(tmp_path):
    base = tmp_path / "baseline.yaml"
    base.write_text("accepted:\n  - property: FI\n    property: EO\n    framework: langgraph\n    reason: accepted FI only\n")
    res = _eo_violated()
    with pytest.raises(BaselineError, match=r"baseline.yaml:3: duplicate key 'property' \(first at line 2\)"):
        accept(res, base)  # the pytest plugin's assert_holds goes through accept()
    with pytest.raises(AssertionError, match="EO does not hold"):
        res.assert_holds("EO")
    r = chaos(["run", "scenarios/consume_once_k4.yaml", "--baseline", str(base), "--out", str(tmp_path / "out")], tmp_path / "state")
    assert r.returncode == 3 and "duplicate key 'property'" in one_line(r.stderr) and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("accepted:\n  - {property: EO, framework: langgraph, reason: r, expires: 2027-02-30}\n", "accepted[0].expires"),
        ("accepted:\n  - {property: EO, framework: langgraph, reason: r, expires: 2027-13-45}\n", "accepted[0].expires"),
        ("accepted:\n  - {property: EO, framework: langgraph, reason: r, expires: " + "9" * 5000 + "}\n", "accepted[0].expires"),
        ("accepted: " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
        ("accepted: " + "[" * 150 + "]" * 150 + "\n", "nested too deeply"),  # below every YAML library's limit: chaos's own
        (b"accepted:\n  - {property: EO, framework: caf\xe9, reason: r}\n", "not UTF-8"),
        ("accepted:\n" + "  - {property: EO, framework: langgraph, reason: r}\n" * 1001, "accepted: List should have at most 1000 items"),
        ("accepted:\n  - {property: EO, framework: langgraph, reason: r, pririty: 1}\n", "accepted[0].pririty: unknown key"),
    ],
    ids=["feb30", "month13", "5000-digit-date", "deep", "deep-150", "latin1", "too-many", "unknown-field"],
)
def test_a_bad_baseline_is_bad_input_naming_the_file_and_field_never_a_bug_in_chaos(tmp_path, text, field):
    base = tmp_path / "baseline.yaml"
    base.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(BaselineError) as err:
        load_baseline(base)
    msg = str(err.value)
    assert msg.startswith(str(base)) and field in msg and "\n" not in msg and "internal error" not in msg


def test_a_baseline_that_is_not_a_regular_file_or_too_big_is_refused_before_it_is_read(tmp_path):
    fifo = tmp_path / "baseline.fifo"
    os.mkfifo(fifo)  # no writer: reading it would block forever (in a subprocess, so a hang fails the test)
    for path in (fifo, "/dev/zero"):
        r = chaos(
            ["run", "scenarios/consume_once_k4.yaml", "--baseline", str(path), "--out", str(tmp_path / "out")],
            tmp_path / "state",
            timeout=60,
        )
        assert r.returncode == 3 and "not a regular file" in one_line(r.stderr) and not (tmp_path / "out").exists()
    big = tmp_path / "big.yaml"
    big.write_text('about: "' + "x" * 50_000_000 + '"\n')
    t0 = time.monotonic()
    with pytest.raises(BaselineError, match=r"50000010 bytes; a baseline file is at most \d+ bytes"):
        load_baseline(big)
    assert time.monotonic() - t0 < 5  # refused from its size, not parsed (it took 17 s)


def test_validate_refuses_what_is_not_a_regular_file_and_a_huge_file_before_reading_it(tmp_path):
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    big = tmp_path / "big.yaml"
    big.write_text(ONE_CELL + 'about: "' + "x" * 50_000_000 + '"\n')
    for path, says in (
        (fifo, "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (big, "bytes; a scenario file is at most 1000000 bytes"),
    ):
        t0 = time.monotonic()
        for command in ("validate", "run"):
            r = chaos(
                [command, str(path), "--out", str(tmp_path / "out")] if command == "run" else [command, str(path)],
                tmp_path / "state",
                timeout=60,
            )
            line = one_line(r.stderr)
            assert r.returncode == 3 and str(path) in line and says in line, line
        assert time.monotonic() - t0 < 30, f"{path}: took {time.monotonic() - t0:.1f}s"  # 16 s and 185 MB before (50 MB)
    assert not (tmp_path / "out").exists()


def test_a_shard_with_no_cell_to_run_says_so_and_exits_3(tmp_path):
    """--shard 2/2 of a one-cell scenario selects nothing: no verdict was measured, so 0 ("every
    verdict holds") and 2 ("some verdict is unknown") would both describe verdicts that do not
    exist; docs/getting-started.md's 3 is "the run itself failed (bad scenario or flag)", and this flag asks for
    a shard the scenario does not have."""
    scenario = tmp_path / "one.yaml"
    scenario.write_text(ONE_CELL)
    r = chaos(["run", str(scenario), "--shard", "2/2", "--out", str(tmp_path / "out"), "-q"], tmp_path / "state")
    line = one_line(r.stderr)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "--shard 2/2" in line and "1 cell(s)" in line and "at most 1 shard" in line
    assert not (tmp_path / "out").exists()  # refused before a run folder was made


@pytest.mark.parametrize(
    ("requirement", "says"),
    [
        ("-r /etc/hostname", "a pip option"),
        ("--no-index", "a pip option"),
        ("foo --index-url http://example.invalid/simple", "not a package specifier"),
        ("foo @ file:///etc/hostname", "direct reference"),
    ],
)
def test_requirements_are_package_specifiers_only_refused_when_the_scenario_loads(tmp_path, requirement, says):
    scenario = tmp_path / "saver.yaml"
    scenario.write_text(
        "name: saver\nkind: kill_sweep\nworkload: three_step\nresume: none\ntrials: 1\n"
        f"target: {{framework: langgraph, saver: 'chaos.savers:lmdb', requirements: [{requirement!r}]}}\n"
    )
    r = chaos(["validate", str(scenario)], tmp_path / "state")
    line = one_line(r.stderr)
    assert r.returncode == 3 and "target.requirements" in line and says in line, line


def _wheel(folder, version: str) -> None:
    """A one-module wheel of ``tinypkg`` at ``version``, written by hand (no build backend, no network)."""
    import zipfile

    info = f"tinypkg-{version}.dist-info"
    files = {
        "tinypkg/__init__.py": f"__version__ = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: tinypkg\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: chaos-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(folder / f"tinypkg-{version}-py3-none-any.whl", "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


def test_an_environment_of_an_unpinned_requirement_follows_what_pip_resolves(tmp_path, monkeypatch):
    """The venv cache was keyed by the requirement strings, so `tinypkg>=1.0` kept 1.0 forever
    after 1.1 was released. Now an environment records what pip resolved and is rebuilt when pip
    would resolve another release. The index is a local folder (pip's own environment variables)."""
    import subprocess

    from chaos.envs import ensure_env

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "1.0")
    monkeypatch.setenv("CHAOS_ENV_DIR", str(tmp_path / "envs"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))

    def version(python: str) -> str:
        out = subprocess.run([python, "-c", "import tinypkg; print(tinypkg.__version__)"], capture_output=True, text=True, timeout=60)
        return out.stdout.strip()

    python = ensure_env("tinytest", None, ["tinypkg>=1.0"], track=["tinypkg>=1.0"])
    assert version(python) == "1.0"
    assert (
        ensure_env("tinytest", None, ["tinypkg>=1.0"], track=["tinypkg>=1.0"]) == python and version(python) == "1.0"
    )  # nothing new: reused
    _wheel(wheels, "1.1")  # a release upstream
    assert ensure_env("tinytest", None, ["tinypkg>=1.0"], track=["tinypkg>=1.0"]) == python
    assert version(python) == "1.1"

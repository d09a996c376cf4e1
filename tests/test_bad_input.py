"""The bad-input catalogue: every way a user can hand chaos something wrong, and the one line it
answers with. Each case runs the real CLI (typer's runner, in process; a few as subprocesses) and
expects exit code 3, exactly one line on stderr that names the file (and the field), and no
traceback. A resume of a damaged run folder is refused before anything runs.
"""

from __future__ import annotations

import json

import pytest
from kits.robustkit import ROOT, chaos, one_line
from typer.testing import CliRunner

from chaos.cli.app import app

GOOD = """\
name: ok
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
"""

UPGRADE = """\
name: deploy
kind: upgrade
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: tests.workloads.deploy_workloads:invoice_v1
resume: "command:true"
trials: 1
"""

# (case id, scenario text, command, fragments the one-line message must contain)
SCENARIOS = [
    ("malformed_yaml", "name: x\nkind: [race\n", "validate", ["not valid YAML"]),
    ("tab_indented_yaml", "name: x\n\tkind: race\n", "validate", ["not valid YAML"]),
    ("empty_file", "", "validate", ["the file is empty"]),
    ("not_a_mapping", "42\n", "validate", [":1:", "a scenario is a mapping"]),
    ("a_list_is_read_as_a_suite", "- name: x\n", "validate", [":1:", "scenarios.0.file: required field is missing"]),
    ("unknown_key", GOOD + "bogus: 1\n", "validate", [":7:", "bogus: unknown key; allowed here:"]),
    (
        "unknown_nested_key",
        GOOD.replace("durability: sync}", "durability: sync, colour: red}"),
        "validate",
        [":3:", "target.colour: unknown key"],
    ),
    ("duplicate_key", GOOD + "trials: 2\n", "validate", [":7:", "duplicate key 'trials'"]),
    ("matrix_axis_without_values", GOOD + "matrix: {resume: []}\n", "validate", [":7:", "matrix axis 'resume' has no values"]),
    ("unknown_matrix_axis", GOOD + "matrix: {colour: [red]}\n", "validate", ["unknown matrix axis 'colour'"]),
    (
        "unknown_framework",
        GOOD.replace("framework: langgraph", "framework: nopegraph"),
        "validate",
        ["target.framework: unknown framework 'nopegraph'"],
    ),
    ("unknown_backend", GOOD.replace("backend: sqlite", "backend: oracle"), "validate", ["target.backend", "'oracle'"]),
    ("unknown_kind", GOOD.replace("kind: kill_sweep", "kind: fork_storm"), "validate", ["kind: Input should be"]),
    (
        "unknown_workload",
        GOOD.replace("workload: three_step", "workload: four_step"),
        "validate",
        ["workload: unknown workload 'four_step'"],
    ),
    (
        "factory_module_missing",
        GOOD.replace("workload: three_step", "workload: nosuchpkg.flows:build"),
        "validate",
        ["module 'nosuchpkg.flows' does not import: its package 'nosuchpkg' was not found"],
    ),
    (
        "factory_not_defined",
        GOOD.replace("workload: three_step", "workload: tests.workloads.user_workloads:no_such_factory"),
        "validate",
        ["defines no 'no_such_factory'"],
    ),
    (
        "factory_syntax_error",
        GOOD.replace("workload: three_step", "workload: badsyntax:build"),
        "validate",
        ["syntax error at badsyntax.py:2"],
    ),
    (
        "factory_that_does_not_import",
        GOOD.replace("workload: three_step", "workload: tests.workloads.broken_import:factory"),
        "run",
        ["does not import in the racers' Python", "ModuleNotFoundError", "chaos_no_such_dependency"],
    ),
    ("k_below_one", GOOD + "racers: {k: 0}\n", "validate", [":7:", "racers.k: Input should be greater than or equal to 1"]),
    ("trials_not_a_number", GOOD.replace("trials: 1", "trials: many"), "validate", [":6:", "trials: Input should be a valid integer"]),
    ("negative_seed", GOOD + "seed: -1\n", "validate", ["seed: Input should be greater than or equal to 0"]),
    # an explicit ``resume: none`` is a race of static-breakpoint approvals (invoke(None)); left out, a race has no answer
    (
        "race_without_command",
        GOOD.replace("kind: kill_sweep", "kind: race").replace("resume: none\n", ""),
        "validate",
        ["set resume to 'command:<value>'"],
    ),
    (
        "markup_in_a_value",
        GOOD.replace("workload: three_step", "workload: '[bold]x[/bold]'"),
        "validate",
        ["unknown workload '[bold]x[/bold]'"],
    ),
    (
        "bad_resume_form",
        GOOD.replace("resume: none", "resume: maybe"),
        "validate",
        ["resume must be 'none', 'input', 'command:<value>' or 'app:<package.module:recover>'"],
    ),
    # caps and strict types: what validate accepts must run (issue 13)
    ("seed_a_boolean", GOOD + "seed: true\n", "validate", [":7:", "seed: Input should be a valid integer"]),
    ("seed_a_string", GOOD + 'seed: "123"\n', "validate", [":7:", "seed: Input should be a valid integer"]),
    ("timeout_infinite", GOOD + "timeout_s: .inf\n", "validate", [":7:", "timeout_s: Input should be a finite number"]),
    ("params_infinite", GOOD + "workload_params: {x: .nan}\n", "validate", [":7:", "workload_params.x: nan is not a finite number"]),
    ("name_300_characters", GOOD.replace("name: ok", "name: " + "n" * 300), "validate", [":1:", "name: String should have at most 100"]),
    ("name_300_characters_run", GOOD.replace("name: ok", "name: " + "n" * 300), "run", [":1:", "name: String should have at most 100"]),
    ("about_too_long", GOOD + "about: " + "a" * 20_000 + "\n", "validate", [":7:", "about: String should have at most 10000"]),
    (
        "matrix_too_large",
        GOOD + "matrix: {jitter_ms: [" + ",".join(map(str, range(1000))) + "], trials: [" + ",".join(map(str, range(1, 1001))) + "]}\n",
        "validate",
        [":7:", "the matrix expands to 1000000 cells; the limit is 10000"],
    ),
    (
        "send_workload_on_a_framework_without_branches",
        GOOD.replace("framework: langgraph, backend: sqlite, durability: sync", "framework: pydantic_graph, backend: file").replace(
            "three_step", "parallel_send"
        ),
        "run",
        [":4:", "workload: 'parallel_send' runs parallel branches", "run it with target.framework: langgraph"],
    ),
    (
        "command_malformed_json",
        GOOD.replace("kind: kill_sweep", "kind: race")
        .replace("three_step", "gate_after_interrupt")
        .replace("resume: none", "resume: 'command:{\"ok\": 1'"),
        "validate",
        ["resume: the value after 'command:' must be JSON"],
    ),
    # a deploy between pause and resume (issue 14): v2 must exist and build before any trial
    (
        "upgrade_v2_does_not_build",
        UPGRADE + "upgrade_to: {workload: tests.workloads.deploy_workloads:invoice_v2_broken}\n",
        "run",
        [
            "upgrade_to.workload 'tests.workloads.deploy_workloads:invoice_v2_broken' at ctx.version 'v2'",
            "RuntimeError: v2 needs the BILLING_URL setting",
        ],
    ),
    (
        "upgrade_v2_unknown",
        UPGRADE + "upgrade_to: {workload: invoice_v3}\n",
        "validate",
        [":7:", "upgrade_to.workload: unknown workload 'invoice_v3'"],
    ),
    ("upgrade_in_memory", UPGRADE.replace("backend: sqlite", "backend: memory"), "validate", ["a deploy resumes in a fresh process"]),
]


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(ROOT)
    return CliRunner()


def _expect_one_line_error(result, fragments, *names) -> str:
    assert result.exit_code == 3, f"exit {result.exit_code}: {result.output}"
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: "), line
    for n in names:
        assert str(n) in line, f"{n} not named in: {line}"
    for frag in fragments:
        assert frag in line, f"{frag!r} not in: {line}"
    return line


@pytest.mark.parametrize("case,text,command,fragments", SCENARIOS, ids=[c[0] for c in SCENARIOS])
def test_bad_scenario(case, text, command, fragments, runner, tmp_path):
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    (tmp_path / "badsyntax.py").write_text("def build(ctx):\n    return (\n")
    args = [command, str(path)] + (["--out", str(tmp_path / "out"), "-q"] if command == "run" else [])
    _expect_one_line_error(runner.invoke(app, args), fragments, path)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("run.json"))  # refused before anything ran


def test_missing_scenario_file(runner, tmp_path):
    _expect_one_line_error(runner.invoke(app, ["run", str(tmp_path / "nope.yaml")]), ["no such scenario file"], tmp_path / "nope.yaml")


def test_scenario_file_too_large(runner, tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text(GOOD + "about: " + "a" * 2_000_000 + "\n")
    _expect_one_line_error(runner.invoke(app, ["validate", str(path)]), ["bytes; a scenario file is at most 1000000 bytes"], path)


def test_scenario_that_is_not_utf8(runner, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    _expect_one_line_error(runner.invoke(app, ["validate", str(path)]), ["cannot read the scenario"], path)


def test_output_folder_whose_parent_is_missing(runner, tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(GOOD)
    out = tmp_path / "no" / "such" / "reports"
    _expect_one_line_error(
        runner.invoke(app, ["run", str(path), "--out", str(out), "-q"]), ["does not exist", "create it or pass --out"], out
    )


# ------------------------------------------------------------------- stored runs (--resume)

RUN_META = {
    "run_id": "r-1",
    "scenario": {"name": "ok", "kind": "kill_sweep", "workload": "three_step", "resume": "none"},
    "workload_path": [],
}
RECORD = {
    "run_id": "r-1",
    "cell_index": 0,
    "cell_id": "default",
    "trial_id": "c000-dry",
    "seed": 1,
    "kind": "kill_sweep",
    "thread_id": "t",
    "valid": True,
    "t_start_wall": 0.0,
    "wall_s": 0.1,
}

RUNS = [
    ("not_a_run_folder", None, None, ["not a run folder (no run.json)"], ""),
    ("run_json_not_json", "{not json", None, ["not readable JSON"], "run.json"),
    ("run_json_a_list", "[1, 2]", None, ["expected a JSON object, got list"], "run.json"),
    ("run_json_without_scenario", json.dumps({"run_id": "r-1"}), None, ["field 'scenario' is missing"], "run.json"),
    (
        "run_json_bad_scenario",
        json.dumps({**RUN_META, "scenario": {"name": "ok", "kind": "nope", "workload": "x"}}),
        None,
        ["scenario.kind"],
        "run.json",
    ),
    (
        "journal_garbage_mid_file",
        json.dumps(RUN_META),
        b"{oops\n" + json.dumps(RECORD).encode() + b"\n",
        [":1: journal line is not a JSON record"],
        "journal.jsonl",
    ),
    (
        "journal_non_object_line",
        json.dumps(RUN_META),
        b"[1, 2, 3]\n" + json.dumps(RECORD).encode() + b"\n",
        [":1: journal line is not a JSON record (a JSON list, not an object)"],
        "journal.jsonl",
    ),
    (
        "journal_object_not_a_record",
        json.dumps(RUN_META),
        json.dumps({**RECORD, "valid": "perhaps"}).encode() + b"\n",
        [":1: not a trial record: valid:"],
        "journal.jsonl",
    ),
    (
        "journal_record_missing_field",
        json.dumps(RUN_META),
        json.dumps({k: v for k, v in RECORD.items() if k != "seed"}).encode() + b"\n",
        [":1: not a trial record: seed: Field required"],
        "journal.jsonl",
    ),
    (
        "journal_forged_extra_trial",
        json.dumps(RUN_META),
        json.dumps(RECORD).encode() + b"\n" + json.dumps({**RECORD, "trial_id": "c000-t0010"}).encode() + b"\n",
        [":2: trial 'c000-t0010' is not one the scenario expands to (cell 0 has 10 trial(s))"],
        "journal.jsonl",
    ),
    (
        "journal_record_of_a_cell_the_scenario_lacks",
        json.dumps(RUN_META),
        json.dumps({**RECORD, "cell_index": 5, "trial_id": "c005-t0001"}).encode() + b"\n",
        [":1: trial 'c005-t0001' names cell 5; the scenario has cells 0-0"],
        "journal.jsonl",
    ),
    (
        "journal_not_utf8",
        json.dumps(RUN_META),
        b"\xff\xfe\n" + json.dumps(RECORD).encode() + b"\n",
        [":1: journal line is not a JSON record"],
        "journal.jsonl",
    ),
]


@pytest.mark.parametrize("case,meta,journal,fragments,named", RUNS, ids=[c[0] for c in RUNS])
def test_bad_stored_run(case, meta, journal, fragments, named, runner, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if meta is not None:
        (run_dir / "run.json").write_text(meta)
    if journal is not None:
        (run_dir / "journal.jsonl").write_bytes(journal)
    _expect_one_line_error(runner.invoke(app, ["run", "--resume", str(run_dir), "-q"]), fragments, run_dir / named)
    assert not (run_dir / "work").exists()


def test_resume_of_a_folder_that_does_not_exist(runner, tmp_path):
    _expect_one_line_error(runner.invoke(app, ["run", "--resume", str(tmp_path / "gone")]), ["no such run folder"], tmp_path / "gone")


def test_run_needs_a_scenario_or_resume_not_both(runner, tmp_path):
    _expect_one_line_error(runner.invoke(app, ["run"]), ["give a scenario file to run, or --resume RUN_DIR"])
    _expect_one_line_error(runner.invoke(app, ["run", "x.yaml", "--resume", str(tmp_path)]), ["not both"])
    _expect_one_line_error(runner.invoke(app, ["run", "--resume", str(tmp_path), "--seed", "3"]), ["drop --seed/--trials/--racers"])


@pytest.mark.parametrize("case", ["malformed_yaml", "unknown_key", "factory_that_does_not_import"])
def test_the_installed_entry_point_answers_the_same(case, tmp_path):
    """The same answers from a real `python -m chaos` process (what a user's shell sees)."""
    text, command, fragments = next((t, c, f) for n, t, c, f in SCENARIOS if n == case)
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    args = [command, str(path)] + (["--out", str(tmp_path / "out"), "-q"] if command == "run" else [])
    p = chaos(args, tmp_path / "state")
    assert p.returncode == 3 and "Traceback" not in p.stderr + p.stdout
    line = one_line(p.stderr)
    assert str(path) in line and all(f in line for f in fragments), line

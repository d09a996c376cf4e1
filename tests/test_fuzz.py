"""Hostile input, generated: no scenario text, stored journal or run folder makes chaos crash.

Whatever Hypothesis feeds them, the scenario loader, the journal reader and the stored-run loader
either succeed or raise a ChaosError whose one-line message names the file; anything else
escaping (a KeyError, a RecursionError, a pydantic ValidationError) is a bug this finds.
"""

from __future__ import annotations

import json
import string
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from chaos.racer.errors import ChaosError, ScenarioError
from chaos.running.journal import read_journal, read_journal_lines
from chaos.scenario.model import Scenario, expand, parse_scenario

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = [
    "name",
    "about",
    "kind",
    "target",
    "workload",
    "workload_params",
    "racers",
    "jitter_ms",
    "trials",
    "seed",
    "resume",
    "distinct_values",
    "timeout_s",
    "points",
    "matrix",
    "bogus",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(["race", "kill_sweep", "langgraph", "sqlite", "three_step", "command:true", "none", "local", "docker", "k", "backend"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS + ["k", "backend", "hosts"]), st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=12,
)
scenario_dicts = st.dictionaries(st.sampled_from(KEYS), values, max_size=10)
yaml_chars = st.text(alphabet=string.printable + "\u00e9\u2603{}[]:-#&*!|>'\"%@`", max_size=300)


def _check_error(exc: ChaosError, path: str) -> None:
    msg = str(exc)
    assert msg.startswith(path), msg
    assert "\n" not in msg, msg


@FUZZ
@given(yaml_chars)
def test_any_text_is_a_scenario_or_one_clear_error(text):
    try:
        s = parse_scenario(text, "fuzz.yaml")
    except ScenarioError as exc:
        _check_error(exc, "fuzz.yaml")
    else:
        assert isinstance(s, Scenario)


@FUZZ
@given(scenario_dicts)
def test_any_mapping_is_a_scenario_or_one_clear_error(data):
    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, ValueError):
        assume(False)
    try:
        s = parse_scenario(text, "fuzz.yaml")
    except ScenarioError as exc:
        _check_error(exc, "fuzz.yaml")
    else:
        assert expand(s, check=False)


def test_hostile_yaml_shapes():
    bombs = {
        "deep_nesting": "name: " + "[" * 5000 + "]" * 5000,
        "deep_mapping": "a: " + "{b: " * 3000 + "1" + "}" * 3000,
        "billion_laughs": "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
            for i in range(8)
        )
        + "name: x\nkind: race\nworkload: three_step\nworkload_params: {p: *i}\n",
        "python_tag": "name: !!python/object/apply:os.system ['true']\n",
        "complex_key": "? [a, b]\n: 1\n",
        "nul_byte": "name: x\x00\n",
        "huge_int": "name: x\nkind: kill_sweep\nworkload: three_step\ntrials: " + "9" * 5000 + "\n",
    }
    for case, text in bombs.items():
        with pytest.raises(ScenarioError) as info:
            parse_scenario(text, f"{case}.yaml")
        _check_error(info.value, f"{case}.yaml")


@FUZZ
@given(st.binary(max_size=400))
def test_any_journal_bytes_read_or_refused_by_line(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "journal.jsonl"
        p.write_bytes(data)
        try:
            lines, torn = read_journal_lines(p)
        except ChaosError as exc:
            _check_error(exc, str(p))
        else:
            assert all(isinstance(o, dict) for _, o in lines)


record_dicts = st.dictionaries(st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=10), st.none()), max_size=4)


@FUZZ
@given(st.lists(record_dicts, min_size=1, max_size=6), st.data())
def test_a_torn_tail_is_dropped_never_parsed(records, data):
    """Cut a journal of whole records anywhere: the complete lines come back, the torn one never."""
    blob = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    cut = data.draw(st.integers(0, len(blob)))
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "journal.jsonl"
        p.write_bytes(blob[:cut])
        got, torn = read_journal(p)
        complete = blob[:cut].count(b"\n")
        assert got == records[:complete]
        assert torn == (cut > 0 and not blob[:cut].endswith(b"\n"))


RUN_META = {"run_id": "r", "scenario": {"name": "x", "kind": "kill_sweep", "workload": "three_step"}}


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=200),
        st.builds(lambda v: json.dumps(v).encode(), values),
        st.builds(
            lambda v: json.dumps({**RUN_META, **v}).encode(),
            st.dictionaries(st.sampled_from(["run_id", "scenario", "workload_path"]), values, max_size=2),
        ),
    ),
    st.lists(st.one_of(st.builds(lambda v: json.dumps(v).encode(), values), st.binary(max_size=40)), max_size=4),
)
def test_any_stored_run_loads_or_is_refused_naming_the_file(meta, lines):
    from chaos.running.runfolder import load_run

    with tempfile.TemporaryDirectory() as d:
        run = Path(d)
        (run / "run.json").write_bytes(meta)
        (run / "journal.jsonl").write_bytes(b"\n".join(lines) + (b"\n" if lines else b""))
        try:
            load_run(run)
        except ChaosError as exc:
            _check_error(exc, str(run))


inventory_texts = st.one_of(
    yaml_chars,
    st.builds(lambda v: yaml.safe_dump({"hosts": v}), values),
    st.builds(
        lambda v: yaml.safe_dump(v),
        st.dictionaries(
            st.sampled_from(["hosts", "known_hosts", "trust_on_first_use", "connect_timeout_s", "retries", "x"]), values, max_size=4
        ),
    ),
)


@FUZZ
@given(inventory_texts)
def test_any_inventory_loads_or_is_refused_naming_the_file(text):
    inventory = pytest.importorskip("chaos.remote.inventory", reason="host inventories arrive with the SSH launcher (infra branch)")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "hosts.yaml"
        p.write_text(text)
        try:
            inventory.load_inventory(p)
        except ChaosError as exc:
            _check_error(exc, str(p))


suite_texts = st.one_of(
    yaml_chars,
    st.builds(lambda v: yaml.safe_dump(v), st.lists(values, max_size=3)),
    st.builds(lambda v: yaml.safe_dump(v), st.dictionaries(st.sampled_from(["name", "about", "scenarios", "x"]), values, max_size=3)),
)


@FUZZ
@given(suite_texts)
def test_any_suite_loads_or_is_refused_naming_the_file(text):
    from chaos.scenario.suite import load_suite

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "suite.yaml"
        p.write_text(text)
        try:
            load_suite(p)
        except ChaosError as exc:
            _check_error(exc, str(p))

"""Suites: a YAML list of scenario files, each with optional overrides, run together as a nightly.

    name: nightly
    about: every shipped scenario, small
    scenarios:
      - file: consume_once_k4.yaml          # relative to the suite file
        overrides: {trials: 2}
      - file: kill_point_sweep.yaml

(a bare top-level list of entries is accepted too; the suite is then named after its file).

Loading is as strict as scenarios: unknown keys, a missing scenario file, an override that is not
a scenario field or has the wrong type, two entries with the same scenario name: each is a one-line
error naming the suite file, the line and the field, raised before anything runs. Overrides
replace top-level fields; the mappings ``target``, ``racers`` and ``workload_params`` are merged
key by key, so ``racers: {k: 1}`` keeps the scenario's placement. ``matrix`` is replaced whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chaos.racer.errors import ScenarioError
from chaos.scenario.model import (
    MAX_NODES,
    Scenario,
    _check_duplicates,
    _describe,
    _expanded_size,
    _line_of,
    check_semantics,
    expand,
    load_scenario,
    read_input_file,
)

MERGED = ("target", "racers", "workload_params")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SuiteEntry(_Strict):
    file: str = Field(min_length=1, description="scenario file, relative to the suite file")
    overrides: dict[str, Any] = Field(default_factory=dict, description="scenario fields to change for this suite")


class Suite(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    about: str = ""
    scenarios: list[SuiteEntry] = Field(min_length=1)


@dataclass
class SuiteItem:
    index: int
    file: Path
    overrides: dict[str, Any]
    scenario: Scenario


@dataclass
class LoadedSuite:
    path: Path
    suite: Suite
    items: list[SuiteItem]


def is_suite_text(data: Any) -> bool:
    """A parsed YAML document that is a suite rather than a scenario."""
    return isinstance(data, list) or (isinstance(data, dict) and "scenarios" in data and "kind" not in data)


def is_suite_file(path: str | os.PathLike) -> bool:
    try:
        return is_suite_text(yaml.safe_load(read_input_file(path, "scenario", "")))
    except (ScenarioError, ValueError, RecursionError, yaml.YAMLError):  # unreadable: the scenario loader says why
        return False


def apply_overrides(scenario: Scenario, overrides: dict[str, Any]) -> dict:
    data = scenario.model_dump(mode="json")
    for key, value in overrides.items():
        if key in MERGED and isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def load_suite(path: str | os.PathLike) -> LoadedSuite:
    p = Path(path)
    text = read_input_file(p, "suite", "scenarios/nightly.yaml is the shipped suite")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None and _expanded_size(node) > MAX_NODES:
            raise ScenarioError(f"{p}: the suite expands to more than {MAX_NODES} YAML nodes (aliases?)")
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ScenarioError(f"{p}{f':{mark.line + 1}' if mark else ''}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise ScenarioError(f"{p}: nested too deeply to be a suite") from None
    except (ValueError, OverflowError) as exc:
        raise ScenarioError(f"{p}: not valid YAML: {str(exc)[:200]}") from None
    if data is None or node is None:
        raise ScenarioError(f"{p}: the suite is empty; list scenario files under 'scenarios:'")
    _check_duplicates(node, str(p))
    if isinstance(data, list):  # bare list form: wrap it so lines still resolve
        data = {"name": p.stem.replace(" ", "_") or "suite", "scenarios": data}
        node = yaml.MappingNode(
            "tag:yaml.org,2002:map",
            [(yaml.ScalarNode("tag:yaml.org,2002:str", "scenarios", start_mark=node.start_mark), node)],
            start_mark=node.start_mark,
            end_mark=node.end_mark,
        )
    if not isinstance(data, dict) or "kind" in data:
        raise ScenarioError(
            f"{p}:1: a suite is a mapping with name and scenarios (a list of {{file, overrides}}), "
            "or a bare list of those; this looks like a scenario",
            hint="run a scenario with `chaos run`",
        )
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        line = _line_of(node, tuple(first["loc"]))
        field = ".".join(str(x) for x in first["loc"]) or "(top level)"
        if first["type"] == "extra_forbidden":
            where = "an entry" if "scenarios" in first["loc"][:1] and len(first["loc"]) > 2 else "a suite"
            msg = f"{field}: unknown key; allowed in {where}: " + (
                ", ".join(SuiteEntry.model_fields) if where == "an entry" else ", ".join(Suite.model_fields)
            )
        elif first["type"] == "missing":
            msg = f"{field}: required field is missing"
        else:
            msg = f"{field}: {first['msg']} (got {first.get('input')!r})"
        raise ScenarioError(f"{p}:{line or 1}: {msg}") from None

    items: list[SuiteItem] = []
    names: dict[str, int] = {}
    for i, entry in enumerate(suite.scenarios):
        loc = ("scenarios", i)
        file = p.parent / entry.file
        if not file.is_file():
            raise ScenarioError(
                f"{p}:{_line_of(node, loc + ('file',))}: scenarios[{i}].file: no such scenario file {entry.file!r} (looked for {file})",
                hint="fix the path or remove the entry from the suite",
            )
        base = load_scenario(file)  # its own errors name the scenario file
        try:
            scenario = Scenario.model_validate(apply_overrides(base, entry.overrides))
        except ValidationError as exc:
            first = exc.errors()[0]
            line = _line_of(node, loc + ("overrides",) + tuple(first["loc"]))
            raise ScenarioError(f"{p}:{line}: scenarios[{i}] ({entry.file}) overrides.{_describe(dict(first))}") from None
        try:
            check_semantics(scenario, str(file))
            expand(scenario, path=str(file))
        except ScenarioError as exc:
            raise ScenarioError(
                f"{p}:{_line_of(node, loc + ('overrides',))}: scenarios[{i}] ({entry.file}) with its overrides: {exc.message}"
            ) from None
        if scenario.name in names:
            raise ScenarioError(
                f"{p}:{_line_of(node, loc)}: scenarios[{i}] ({entry.file}): scenario name {scenario.name!r} is "
                f"already used by scenarios[{names[scenario.name]}]",
                hint="give one of them another name: overrides: {name: ...}",
            )
        names[scenario.name] = i
        items.append(SuiteItem(index=i, file=file, overrides=dict(entry.overrides), scenario=scenario))
    return LoadedSuite(path=p, suite=suite, items=items)

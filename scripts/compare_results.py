#!/usr/bin/env python3
"""Prove a change of code keeps every result: run the same scenarios, with the same seeds, at a base
revision and in the current tree, and compare their results.json.

Why: a redesign that "changes no behaviour" (issue 11) is only believed when the harness measures
the same thing before and after. For the deterministic kinds (kill sweeps, first-checkpoint and
recovery-determinism sweeps under durability sync, stray resume, fork, invalid state) the same
scenario and seed must give the same results.json, timings aside; races are timing-dependent, so
only their distribution is compared, loosely (``--races``).

What it does: checks out ``--base`` (default e518d3e, the commit before the redesign) into a
temporary ``git worktree``; writes each scenario, with this script's overrides (fewer kill points or
cases, so the default set runs in minutes on 2 cores), to a temporary file that both sides run; runs
``python -m chaos run FILE --out DIR --seed N -q [--trials N]`` in the base tree and in the current
tree (PYTHONPATH and working folder set to the tree being run, so racers import that tree's chaos);
strips from both results.json what legitimately differs between two runs (run id, timings, ledger
sequence numbers: ``chaos.running.resume.comparable`` when the current tree has it, an identical copy
otherwise); prints one line per scenario, ``same`` or ``differs`` with the first differing keys; and
exits 1 when any differs, 2 when a side could not run, 0 otherwise. Outputs go to a temporary folder
(kept with ``--keep``), never to reports/.

Excluded, with the reason (``--list`` shows the set): scenarios that need Docker, SSH hosts or
PostgreSQL (all races); races (use ``--races``); cases whose outcome the framework leaves open:
RD under async durability (LangGraph issue 8039), LangGraph's functional API (a task's write is saved
on a background thread), CrewAI's CheckpointConfig (checkpoints written from the event bus's thread
pool); and one kind of kill point, LangGraph's save of the run's own input (``put_writes(node=-,...)``,
written on a background thread while the resumed task runs: see OPEN_POINTS; ``--strict`` compares
it too). The default set cuts kill points and trials like scenarios/nightly.yaml; ``--full`` runs
every deterministic case as shipped (much longer).

Modes (``--modes``): instead of two revisions, the current tree twice, every sweep cell once with
``crash_states: kill`` and once with ``crash_states: recorded`` (``chaos.kinds.crash_states``), compared
the same way per cell and kill point (effect counts, outcomes, verdicts and their evidence). What
differs by design is left out: the cell's ``crash_states`` account and the run's trial summary (a
recording is a trial, its points count as recorded states, not kills). A scenario without a sweep
cell is compared as it is (both sides then run the same).

One command, from the repository root:  python scripts/compare_results.py
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "e518d3e"
RUN_TIMEOUT_S = 3600

NOT_RACES_KILL_POINTS = ["effect(task=b)", "effect(task=gate)"]


def _targets() -> dict[str, Any]:
    """The adapters of the current tree (``chaos.targets.TARGETS``): which frameworks have a contract
    scenario, and the cases each leaves open (``TargetInfo.open_cases``), so a new adapter is compared
    with nothing added here."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from chaos.targets import TARGETS

    return dict(TARGETS)


def contract_file(framework: str) -> str:
    return f"contract_{framework}.yaml"


def deterministic_cases(framework: str) -> list[str]:
    """The cases of ``scenarios/contract_<framework>.yaml`` whose outcome is deterministic, in file
    order: every case but races and the adapter's ``open_cases`` (e.g. LangGraph's functional API, a
    task's write saved on a background thread; RD under async durability, issue 8039; CrewAI's
    CheckpointConfig, written from its event bus's thread pool)."""
    data = yaml.safe_load((REPO / "scenarios" / contract_file(framework)).read_text())
    open_cases = _targets()[framework].open_cases
    return [c["name"] for c in data["matrix"]["case"] if c.get("kind", data.get("kind")) != "race" and c["name"] not in open_cases]


def contract_frameworks() -> list[str]:
    """The adapters other than LangGraph (whose scenarios are listed one by one) with a contract scenario."""
    return [fw for fw in _targets() if fw != "langgraph" and (REPO / "scenarios" / contract_file(fw)).is_file()]


@dataclasses.dataclass
class Entry:
    """One scenario to compare: a shipped file, the overrides both sides run it with, and why."""

    file: str
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict)
    note: str = ""
    race: bool = False


def _cases(file: str, names: list[str]) -> dict[str, Any]:
    """Override ``matrix.case`` with the named cases of a shipped file (keeps their order)."""
    data = yaml.safe_load((REPO / "scenarios" / file).read_text())
    by_name = {c["name"]: c for c in data["matrix"]["case"]}
    return {"matrix": {"case": [by_name[n] for n in names]}}


# "langgraph_server" (contract_langgraph_server.yaml): races through the Agent Server only, which are
# timing-dependent, so it has no deterministic case to compare yet


def default_entries() -> list[Entry]:
    """The quick set: every deterministic shipped scenario, cut down like scenarios/nightly.yaml."""
    all_cases = {c["name"] for c in yaml.safe_load((REPO / "scenarios" / "contract_all.yaml").read_text())["matrix"]["case"]}
    others = contract_frameworks()
    return [
        Entry("kill_point_sweep.yaml", note="every boundary x 3 resume forms"),
        Entry("kill_point_sweep_gate.yaml", note="every boundary x 2 resume forms"),
        Entry(
            "first_checkpoint_crash.yaml",
            {"trials": 1},
            note="sync and exit (exit: nothing is durable until the end, written synchronously)",
        ),
        Entry("selftest.yaml", {"trials": 1}),
        Entry(
            "contract_langgraph.yaml",
            {**_cases("contract_langgraph.yaml", deterministic_cases("langgraph")), "trials": 1},
            note="fork, stray, invalid, RD sync (RD cases keep their 2 repeats)",
        ),
        Entry("fork_versions.yaml", note="LangGraph 1.2.24 and 1.0.10"),
        *[
            Entry(
                contract_file(fw),
                {**_cases(contract_file(fw), deterministic_cases(fw)), "kill_points": NOT_RACES_KILL_POINTS},
                note="races"
                + (f" and {', '.join(_targets()[fw].open_cases)}" if _targets()[fw].open_cases else "")
                + " out; sweeps at the effects of b / the gate",
            )
            for fw in others
        ],
        Entry(
            "contract_all.yaml",
            _cases("contract_all.yaml", [n for fw in others for kind in ("fork", "invalid") if (n := f"{fw}-{kind}") in all_cases]),
            note="fork and invalid state where the frameworks' own files lack them (unknown: unsupported, with the reason)",
        ),
    ]


def full_entries() -> list[Entry]:
    """Every deterministic case of every shipped scenario that runs on one machine, at full size."""
    all_cases = yaml.safe_load((REPO / "scenarios" / "contract_all.yaml").read_text())["matrix"]["case"]
    return [
        Entry("kill_point_sweep.yaml"),
        Entry("kill_point_sweep_gate.yaml"),
        Entry("first_checkpoint_crash.yaml"),
        Entry("selftest.yaml"),
        Entry("contract_langgraph.yaml", _cases("contract_langgraph.yaml", deterministic_cases("langgraph"))),
        Entry("fork_versions.yaml"),
        Entry(
            "contract_all.yaml",
            _cases("contract_all.yaml", [c["name"] for c in all_cases if c["kind"] != "race"]),
            note="CrewAI cells here use @persist (backend sqlite): deterministic",
        ),
        *[Entry(contract_file(fw), _cases(contract_file(fw), deterministic_cases(fw))) for fw in contract_frameworks()],
    ]


def race_entries() -> list[Entry]:
    """Races: compared by saturation per cell, within a tolerance (their fires depend on timing)."""
    return [
        Entry("consume_once_k4.yaml", {"trials": 5}, race=True),
        Entry("consume_once_matrix.yaml", {"trials": 3, "matrix": {"backend": ["sqlite"], "k": [2, 4], "jitter_ms": [0, 5]}}, race=True),
    ]


def describe(e: Entry) -> str:
    """What an entry runs, in one line: its note, its cases, its other overrides."""
    over = dict(e.overrides)
    parts = [e.note] if e.note else []
    cases = over.get("matrix", {}).get("case")
    if cases:
        parts.append("cases " + ", ".join(c["name"] for c in cases))
    rest = {k: v for k, v in over.items() if k != "matrix"}
    matrix = {k: v for k, v in over.get("matrix", {}).items() if k != "case"}
    if matrix:
        rest["matrix"] = matrix
    if rest:
        parts.append("overrides " + json.dumps(rest))
    return "; ".join(parts) or "as shipped"


EXCLUDED = {
    "consume_once_docker.yaml": "needs Docker (race)",
    "crosshost_consume_once.yaml": "needs SSH hosts and PostgreSQL (race)",
    "consume_once_matrix_full.yaml": "needs PostgreSQL (race)",
    "nightly.yaml, nightly_full.yaml": "suites, not scenarios",
    "contract_<framework> cases": "race-k3: races (--races compares the LangGraph ones)",
}


def excluded() -> dict[str, str]:
    """What is left out, and why: ``EXCLUDED`` and each adapter's ``open_cases``."""
    out = dict(EXCLUDED)
    for fw, info in _targets().items():
        if not (REPO / "scenarios" / contract_file(fw)).is_file():
            out[contract_file(fw)] = f"the {fw} adapter ships no contract scenario"
        by_why: dict[str, list[str]] = {}
        for case, why in info.open_cases.items():
            by_why.setdefault(why, []).append(case)
        if by_why:
            out[f"contract_{fw} cases"] = "; ".join(f"{', '.join(cases)}: {why}" for why, cases in by_why.items())
    return out


# -- comparing ---------------------------------------------------------------------------------------

TIMING_KEYS = {"release_spread_ms", "ledger_seqs", "run_id", "wall_s_median", "store_size"}


def _comparable_fallback(data: dict) -> dict:
    """The same as chaos.running.resume.comparable (used when the current tree has moved it)."""
    run_id = data.get("run_id")

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMING_KEYS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, str) and run_id:
            return x.replace(run_id, "<run>")
        return x

    return strip(data)


def comparable(data: dict) -> dict:
    """``data`` without what differs between any two runs of the same code: timings, the run id,
    UUIDs (the Agent Server's thread ids are uuid5 of the run id, quoted in LS's reasons), and empty
    fields (absent in an older tree's results)."""
    sys.path.insert(0, str(REPO))
    try:
        from chaos.running.resume import comparable as theirs  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        theirs = _comparable_fallback
    finally:
        sys.path.remove(str(REPO))
    return _without_empty(json.loads(UUID.sub("<uuid>", json.dumps(theirs(data)))))


def _without_empty(x: Any) -> Any:
    """``x`` without keys whose value is empty (``[]``, ``{}``, ``null``): a field a newer tree adds
    with nothing in it (a point's ``extra`` effects, say) says what its absence says."""
    if isinstance(x, dict):
        return {k: _without_empty(v) for k, v in x.items() if v not in ([], {}, None)}
    if isinstance(x, list):
        return [_without_empty(v) for v in x]
    return x


# Kill points whose outcome the framework leaves open although the kind is deterministic elsewhere.
# LangGraph saves the run's own input writes (task id NULL_TASK_ID, shown as node=-: a Command's
# resume value) through its background executor (pregel/_loop.py put_writes -> self.submit) while
# the main thread goes on to run the resumed task: a racer held at that boundary may or may not have
# fired the task's effect when it is killed (measured on kill_point_sweep_gate, resume=command:true,
# put_writes(node=-,channels=__resume__):before#1: gate fired once in one run, twice in the next, same
# code and seed). These points, and the per-cell verdict reasons and evidence that count them, are
# left out of the comparison (statuses stay compared), and so are the point numbers in that cell's
# trial ids (the dry run may record the side thread's boundary before or after the task's effect,
# which shifts the index of every later point; the points themselves are matched by name).
# --strict compares them too.
OPEN_POINTS = ("put_writes(node=-,",)
TRIAL_ID = re.compile(r"c\d{3}-p\d{3}-r\d{3}")


def mask_open_points(data: dict) -> tuple[dict, list[str]]:
    """``data`` without the kill points of OPEN_POINTS; returns it and the names of the points left out."""
    data = copy.deepcopy(data)
    masked: list[str] = []
    for cell in data.get("cells", []):
        points = cell.get("points") or []
        drop = [pt["point"] for pt in points if str(pt.get("point", "")).startswith(OPEN_POINTS)]
        if not drop:
            continue
        masked += [f"{cell.get('cell_id')}: {name}" for name in drop]
        cell["points"] = [pt for pt in points if pt.get("point") not in drop]
        cell["verdicts"] = [{"property": v.get("property"), "status": v.get("status")} for v in cell.get("verdicts", [])]
        # the dry run's order of boundaries, so the point index in trial ids, is open there too
        cell.update(json.loads(TRIAL_ID.sub("<trial>", json.dumps(cell))))
        cell["summary"] = {
            k: ({n: x for n, x in v.items() if n not in drop} if isinstance(v, dict) else v) for k, v in (cell.get("summary") or {}).items()
        }
    return data, masked


def first_differences(a: Any, b: Any, path: str = "", limit: int = 5) -> list[str]:
    """Where two JSON values differ: up to ``limit`` lines ``path: base -> current``."""
    out: list[str] = []

    def short(x: Any) -> str:
        s = json.dumps(x, sort_keys=True)
        return s if len(s) <= 100 else s[:97] + "..."

    def label(item: Any, i: int) -> str:
        """A list item's name where it has one (cell, kill point, property), else its index."""
        if isinstance(item, dict):
            for key in ("cell_id", "point", "property"):
                if isinstance(item.get(key), str):
                    return item[key]
        return str(i)

    def walk(x: Any, y: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in list(x) + [k for k in y if k not in x]:
                if k not in x or k not in y:
                    out.append(f"{p}.{k}: {'(absent)' if k not in x else short(x[k])} -> {'(absent)' if k not in y else short(y[k])}")
                else:
                    walk(x[k], y[k], f"{p}.{k}")
                if len(out) >= limit:
                    return
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                out.append(f"{p}: {len(x)} items -> {len(y)} items")
            for i, (u, v) in enumerate(zip(x, y, strict=False)):  # lengths told above
                walk(u, v, f"{p}[{label(u, i)}]")
        elif x != y:
            out.append(f"{p or '.'}: {short(x)} -> {short(y)}")

    walk(a, b, path)
    return out


def race_differences(a: dict, b: dict, tolerance: float) -> list[str]:
    """Per cell: saturation within ``tolerance`` (absolute, on the 0..1 scale) and the same trial counts."""
    out = []
    cells_b = {c["cell_id"]: c for c in b.get("cells", [])}
    for ca in a.get("cells", []):
        cb = cells_b.get(ca["cell_id"])
        if cb is None:
            out.append(f"cell {ca['cell_id']}: absent in current")
            continue
        sa, sb = ca.get("saturation"), cb.get("saturation")
        if (sa is None) != (sb is None) or (sa is not None and abs(sa - sb) > tolerance):
            out.append(f"cell {ca['cell_id']}: saturation {sa} -> {sb} (tolerance {tolerance})")
        if ca.get("trials") != cb.get("trials"):
            out.append(f"cell {ca['cell_id']}: trials {ca.get('trials')} -> {cb.get('trials')}")
    return out


def race_line(a: dict, b: dict) -> str:
    def fmt(s: float | None) -> str:
        return "-" if s is None else f"{s:.2f}"

    cells_b = {c["cell_id"]: c for c in b.get("cells", [])}
    parts = []
    for ca in a.get("cells", []):
        cb = cells_b.get(ca["cell_id"], {})
        parts.append(f"{ca['cell_id']} {fmt(ca.get('saturation'))}/{fmt(cb.get('saturation'))}")
    return "saturation base/current: " + ", ".join(parts)


# -- running -----------------------------------------------------------------------------------------


def deep_merge(base: dict, over: dict) -> dict:
    """Scenario overrides as the nightly suite applies them: mappings merge key by key, the rest replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k != "matrix":
            out[k] = deep_merge(out[k], v)
        elif k == "matrix" and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = copy.deepcopy(v)
    return out


def write_scenario(entry: Entry, folder: Path) -> tuple[Path, int]:
    data = yaml.safe_load((REPO / "scenarios" / entry.file).read_text())
    data = deep_merge(data, entry.overrides)
    path = folder / entry.file
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, int(data["seed"])


def with_crash_states(data: dict, mode: str) -> dict:
    """``data`` (a scenario) with ``crash_states: mode`` on every sweep cell (the kinds whose options
    read it); other kinds refuse the field, so it is set per case where the file mixes kinds."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from chaos.kinds import get_kind

    def sweep(kind: str) -> bool:
        return "crash_states" in get_kind(kind).Options.model_fields

    data = copy.deepcopy(data)
    cases = (data.get("matrix") or {}).get("case")
    kinds = (data.get("matrix") or {}).get("kind")
    if cases:
        for case in cases:
            if sweep(case.get("kind", data.get("kind", ""))):
                case["crash_states"] = mode
    elif kinds:  # a kind axis: cases instead, one per kind, so only the sweeps get the field
        data["matrix"]["case"] = [{"kind": k, **({"crash_states": mode} if sweep(k) else {})} for k in kinds]
        del data["matrix"]["kind"]
    elif sweep(data.get("kind", "")):
        data["crash_states"] = mode
    return data


UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
THREAD_ID = re.compile(r"<run>-c\d{3,}-(?:rec\d{3,}(?:-\d+)?|p\d{3,}(?:-q\d{3,})*-r\d{3,})")


def mask_modes(data: dict) -> dict:
    """``data`` without what differs between kill and recorded mode by design: each cell's
    ``crash_states`` account and axis, the run's trial summary (recordings are trials too), and thread ids
    (a recorded point resumes its recording's thread, ``<run>-c000-rec000``, where a kill trial has its
    own, ``<run>-c000-p003-r000``: an adapter's file names and reasons carry it), and UUIDs (the Agent
    Server's thread ids, uuid5 of the run id, differ between any two runs)."""
    data = copy.deepcopy(data)
    data.pop("summary", None)
    for cell in data.get("cells", []):
        cell.pop("crash_states", None)
        axes = cell.get("axes") or {}
        axes.pop("crash_states", None)
        if isinstance(axes.get("case"), dict):
            axes["case"].pop("crash_states", None)
    # the Agent Server's thread ids are uuid5 of the run id (chaos.targets.langgraph_server.session): new each run
    return json.loads(UUID.sub("<uuid>", THREAD_ID.sub("<run>-<thread>", json.dumps(data))))


@dataclasses.dataclass
class Side:
    results: dict | None
    exit_code: int
    seconds: float
    error: str = ""


def run_side(tree: Path, scenario: Path, out: Path, seed: int, trials: int | None, log: Path) -> Side:
    """``python -m chaos run`` with ``tree``'s chaos; returns its results.json (None if it wrote none)."""
    cmd = [sys.executable, "-m", "chaos", "run", str(scenario), "--out", str(out), "--seed", str(seed), "-q"]
    if trials is not None:
        cmd += ["--trials", str(trials)]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    with open(log, "w") as fh:
        try:
            proc = subprocess.run(cmd, cwd=tree, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = -1
    seconds = time.monotonic() - t0
    found = sorted(out.glob("*/*/results.json"))
    if not found:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        return Side(None, code, seconds, f"exit {code}, no results.json: {tail}")
    return Side(json.loads(found[-1].read_text()), code, seconds)


def chaos_of(tree: Path) -> Path:
    """The chaos package a run in ``tree`` imports: it must be the tree's own, not an installed copy."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", "import chaos; print(chaos.__file__)"], cwd=tree, env=env, capture_output=True, text=True)
    found = Path(proc.stdout.strip()).resolve().parent if proc.returncode == 0 else None
    if found != (tree / "chaos").resolve():
        raise SystemExit(f"compare_results: a run in {tree} would import chaos from {found}, not from the tree")
    return found


def base_worktree(base: str, folder: Path) -> Path:
    tree = folder / "base-tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), base], check=True)
    return tree


def remove_worktree(tree: Path) -> None:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] + " See the module docstring for what is compared.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: python scripts/compare_results.py            # the quick default set\n"
        "         python scripts/compare_results.py --races    # and race distributions\n"
        "         python scripts/compare_results.py scenarios/kill_point_sweep.yaml --trials 1",
    )
    ap.add_argument("scenarios", nargs="*", help="scenario files to compare as shipped (default: the deterministic set, see --list)")
    ap.add_argument("--base", default=DEFAULT_BASE, help=f"git revision to compare against (default {DEFAULT_BASE}, before the redesign)")
    ap.add_argument("--base-tree", type=Path, help="use this checkout as the base instead of making a git worktree of --base")
    ap.add_argument("--seed", type=int, help="root seed for every scenario (default: each scenario's own seed)")
    ap.add_argument("--trials", type=int, help="trials per cell (per kill point for sweeps), the same on both sides")
    ap.add_argument("--full", action="store_true", help="every deterministic case at full size, CrewAI included (long)")
    ap.add_argument("--races", action="store_true", help="also compare race scenarios, by saturation per cell")
    ap.add_argument("--tolerance", type=float, default=0.25, help="--races: largest saturation difference per cell (default 0.25)")
    ap.add_argument("--only-races", action="store_true", help="compare the race scenarios alone")
    ap.add_argument("--strict", action="store_true", help="compare also the kill points whose outcome the framework leaves open")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (run folders, logs) and say where")
    ap.add_argument("--list", action="store_true", help="print the scenarios that would run, and those left out, then exit")
    ap.add_argument("--modes", action="store_true", help="compare crash_states kill with recorded in the current tree (no base revision)")
    args = ap.parse_args(argv)

    if args.scenarios:
        entries = []
        for f in args.scenarios:
            p = Path(f)
            name = p.name
            if not (REPO / "scenarios" / name).exists():
                ap.error(f"{f}: not a shipped scenario (scenarios/{name})")
            race = yaml.safe_load((REPO / "scenarios" / name).read_text()).get("kind") == "race"
            entries.append(Entry(name, race=race))
    else:
        entries = [] if args.only_races else (full_entries() if args.full else default_entries())
        if args.races or args.only_races:
            entries += race_entries()

    if args.list:
        for e in entries:
            print(f"run   {e.file:30} {'by saturation' if e.race else 'exact'}: {describe(e)}")
        for f, why in excluded().items():
            if not any(e.file == f for e in entries):
                print(f"skip  {f:30} {why}")
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="chaos-compare-"))
    tree_base = args.base_tree.resolve() if args.base_tree else None
    made_tree = False
    worst = 0
    t_all = time.monotonic()
    try:
        if args.modes:
            tree_base = REPO
        elif tree_base is None:
            tree_base = base_worktree(args.base, tmp)
            made_tree = True
        rev = subprocess.run(["git", "-C", str(tree_base), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
        chaos_of(tree_base), chaos_of(REPO)
        if args.modes:
            print(f"crash_states kill vs recorded, both in {head}{' + uncommitted changes' if dirty else ''} ({REPO})", flush=True)
        else:
            print(f"base {rev} ({tree_base}) vs current {head}{' + uncommitted changes' if dirty else ''} ({REPO})", flush=True)
        (tmp / "scenarios").mkdir()
        for e in entries:
            scenario, seed = write_scenario(e, tmp / "scenarios")
            seed = args.seed if args.seed is not None else seed
            stem = Path(e.file).stem
            files = {"base": scenario, "current": scenario}
            if args.modes:  # the same scenario, its sweep cells once per mode
                data = yaml.safe_load(scenario.read_text())
                for label, mode in (("base", "kill"), ("current", "recorded")):
                    files[label] = tmp / "scenarios" / f"{stem}-{mode}.yaml"
                    files[label].write_text(yaml.safe_dump(with_crash_states(data, mode), sort_keys=False))
            sides = {}
            for label, tree in (("base", tree_base), ("current", REPO)):
                out = tmp / label / stem
                out.mkdir(parents=True, exist_ok=True)
                sides[label] = run_side(tree, files[label], out, seed, args.trials, tmp / label / f"{stem}.log")
            a, b = sides["base"], sides["current"]
            took = f"({a.seconds:.0f}s + {b.seconds:.0f}s)"
            if a.results is None and b.results is not None and "unknown framework" in (a.error or ""):
                # an adapter added since the base: nothing to compare against, which is not a failure
                print(f"new      {e.file}  {took}  the base has no such framework: {a.error}", flush=True)
                continue
            if a.results is None or b.results is None:
                worst = max(worst, 2)
                print(f"error    {e.file}  {took}", flush=True)
                for label, s in sides.items():
                    if s.error:
                        print(f"           {label}: {s.error}", flush=True)
                continue
            if e.race:
                diffs = race_differences(a.results, b.results, args.tolerance)
                detail = race_line(a.results, b.results)
            else:
                ca, cb = comparable(a.results), comparable(b.results)
                if args.modes:
                    ca, cb = mask_modes(ca), mask_modes(cb)
                masked: list[str] = []
                if not args.strict:
                    ca, masked = mask_open_points(ca)
                    cb, _ = mask_open_points(cb)
                diffs = first_differences(ca, cb)
                n_cells = len(a.results.get("cells", []))
                counts = a.results.get("verdict_counts", {})
                detail = (
                    f"{n_cells} cells, verdicts {counts.get('holds', 0)} holds / {counts.get('violated', 0)} violated"
                    f" / {counts.get('unknown', 0)} unknown"
                )
                if masked:
                    detail += f"; {len(masked)} open kill points not compared (--strict compares them)"
                if args.modes:  # what the recorded side used, per cell (a cell may fall back to kill mode)
                    states = [c["crash_states"] for c in b.results.get("cells", []) if c.get("crash_states")]
                    used = [cs["used"] for cs in states]
                    detail += f"; recorded side: {used.count('recorded')} of {len(used)} sweep cells recorded"
                    if used.count("recorded") < len(used):
                        whys = {cs["reason"] for cs in states if cs["used"] != "recorded"}
                        detail += " (others in kill mode: " + " | ".join(sorted(w[:90] for w in whys if w))[:300] + ")"
            if a.exit_code != b.exit_code:
                diffs.insert(0, f"exit code: {a.exit_code} -> {b.exit_code}")
            if diffs:
                worst = max(worst, 1)
                print(f"differs  {e.file}  {took}  {detail}", flush=True)
                for d in diffs:
                    print(f"           {d}", flush=True)
            else:
                print(f"same     {e.file}  {took}  {detail}", flush=True)
        mins = (time.monotonic() - t_all) / 60
        print(
            f"{'all same' if worst == 0 else 'DIFFERENCES' if worst == 1 else 'some scenarios did not run'}"
            f" ({len(entries)} scenarios, {mins:.1f} min)",
            flush=True,
        )
    finally:
        if made_tree and tree_base is not None:
            remove_worktree(tree_base)
        if args.keep:
            print(f"kept: {tmp} (base/ and current/: run folders and logs; scenarios/: the files both sides ran)")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return worst


if __name__ == "__main__":
    sys.exit(main())

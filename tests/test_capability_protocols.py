"""Optional capabilities are small runtime-checkable protocols, asked with ``isinstance`` (issue 23):
a launcher that reports state changes (``WaitsForChange``), forgets a finished trial's racers
(``ForgetsHandles``), passes its environment to its racers (``PassesEnv``) or labels what it starts
(``LabelsRacers``); a ledger with an idempotent append (``AppendsOnce``). Each shipped class is what
its protocols say, the callers use them, and no ``getattr`` probe for these names is left."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chaos.launchers import ForgetsHandles, LabelsRacers, Named, PassesEnv, WaitsForChange
from chaos.launchers.docker import DockerLauncher
from chaos.launchers.local import LocalLauncher
from chaos.launchers.ssh import SshLauncher
from chaos.launchers.warm.client import WarmLauncher
from chaos.launchers.warm.docker import DockerWarmLauncher
from chaos.launchers.warm.ssh import SshWarmLauncher
from chaos.racer.ledger import AppendsOnce, SqliteLedger
from chaos.racer.ledger_pg import PostgresLedger
from chaos.running.registry import DOCKER_LABEL, ENV_RUN_ID, label_launcher
from chaos.targets.common import append_effect

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("cls", "waits", "forgets"),
    [
        (LocalLauncher, False, True),
        (WarmLauncher, True, True),
        (DockerWarmLauncher, True, True),
        (SshWarmLauncher, True, True),
        (DockerLauncher, False, False),
        (SshLauncher, False, False),
    ],
)
def test_each_launcher_declares_what_it_can(cls, waits, forgets):
    assert issubclass(cls, WaitsForChange) is waits
    assert issubclass(cls, ForgetsHandles) is forgets
    assert isinstance(cls.name, str) and cls.name


def test_labels_go_where_the_launcher_takes_them(tmp_path):
    local = LocalLauncher(env={"KEEP": "1"})
    assert isinstance(local, PassesEnv) and isinstance(local, Named) and not isinstance(local, LabelsRacers)
    label_launcher(local, {ENV_RUN_ID: "run-1"})
    assert local.env == {"KEEP": "1", ENV_RUN_ID: "run-1"}

    class Labelled:  # a launcher that labels its own containers
        def __init__(self) -> None:
            self.labels: dict[str, str] = {}

    lab = Labelled()
    assert isinstance(lab, LabelsRacers) and not isinstance(lab, PassesEnv)
    label_launcher(lab, {ENV_RUN_ID: "run-2"})
    assert lab.labels == {DOCKER_LABEL: "run-2"} and not hasattr(lab, "env")


def test_an_idempotent_effect_needs_a_ledger_that_appends_once(tmp_path):
    ledger = SqliteLedger(str(tmp_path / "l.sqlite"), {"run_id": "r", "cell_id": "c", "trial_id": "t", "racer_id": "a", "host": "h"})
    assert isinstance(ledger, AppendsOnce) and not issubclass(PostgresLedger, AppendsOnce)
    assert append_effect(ledger, "b", None, "th", None, once=True) is not None
    assert append_effect(ledger, "b", None, "th", None, once=True) is None  # the same key again: nothing recorded

    class Plain:
        def append(self, **kw: object) -> int:
            return 1

    with pytest.raises(NotImplementedError, match="Plain has no idempotent append"):
        append_effect(Plain(), "b", None, "th", None, once=True)  # type: ignore[arg-type]


def test_no_getattr_probe_for_these_capabilities_is_left():
    probe = re.compile(r"(getattr|hasattr)\([^)]*[\"'](wait_change|forget|name|env|labels|append_once|gated_task)[\"']")
    for rel in ("chaos/running/trial.py", "chaos/running/registry.py", "chaos/targets/common.py", "chaos/targets/langgraph/session.py"):
        found = [line.strip() for line in (ROOT / rel).read_text().splitlines() if probe.search(line)]
        assert not found, (rel, found)

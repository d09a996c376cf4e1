"""The orchestrator half of the adk package: the optional capabilities of ``chaos.targets.hooks``
it implements (``INFO.hooks`` names this module; shared code asks it through those protocols).

* ``repro`` (``WritesRepro``): ``chaos repro`` writes a violating kill-sweep trial as a standalone
  script, the text of ``chaos.targets.adk.repro`` (which imports nothing of chaos or ADK); the script
  opens the SQLite session services, so it needs their async driver beside google-adk.
* ``reap_store`` (``ReapsStore``): a run with cells on ``backend: mariadb`` has its own database on
  the server of ``CHAOS_MYSQL_DSN`` (``chaos.targets.adk.mariadb``), dropped at the run's cleanup;
  ``store_names`` names it (a ``--keep-work`` run's kept record, ``chaos clean``'s listing).
* ``cut_connections`` (``CutsConnections``): ``fault: db_disconnect`` on ``backend: mariadb`` kills
  the victim's connections to that database, by the ids the racer wrote as it opened them.
"""

from __future__ import annotations

from pathlib import Path

from chaos.repro import ScriptWriter
from chaos.targets.adk import mariadb
from chaos.targets.hooks import Cut

_WRITER = ScriptWriter("chaos.targets.adk.repro", ("EO",), extra_pins=("aiosqlite", "sqlalchemy[asyncio]"))
repro_properties = _WRITER.repro_properties
repro = _WRITER.repro


def reap_store(run_id: str, python: str, backends: list[str]) -> list[str]:
    """The run's MariaDB database dropped, when some cell ran on ``backend: mariadb``."""
    return mariadb.reap(run_id, python) if "mariadb" in backends else []


def store_names(run_id: str, backends: list[str]) -> list[str]:
    """The run's MariaDB database, when some cell ran on ``backend: mariadb``."""
    return [f"MariaDB database {mariadb.database_name(run_id)}"] if "mariadb" in backends else []


def cut_connections(run_id: str, backend: str, name: str, trial_dir: Path, python: str) -> Cut:
    """The racer's connections to the run's MariaDB database killed (``KILL CONNECTION``)."""
    found, ended = mariadb.cut(run_id, name, trial_dir, python)
    return Cut(found, ended, "by the ids the racer's session service wrote as it opened them (CONNECTION_ID())")

"""The orchestrator half of the adk package: the optional capabilities of ``chaos.targets.hooks``
it implements (``INFO.hooks`` names this module; shared code asks it through those protocols).

* ``repro`` (``WritesRepro``): ``chaos repro`` writes a violating kill-sweep trial as a standalone
  script, the text of ``chaos.targets.adk.repro`` (which imports nothing of chaos or ADK); the script
  opens the SQLite session services, so it needs their async driver beside google-adk.
* ``reap_store`` (``ReapsStore``): a run with cells on ``backend: mariadb`` has its own database on
  the server of ``CHAOS_MYSQL_DSN`` (``chaos.targets.adk.mariadb``), dropped at the run's cleanup.
"""

from __future__ import annotations

from chaos.repro import ScriptWriter
from chaos.targets.adk import mariadb

_WRITER = ScriptWriter("chaos.targets.adk.repro", ("EO",), extra_pins=("aiosqlite", "sqlalchemy[asyncio]"))
repro_properties = _WRITER.repro_properties
repro = _WRITER.repro


def reap_store(run_id: str, python: str, backends: list[str]) -> list[str]:
    """The run's MariaDB database dropped, when some cell ran on ``backend: mariadb``."""
    return mariadb.reap(run_id, python) if "mariadb" in backends else []

"""The orchestrator half of the adk package: the optional capabilities of ``chaos.targets.hooks``
it implements (``INFO.hooks`` names this module; shared code asks it through those protocols).

* ``repro`` (``WritesRepro``): ``chaos repro`` writes a violating kill-sweep trial as a standalone
  script, the text of ``chaos.targets.adk.repro`` (which imports nothing of chaos or ADK); the script
  opens the SQLite session services, so it needs their async driver beside google-adk.
"""

from __future__ import annotations

from chaos.repro import ScriptWriter

_WRITER = ScriptWriter("chaos.targets.adk.repro", ("EO",), extra_pins=("aiosqlite", "sqlalchemy[asyncio]"))
repro_properties = _WRITER.repro_properties
repro = _WRITER.repro

"""The orchestrator half of the openai_agents package: the optional capabilities of ``chaos.targets.hooks``
it implements (``INFO.hooks`` names this module; shared code asks it through those protocols).

* ``repro`` (``WritesRepro``): ``chaos repro`` writes a violating kill-sweep trial as a standalone
  script (EO and PC), and a race's CO violation, the text of ``chaos.targets.openai_agents.repro`` (which imports nothing of chaos or the framework).
"""

from __future__ import annotations

from chaos.repro import ScriptWriter

_WRITER = ScriptWriter("chaos.targets.openai_agents.repro", ("EO", "PC", "CO"), kinds=("race",))
repro_properties = _WRITER.repro_properties
repro = _WRITER.repro

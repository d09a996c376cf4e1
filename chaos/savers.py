"""The name scenarios use for chaos's saver factories: ``target.saver: chaos.savers:lmdb``.

The factories are racer-side code in LangGraph's package (shipped to SSH hosts with the racer
folders); a racer reads a ``chaos.savers:`` reference as that module (its ``custom_saver.saver_ref``),
so this module is only the name the orchestrator's load check and a team's own imports find: it is
that module itself (``chaos.targets.MOVED``), and imports nothing else (standard library only).
"""

from chaos.targets import alias_moved

alias_moved(__name__)

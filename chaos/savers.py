"""The name scenarios use for chaos's saver factories: ``target.saver: chaos.savers:lmdb``.

The factories are racer-side code and live in ``chaos.targets.langgraph.savers`` (shipped to SSH hosts with
the racer folders); a racer reads a ``chaos.savers:`` reference as that module
(``chaos.targets.langgraph.custom_saver.saver_ref``), so this file is only the name the orchestrator's load
check and a team's own imports find. It imports nothing but that module (standard library only).
"""

from chaos.targets.langgraph.savers import lmdb, mysql, objectstorage, plainredis

__all__ = ["lmdb", "mysql", "objectstorage", "plainredis"]

"""The old public path of the Agent Server's graph helpers, kept for the teams that import it.

``chaos.targets.langgraph_server_app`` is the module the helpers moved to (``chaos.targets.MOVED``)
itself: the same object. ``effect`` and ``effect_once`` also have a public home in
``chaos.workloads``, beside the other team types.
"""

from chaos.targets import alias_moved

alias_moved(__name__)

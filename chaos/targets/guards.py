"""The old public path of LangGraph's guards, kept for the teams that import it.

``chaos.targets.guards`` is the module its guards moved to (``chaos.targets.MOVED``) itself: the
same object, so a ``Guard`` built through either name is one class. ``Guard`` also has a public home
in ``chaos.workloads``, beside the other team types.
"""

from chaos.targets import alias_moved

alias_moved(__name__)

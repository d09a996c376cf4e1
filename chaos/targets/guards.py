"""The old public path of LangGraph's guards, kept for the teams that import it.

``chaos.targets.guards`` is the module ``chaos.targets.langgraph.guards`` itself (the same object,
so a ``Guard`` built through either name is one class): guards moved into LangGraph's package with
the rest of that framework.
"""

import sys

from chaos.targets.langgraph import guards as _moved

sys.modules[__name__] = _moved

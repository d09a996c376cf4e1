"""The old public path of the Agent Server's graph helpers, kept for the teams that import it.

``chaos.targets.langgraph_server_app`` is the module ``chaos.targets.langgraph_server.app`` itself
(the same object): the helpers moved into the Agent Server's package with the rest of it.
"""

import sys

from chaos.targets.langgraph_server import app as _moved

sys.modules[__name__] = _moved

"""What an Agent Server chaos runs needs from the machine: a free loopback port and an environment
that keeps it offline.

Why a module of its own: both ways chaos runs the server, as a process of its own
(``langgraph_server_host``) and inside a racer during a sweep (``langgraph_server_inproc``), need
these, and neither may import the other (the host imports the deployed graphs, whose effects read
the in-process server's ledger). Racer side: standard library only.

What it promises: with ``OFFLINE_ENV`` set the server phones nowhere (CLI analytics, the PyPI
version check and LangSmith tracing are off); ``free_port()`` is a port on 127.0.0.1 nobody held
when it was asked.
"""

from __future__ import annotations

import socket

OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # langgraph_cli/analytics.py
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # langgraph_api/cli.py: _check_newer_version asks PyPI
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING_V2": "false",
}


def free_port() -> int:
    """A loopback port free when asked (the OS's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

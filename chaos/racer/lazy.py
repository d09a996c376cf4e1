"""Public names a package imports on first use (PEP 562), for ``chaos`` and ``chaos.workloads``.

Why: both packages offer names whose modules import heavy things (the orchestrator's packages, a
framework), and importing the package itself must stay standard-library only (a racer imports it
on a host without them). Each keeps a table, public name -> defining module, and its
``__getattr__`` asks here; the rule was written twice before. Racer side (shipped to SSH hosts
with ``chaos/__init__.py``): standard library only.
"""

from __future__ import annotations

import importlib
from typing import Any


def lazy_attribute(package: str, table: dict[str, str], namespace: dict[str, Any], name: str) -> Any:
    """The value of ``package.name``: imported from ``table[name]``'s module and kept in the
    package's ``namespace`` (its ``globals()``), so the next use does not come here.
    ``AttributeError`` for a name not in the table: a submodule (``from chaos import racer``) is
    then found by the import system."""
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value

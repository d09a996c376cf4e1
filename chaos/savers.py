"""Saver factories for third-party LangGraph checkpointers chaos has been run on (``target.saver``).

Why: ``scenarios/any_saver.yaml`` and the README's "Third-party savers" table need a factory per
saver, and a checkpointer author needs an example of one. Each factory takes a
``chaos.targets.custom_saver.SaverContext`` and returns the saver opened in ``ctx.folder`` (the
trial's folder, shared by its racers). The saver's package is imported only when the factory is
called, in the racers' Python (the scenario's ``target.requirements`` installs it there).
"""

from __future__ import annotations

from typing import Any


def lmdb(ctx: Any) -> Any:
    """``langgraph-checkpoint-lmdb``: an LMDB environment in the trial's folder."""
    import lmdb as lmdb_lib
    from langgraph_checkpoint_lmdb import LMDBSaver

    env = lmdb_lib.open(str(ctx.folder / "lmdb"), map_size=1 << 28, max_dbs=4)
    return LMDBSaver(env)


def objectstorage(ctx: Any) -> Any:
    """``langgraph-checkpoint-objectstorage``: one object per checkpoint and write, on the local
    filesystem through fsspec (``file://``), under the trial's folder."""
    from langgraph_checkpoint_objectstorage import ObjectStorageSaver

    return ObjectStorageSaver.from_conn_string(f"file://{ctx.folder / 'objects'}")

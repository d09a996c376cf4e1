"""A team's own store of the Agents SDK's saved run, as a team writes one (no chaos in it but the types).

``json_file_store``: every run's blob in one JSON file (``{key: blob}``) in the folder it is given,
read whole and written back whole on each save. ``not_a_store`` returns a dict (no ``save``/``load``),
``broken_store`` raises while opening: the bad inputs chaos refuses before any trial.
"""

from __future__ import annotations

import json
import os

from chaos.workloads.openai_agents import StoreContext


class JsonFileStore:
    def __init__(self, path: str):
        self.path = path

    def _all(self) -> dict[str, str]:
        try:
            with open(self.path) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def save(self, key: str, blob: str) -> None:
        data = self._all()
        data[key] = blob
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def load(self, key: str) -> str | None:
        return self._all().get(key)


def json_file_store(ctx: StoreContext) -> JsonFileStore:
    return JsonFileStore(str(ctx.folder / "runs.json"))


def not_a_store(ctx: StoreContext) -> dict:
    return {}


def broken_store(ctx: StoreContext) -> JsonFileStore:
    raise ConnectionError("the team's blob service at 10.0.0.9 refused the connection")

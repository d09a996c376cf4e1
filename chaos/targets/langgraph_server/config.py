"""A team's own ``langgraph.json``, served by chaos's Agent Server as the team deploys it.

Why: a team behind the Agent Server already has its graphs, their dependencies and their
environment in a ``langgraph.json``; chaos should serve that file, not ask for a factory in chaos's
style. A scenario names it and one graph id in it: ``workload: path/to/langgraph.json#agent``.

What it promises (stdlib only: the scenario loader, the orchestrator's server and the racer's
in-process server all read it):

* ``is_config_ref(workload)``: the workload is that form (a path ending in ``.json``, ``#``, an id).
* ``load(ref, base_dirs)`` finds the file (an absolute path, or relative to the first of
  ``base_dirs`` that has it: the working folder and the scenario's) and returns a ``TeamConfig``
  whose graph paths are resolved relative to the json file, as ``langgraph dev`` run from the
  file's folder resolves them (``./agent.py:graph`` becomes an absolute path; ``pkg.mod:graph``
  stays a module, found through ``paths``: the file's folder and its local ``dependencies``), and
  whose ``env`` is the file's dict or its ``.env`` file read (relative to the json file).
* Everything else is a ``ConfigError`` with one line naming the file: a file that does not exist or
  does not parse, a graph id it does not have (with the ids it has), a dependency that is not a
  local folder (chaos cannot install it into the server's venv: ``target.requirements`` can), and
  any key that changes how the server behaves which chaos cannot honour (``REFUSED``: auth, store,
  http, checkpointer, ...). Keys that only shape a Docker image (``BUILD_ONLY``) are ignored, as
  ``langgraph dev`` ignores them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

SEP = "#"
HONOURED = ("graphs", "dependencies", "env")
# keys of langgraph_cli's Config that only shape the deployed image: ``langgraph dev`` ignores them too
BUILD_ONLY = (
    "$schema",
    "python_version",
    "api_version",
    "base_image",
    "image_distro",
    "pip_config_file",
    "pip_installer",
    "dockerfile_lines",
    "keep_pkg_tools",
)
# keys that change the server's behaviour, which chaos's in-memory server does not honour
REFUSED = {
    "auth": "custom authentication (chaos's clients send no credentials)",
    "store": "store configuration (index, TTL)",
    "http": "custom HTTP app, routes or middleware",
    "checkpointer": "checkpointer configuration (chaos instruments the in-memory runtime's own saver)",
    "encryption": "encryption at rest",
    "webhooks": "webhooks",
    "ui": "generative UI components",
    "ui_config": "generative UI components",
    "node_version": "JavaScript graphs",
    "disable_persistence": "disabled persistence",
    "priority": "run priorities",
}


class ConfigError(ValueError):
    """A team's langgraph.json chaos cannot serve: one line naming the file and what to change."""


@dataclasses.dataclass(frozen=True)
class TeamConfig:
    file: str  # the json file, absolute
    graph_id: str  # the graph the clients address
    graphs: dict[str, str]  # every graph of the file, paths resolved
    paths: tuple[str, ...]  # import paths: the file's folder and its local dependencies
    env: dict[str, str]

    def server_config(self) -> dict[str, Any]:
        """The ``langgraph.json`` chaos's server is started with (paths absolute: it runs elsewhere)."""
        return {"graphs": dict(self.graphs), "dependencies": list(self.paths), "env": dict(self.env)}


def is_config_ref(workload: str) -> bool:
    path, sep, graph_id = workload.rpartition(SEP)
    return bool(sep) and path.endswith(".json") and bool(graph_id)


def _find(path: str, base_dirs: list[str]) -> Path:
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    for base in base_dirs:
        if base and (Path(base) / p).is_file():
            return (Path(base) / p).resolve()
    return (Path(base_dirs[0] if base_dirs else ".") / p).resolve()


def _graph_path(value: Any, folder: Path) -> str:
    if isinstance(value, dict):  # {"path": ..., "description": ...}
        value = value.get("path")
    if not isinstance(value, str) or ":" not in value:
        raise ValueError(f"a graph is 'path/to/file.py:attr' or 'package.module:attr', not {value!r}")
    where, _, attr = value.rpartition(":")
    if where.endswith(".py") or "/" in where:
        return f"{(folder / where).resolve()}:{attr}"
    return value


CONFIG_MAX = 1 << 20  # bytes of a langgraph.json or its .env read (a real one is a few KiB)


def read_capped(path: Path, what: str) -> str:
    """The text of the regular file ``path``, refused (``ConfigError``, one line) if it is a FIFO,
    a device or over ``CONFIG_MAX`` bytes, before it is read (never blocking on a FIFO)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{what} {path} is not a regular file (a FIFO, device or folder)")
        if st.st_size > CONFIG_MAX:
            raise ConfigError(f"{what} {path} is {st.st_size} bytes; at most {CONFIG_MAX} are read")
        os.set_blocking(fd, True)
        data = os.read(fd, CONFIG_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > CONFIG_MAX:
        raise ConfigError(f"{what} {path} is over {CONFIG_MAX} bytes")
    return data.decode("utf-8", "replace")


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines (``export`` and quotes allowed, ``#`` comments), as python-dotenv reads
    simple files; capped and regular only (``read_capped``)."""
    env: dict[str, str] = {}
    for raw in read_capped(path, "the env file").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def load(ref: str, base_dirs: list[str]) -> TeamConfig:
    """The team's config for workload ``ref`` (``path.json#graph_id``); ``ConfigError`` if it cannot be served."""
    path, _, graph_id = ref.rpartition(SEP)
    file = _find(path, base_dirs)
    if not file.exists():
        raise ConfigError(f"the langgraph.json {file} does not exist (looked in {', '.join(b for b in base_dirs if b)})")
    text = read_capped(file, "the langgraph.json")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"the langgraph.json {file} does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the langgraph.json {file} is not a JSON object")
    refused = [k for k in data if k in REFUSED]
    if refused:
        what = "; ".join(f"{k}: {REFUSED[k]}" for k in refused)
        raise ConfigError(f"the langgraph.json {file} sets what chaos's Agent Server cannot honour ({what}); serve a copy without it")
    unknown = [k for k in data if k not in HONOURED and k not in BUILD_ONLY]
    if unknown:
        raise ConfigError(f"the langgraph.json {file} has keys chaos does not know: {', '.join(unknown)}")
    graphs_in = data.get("graphs")
    if not isinstance(graphs_in, dict) or not graphs_in:
        raise ConfigError(f"the langgraph.json {file} names no graphs")
    if graph_id not in graphs_in:
        raise ConfigError(f"the langgraph.json {file} has no graph {graph_id!r}; it has: {', '.join(sorted(graphs_in))}")
    folder = file.parent
    try:
        graphs = {gid: _graph_path(v, folder) for gid, v in graphs_in.items()}
    except ValueError as exc:
        raise ConfigError(f"the langgraph.json {file}: {exc}") from None
    paths = [str(folder)]
    for dep in data.get("dependencies") or []:
        d = (folder / str(dep)).resolve()
        if not d.is_dir():
            raise ConfigError(
                f"the langgraph.json {file}: dependency {dep!r} is not a local folder; chaos does not install "
                "packages into the server: list it in target.requirements"
            )
        paths.append(str(d))
    env_in = data.get("env") or {}
    if isinstance(env_in, str):
        env_file = folder / env_in
        if not env_file.exists():
            raise ConfigError(f"the langgraph.json {file}: its env file {env_file} does not exist")
        env = read_dotenv(env_file)
    elif isinstance(env_in, dict):
        env = {str(k): str(v) for k, v in env_in.items()}
    else:
        raise ConfigError(f"the langgraph.json {file}: env is a dict or a .env path, not {type(env_in).__name__}")
    return TeamConfig(str(file), graph_id, graphs, tuple(dict.fromkeys(paths)), env)

"""Framework environments: one virtual environment per (framework, version), made on demand.

Racers run in the framework's environment; the orchestrator stays in its own. The racer side of
chaos needs only the standard library, so an environment holds just the framework's pinned
distributions, and racers find chaos itself through PYTHONPATH (``chaos_root()``).

``python_for(framework, version)`` returns the interpreter to run racers with: the current one
when the framework imports here and no version (or the installed one) is asked for; otherwise a cached venv under
``$CHAOS_ENV_DIR`` (default ``~/.cache/chaos/envs``), created once with pip from the target's
pins (a file lock makes concurrent creation safe) and reused by every later run.

A scenario's extra ``requirements`` are package specifiers only (``requirement_error``: a pip option
or a direct reference is refused when the scenario loads), spelled one way (``normalized``) in the
cache key. An environment records what pip resolved (``.chaos-ready``); one whose requirements are
not all pinned is reused only while pip would still resolve the same releases, else rebuilt.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

from chaos.racer.errors import EnvironmentProblem

PIP_TIMEOUT_S = 1800  # every wait is capped: a pip that hangs on the network must not hang the run


def env_root() -> Path:
    return Path(os.environ.get("CHAOS_ENV_DIR", "~/.cache/chaos/envs")).expanduser()


def chaos_root() -> str:
    """The folder that contains the ``chaos`` package (put on a racer's PYTHONPATH)."""
    return str(Path(__file__).resolve().parent.parent)


def racer_env(python: str, extra_paths: list[str] | None = None) -> dict:
    """The environment racers get: ours, plus chaos on the path when they run another Python, plus
    the folders where a user's workload module lives."""
    env = dict(os.environ)
    paths = list(extra_paths or [])
    if python != sys.executable:
        paths.insert(0, chaos_root())
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*paths, env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def requirement_names(requirements: list[str] | tuple[str, ...]) -> list[str]:
    """The distribution names of pip requirements (``pkg[extra]==1.0`` -> ``pkg``): what racers
    report the installed versions of."""
    import re

    return [m.group(0) for r in requirements if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r.strip()))]


def requirement_error(text: str) -> str | None:
    """Why ``text`` is not a package specifier (``name[extras] specifiers; markers``), or None.

    A requirement reaches pip as an argument, so anything else is refused: a pip option
    (``-r /etc/hostname``, ``--no-index``, ``--index-url``) would change what pip reads or where it
    fetches from, and a direct reference (``pkg @ file:///...``, a URL) installs what no index vouches for."""
    from packaging.requirements import InvalidRequirement, Requirement

    t = text.strip()
    if t.startswith("-"):
        return "a pip option, not a package; name packages only (e.g. langgraph-checkpoint-lmdb==0.3.1)"
    try:
        req = Requirement(t)
    except InvalidRequirement as exc:
        return f"not a package specifier ({str(exc).splitlines()[0][:120]}); e.g. langgraph-checkpoint-lmdb==0.3.1"
    if req.url:
        return "a direct reference (URL or path); name a package from the index with its version (name==X)"
    return None


def normalized(requirements: list[str] | tuple[str, ...]) -> list[str]:
    """Package specifiers in one spelling (``Foo_Bar >= 1.0`` -> ``foo-bar>=1.0``), so two spellings
    of one requirement share an environment; already-normal ones are unchanged (cached envs stay)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    out = []
    for r in requirements:
        q = Requirement(r.strip())
        extras = f"[{','.join(sorted(q.extras))}]" if q.extras else ""
        out.append(f"{canonicalize_name(q.name)}{extras}{q.specifier}" + (f"; {q.marker}" if q.marker else ""))
    return out


def pinned(requirement: str) -> bool:
    """The specifier names exactly one release (``==1.2.3`` or ``===``): pip has nothing to resolve."""
    from packaging.requirements import Requirement

    specs = list(Requirement(requirement).specifier)
    return len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version


def resolve(python: str, requirements: list[str]) -> dict[str, str] | None:
    """What pip would install for ``requirements`` now, as {name: version}, asked of the environment's
    own pip without installing (``--dry-run --report``); None if pip cannot say (offline, old pip)."""
    from packaging.utils import canonicalize_name

    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--dry-run", "--ignore-installed", "--report", "-"]
    try:
        proc = subprocess.run([*cmd, *requirements], capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        report = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    if not isinstance(report, dict):
        return None
    got: dict[str, str] = {}
    for item in report.get("install") or []:
        meta = item.get("metadata") or {} if isinstance(item, dict) else {}
        if isinstance(meta.get("name"), str) and isinstance(meta.get("version"), str):
            got[canonicalize_name(meta["name"])] = meta["version"]
    return got


def installed_versions(python: str) -> dict[str, str]:
    """{name: version} of what the environment holds (``pip list``), recorded when it is built."""
    from packaging.utils import canonicalize_name

    try:
        proc = subprocess.run(
            [python, "-m", "pip", "list", "--disable-pip-version-check", "--format=json"], capture_output=True, text=True, timeout=300
        )
        return {canonicalize_name(d["name"]): d["version"] for d in json.loads(proc.stdout)}
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return {}


def env_path(framework: str, version: str | None, requirements: list[str]) -> Path:
    digest = hashlib.sha256("\n".join(sorted(requirements)).encode()).hexdigest()[:10]
    return env_root() / f"{framework}-{version or 'default'}-{digest}"


def ensure_env(framework: str, version: str | None, requirements: list[str], *, track: list[str] | tuple[str, ...] = ()) -> str:
    """Create (once) and return the Python of the environment holding ``requirements``. Of
    ``track`` (a scenario's own requirements), the unpinned ones are followed: the environment is
    rebuilt when pip would now resolve another release of one of them."""
    path = env_path(framework, version, requirements)
    python = path / "bin" / "python"
    ready = path / ".chaos-ready"
    if ready.exists() and not _stale(python, ready, requirements, track):
        return str(python)
    env_root().mkdir(parents=True, exist_ok=True)
    with open(env_root() / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists() and not _stale(python, ready, requirements, track):
            return str(python)
        ready.unlink(missing_ok=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *requirements]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise EnvironmentProblem(
                f"could not build the {framework} {version or ''} environment at {path}: pip took over {PIP_TIMEOUT_S}s",
                hint=f"check that PyPI is reachable, then run again or build it with `bash .ci/envs.sh {framework}{':' + version if version else ''}`",
            ) from None
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise EnvironmentProblem(
                f"could not build the {framework} {version or ''} environment at {path}: pip failed: {' | '.join(tail)}",
                hint=f"check the version exists on PyPI and that PyPI is reachable; `bash .ci/envs.sh {framework}{':' + version if version else ''}` builds it",
            )
        # what pip resolved: an environment of unpinned requirements is reused only while pip would
        # resolve the same releases (``_stale``)
        ready.write_text(json.dumps({"requirements": requirements, "resolved": installed_versions(str(python))}, indent=1, sort_keys=True))
    return str(python)


def _stale(python: Path, ready: Path, requirements: list[str], track: list[str] | tuple[str, ...]) -> bool:
    """An environment whose tracked, unpinned requirements pip would now resolve to another release
    (a package updated upstream): it is rebuilt. The framework's own pins are chaos's: never followed."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    followed = {canonicalize_name(Requirement(r).name) for r in track if not pinned(r)}
    if not followed:
        return False
    try:
        recorded = json.loads(ready.read_text()).get("resolved") or {}
    except (OSError, ValueError, AttributeError):
        return True  # written by an older chaos: what it resolved is unknown
    now = resolve(str(python), requirements)  # the whole set: the pins constrain what the others resolve to
    if now is None:
        return False  # pip cannot say (offline): the environment built last is the best there is
    return any(recorded.get(name) != now.get(name) for name in followed if name in now)


def _importable(name: str) -> bool:
    """``name`` (a dotted module, e.g. ``google.adk``) imports in this interpreter; False for "" and
    for a module whose parent package is absent (``find_spec`` raises there instead of saying None)."""
    if not name:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _installed(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def missing_env(framework: str, version: str | None = None, extra: list[str] | tuple[str, ...] = ()) -> str | None:
    """Why racers of ``framework`` (at ``version``, with ``extra`` requirements) cannot start here
    without building an environment first (pip, minutes), or None when ``python_for`` would return at once."""
    from chaos.targets import get_target

    info = get_target(framework)
    if not extra and _importable(info.import_name):
        if version is None or _installed(info.distributions[0] if info.distributions else info.import_name) == version:
            return None
    path = env_path(framework, version, [*info.requirements(version), *normalized(extra)])
    if (path / ".chaos-ready").exists():
        return None
    return (
        f"the {framework} {version or info.default_version or ''} environment is not built ({path}): "
        f"run `bash .ci/envs.sh`, or one `chaos run` of a {framework} scenario, or pass --chaos-build-envs"
    ).replace("  ", " ")


def python_for(framework: str, version: str | None = None, extra: list[str] | tuple[str, ...] = ()) -> str:
    """The interpreter racers of ``framework`` (at ``version``) run with. ``extra`` requirements
    (a scenario's ``target.requirements``, e.g. a third-party saver) always mean a venv of the
    framework's pins plus them, so the main interpreter is never changed."""
    from chaos.targets import get_target

    info = get_target(framework)
    if not extra and _importable(info.import_name):
        if version is None or _installed(info.distributions[0] if info.distributions else info.import_name) == version:
            return sys.executable  # the asked-for release is the one installed here
    return ensure_env(framework, version, [*info.requirements(version), *normalized(extra)], track=normalized(extra))

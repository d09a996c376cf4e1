"""No import loop in chaos (issue 23): two modules that import each other, directly or round a ring,
cannot be read, tested or moved one at a time, and their import order decides what works.

The graph is built from the source with ``ast``, so it holds every import a reader follows: at the
top of a module, inside a function (an import deferred to dodge a loop is still the loop), and under
``if TYPE_CHECKING:`` (a loop mypy follows is one a reader follows too). ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg``. A package's ``__init__`` is not
implied by importing one of its modules, and a bare ``import chaos`` in a module of chaos (to read
``chaos.__file__`` or ``__version__``) is no edge either: a package is initialised before any of its
modules runs, so that import never runs anything; ``from chaos import run`` is an edge, to the module
that defines ``run``. A package's ``__init__`` naming its own modules (a lazy façade of public names,
typed under ``TYPE_CHECKING``; a factory picking one, ``chaos.launchers.make_launcher``) is no edge:
it is the package's table of contents, run before any of those modules, which import the package's
core from it; a ring through modules, or through another package, is what the test is about.
The test fails on every strongly connected group of modules, printing one ring through each.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAOS = ROOT / "chaos"

# Loops another branch removes; each entry names it, so the merge can drop the entry with the loop.
ALLOWED: dict[frozenset[str], str] = {}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(CHAOS.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The chaos modules ``name`` imports, wherever in the file the import statement is."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                if name.startswith(f"{target}.") and alias.asname is None:
                    continue  # an ancestor package: initialised before this module runs
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not base.startswith("chaos"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    out.add(sub)
                    continue
                target = base
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target:
                    out.add(target)
    out.discard(name)
    if is_package:  # its own modules: the package's table of contents (see the docstring)
        out = {m for m in out if not m.startswith(f"{name}.")}
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def strongly_connected(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the groups of two or more modules that reach each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def ring(g: dict[str, set[str]], group: list[str]) -> list[str]:
    """One ring through the group's first module, found breadth-first inside the group."""
    members, start = set(group), group[0]
    paths = {w: [start, w] for w in sorted(g[start] & members)}
    frontier = list(paths)
    while start not in paths:
        nxt = []
        for v in frontier:
            for w in sorted(g[v] & members):
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return paths[start]


def test_the_graph_sees_every_kind_of_import():
    g = graph()
    assert "chaos.racer.errors" in g["chaos.targets"]  # inside get_target, a function
    assert "chaos.targets" in g["chaos.running.blame"]  # at the top
    assert len(g) > 100


def test_no_import_loop():
    g = graph()
    loops = [group for group in strongly_connected(g) if frozenset(group) not in ALLOWED]
    assert not loops, "import loops:\n" + "\n".join("  " + " -> ".join(ring(g, group)) for group in loops)


def test_every_allowed_loop_is_still_there():
    """An allowed loop that is gone must leave the list (so the list never hides a new one)."""
    groups = {frozenset(group) for group in strongly_connected(graph())}
    assert set(ALLOWED) <= groups, [sorted(k) for k in set(ALLOWED) - groups]

"""The package layers hold: imports only go down, and no module imports itself back.

Every import of every module under ``agentsproof/`` counts: at module level, inside
functions (which keep start-up lean) and under ``TYPE_CHECKING``, plus whole-string import
paths (``"agentsproof.llm.local:LocalClient"``) such as the registries' tables, since those
are imports too, only later. The layer table below is the one place the architecture is
written down; CONTRIBUTING.md explains it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "agentsproof"

# Bottom to top. A module may import its own package and the packages of lower layers;
# packages that share a layer do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),  # errors, env settings, safe reading of files, process groups
    ("model",),  # the nouns: eval-file models, grader configs, results, items
    ("llm", "stats"),  # providers; pure statistics
    ("isolation",),  # where an agent trial runs, kept apart: workspaces, bubblewrap, containers
    ("targets", "grading", "report"),  # what a trial runs; graders; report writers
    ("executor",),  # the dual-arm runner and one run's session
    ("formats",),  # input formats -> items
    ("interop",),  # convert, other tools' formats, compare inputs
    ("commands", "generator", "server", "plugin"),  # what each command does; the plugins' stable API
    ("cli",),  # click only
)
# The SDK is a leaf: it imports nothing from the harness. Only the CLI and the package's
# lazy façade (``from agentsproof import AgentsProof``) reach into it.
LEAF = "sdk"
LEAF_USERS = {"cli", "<root>"}
# The top-level package itself: a lazy façade (version + the SDK's names); ``__main__``
# runs the CLI. Nothing inside a layer imports either.
ROOT_MAY_IMPORT = {"core", LEAF}
MAIN_MAY_IMPORT = {"cli"}

LAYER_OF = {pkg: level for level, pkgs in enumerate(LAYERS) for pkg in pkgs}
IMPORT_STRING = re.compile(r"^agentsproof(?:\.\w+)+(?::\w+)?$")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # file:line


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def all_modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        name, is_pkg = module_name(path)
        out[name] = (path, is_pkg)
    return out


def _known(name: str, modules: dict) -> str | None:
    """The module an import names (``a.b.c`` where ``c`` is a function → ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, is_pkg: bool, modules: dict) -> list[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(ROOT.parent)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                full = f"{prefix}.{alias.name}"
                found.append((full if full in modules else prefix, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and IMPORT_STRING.match(node.value):
            found.append((node.value.split(":")[0], node.lineno))
    edges = []
    for target, line in found:
        if target != "agentsproof" and not target.startswith("agentsproof."):
            continue
        known = _known(target, modules)
        if known and known != name:
            edges.append(Edge(name, known, f"{rel}:{line}"))
    return edges


def all_edges() -> list[Edge]:
    modules = all_modules()
    edges: list[Edge] = []
    for name, (path, is_pkg) in modules.items():
        edges += imports_of(name, path, is_pkg, modules)
    return edges


def package_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "<root>"
    if parts[1] == "__main__":
        return "<main>"
    return parts[1]


def layer_problem(edge: Edge) -> str | None:
    """Why this import breaks the layer table, or None."""
    src, dst = package_of(edge.source), package_of(edge.target)
    if src == dst and src not in ("<root>", "<main>"):
        return None
    if dst == "<root>":
        return "imports the top-level package (import the module that defines the name)"
    if src == "<root>":
        return None if dst in ROOT_MAY_IMPORT else f"the top-level façade may import only {sorted(ROOT_MAY_IMPORT)}"
    if src == "<main>":
        return None if dst in MAIN_MAY_IMPORT else "__main__ may import only the CLI"
    if src == LEAF:
        return "the SDK is a leaf: it imports nothing from the harness"
    if dst == LEAF:
        return None if src in LEAF_USERS else f"only {sorted(LEAF_USERS - {'<root>'})} may import the SDK"
    if src not in LAYER_OF:
        return f"package {src!r} is not in the layer table of tests/test_layers.py"
    if dst not in LAYER_OF:
        return f"package {dst!r} is not in the layer table of tests/test_layers.py"
    if LAYER_OF[dst] == LAYER_OF[src]:
        return f"{src!r} and {dst!r} share a layer and must not import each other"
    if LAYER_OF[dst] > LAYER_OF[src]:
        return f"{src!r} (layer {LAYER_OF[src]}) imports upward into {dst!r} (layer {LAYER_OF[dst]})"
    return None


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_package_is_in_the_layer_table():
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    unknown = packages - set(LAYER_OF) - {LEAF}
    assert not unknown, f"packages missing from LAYERS in tests/test_layers.py: {sorted(unknown)}"
    # plugin.py: the stable API plugins import (re-exports only), a layer of its own name
    loose = sorted(p.name for p in ROOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "plugin.py"))
    assert not loose, f"modules at the top of agentsproof/ (put each in its layer's package): {loose}"


def test_imports_only_go_down():
    problems = [f"{e.where}: {e.source} imports {e.target}: {why}" for e in all_edges() if (why := layer_problem(e))]
    assert not problems, "imports against the layers:\n" + "\n".join(problems)


CLI_ONLY = ("click",)
"""Third-party packages only the command layers (commands, generator, server, cli) may use:
below them nothing prints to a terminal or parses flags."""


def test_click_only_in_the_command_layers():
    lowest = LAYER_OF["commands"]
    problems = []
    for name, (path, _) in all_modules().items():
        pkg = package_of(name)
        if pkg in LAYER_OF and LAYER_OF[pkg] >= lowest:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for mod in mods:
                if mod.split(".")[0] in CLI_ONLY:
                    problems.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {name} imports {mod}")
    assert not problems, "click below the command layers:\n" + "\n".join(problems)


def test_no_import_cycles():
    edges = all_edges()
    found = cycles(edges)
    lines = []
    for comp in found:
        members = set(comp)
        inside = [f"    {e.where}: {e.source} -> {e.target}" for e in edges if e.source in members and e.target in members]
        lines.append(f"cycle of {len(comp)} modules: {', '.join(comp)}\n" + "\n".join(inside))
    assert not found, "import cycles (function-level and TYPE_CHECKING imports count):\n" + "\n".join(lines)


# The checker itself: a test that cannot fail is a defect.


def test_checker_sees_function_level_type_checking_and_string_imports(tmp_path):
    src = tmp_path / "agentsproof" / "stats" / "x.py"
    src.parent.mkdir(parents=True)
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentsproof.executor.runner import EvalItem\n"
        "def f():\n    from ..report import render\n"
        "TABLE = {'a': 'agentsproof.cli.app:main'}\n"
    )
    modules = {"agentsproof.stats.x": None, "agentsproof.executor.runner": None, "agentsproof.report.render": None, "agentsproof.cli.app": None}
    global ROOT
    saved, ROOT = ROOT, tmp_path / "agentsproof"
    try:
        edges = imports_of("agentsproof.stats.x", src, False, modules)
    finally:
        ROOT = saved
    assert {e.target for e in edges} == {"agentsproof.executor.runner", "agentsproof.report.render", "agentsproof.cli.app"}
    assert all(layer_problem(e) for e in edges)


def test_checker_rules():
    def why(a: str, b: str) -> str | None:
        return layer_problem(Edge(a, b, "x.py:1"))

    assert why("agentsproof.executor.runner", "agentsproof.grading.grade") is None
    assert "upward" in why("agentsproof.stats.adaptive", "agentsproof.executor.runner")
    assert "share a layer" in why("agentsproof.report.render", "agentsproof.targets.workspace")
    assert "leaf" in why("agentsproof.sdk.transport", "agentsproof.core.version")
    assert why("agentsproof.cli.sdk", "agentsproof.sdk.spool") is None
    assert "SDK" in why("agentsproof.commands.run", "agentsproof.sdk.client")
    assert "top-level" in why("agentsproof.report.render", "agentsproof")
    assert cycles([Edge("a", "b", ""), Edge("b", "c", ""), Edge("c", "a", ""), Edge("c", "d", "")]) == [["a", "b", "c"]]
    assert cycles([Edge("a", "b", ""), Edge("b", "c", "")]) == []


def test_package_inits_import_nothing_at_load_time():
    """A package's ``__init__`` holds a docstring and at most lazy re-exports (a module-level
    ``__getattr__``): importing one module of a package never loads its siblings."""
    allowed = {"__future__", "typing", "importlib"}  # importlib: the lazy loader itself
    offenders = []
    for init in sorted(ROOT.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and (node.module or "") not in allowed):
                offenders.append(f"{init.relative_to(ROOT.parent)}:{node.lineno}")
    assert not offenders, "imports at load time in package __init__ files: " + ", ".join(offenders)


def test_modules_stay_short():
    """CONTRIBUTING's rule: a module past 500 lines is split by concept."""
    long = [f"{p.relative_to(ROOT.parent)} ({n} lines)" for p in sorted(ROOT.rglob("*.py")) if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert not long, "modules over 500 lines: " + ", ".join(long)

"""The import picture of docs/architecture.md: floors, arrows down only, no cycle, and the
front door's ``__all__`` the same as the names the docs show."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dpbandits

ROOT = Path(__file__).resolve().parent.parent

#: Module prefix -> floor (the longest matching prefix wins); docs/architecture.md draws them.
FLOORS = {
    "dpbandits.core": 0,
    "dpbandits.selectors": 1,
    "dpbandits.continual": 1,
    "dpbandits.quantiles": 1,
    "dpbandits.accounting": 1,
    "dpbandits.theory": 1,
    "agents": 2,
    "envs": 2,
    "dpbandits.scenarios": 2,
    "dpbandits.topk": 2,
    "dpbandits.recommendation": 2,
    "dpbandits.experiments": 3,
    "dpbandits.audit": 4,
    "dpbandits.testing": 4,
    "dpbandits.cli": 5,
    "dpbandits.course": 5,
    "dpbandits.__main__": 5,
}
PACKAGES = ("dpbandits", "agents", "envs")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "exercises" in path.parts or "pages" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def floor(module: str) -> int | None:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len,
               default=None)  # fmt: skip
    return None if best is None else FLOORS[best]


def _imports(name: str, path: Path, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(module-level imports, function-local imports) of project modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    top: set[str] = set()
    local: set[str] = set()

    def resolve(node: ast.ImportFrom) -> list[str]:
        base = node.module or ""
        if node.level:
            parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
            base = ".".join([*parts, base] if base else parts)
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            targets: list[str] = []
            if isinstance(child, ast.ImportFrom):
                targets = resolve(child)
            elif isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            for t in targets:
                if t.split(".")[0] in PACKAGES and t != "dpbandits":
                    (local if inside else top).add(t)
            visit(child, inside)

    visit(tree, False)
    return top, local


@pytest.fixture(scope="module")
def graph() -> dict[str, tuple[set[str], set[str]]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_every_module_has_a_floor(graph):
    assert [m for m in graph if m != "dpbandits" and floor(m) is None] == []


def test_arrows_point_down(graph):
    """A module imports (at module level or in a function) only its floor or the floors
    below; the front door ``dpbandits/__init__`` loads its names lazily."""
    up = [
        f"{a} (floor {floor(a)}) -> {b} (floor {floor(b)})"
        for a, (top, local) in graph.items()
        if a != "dpbandits"
        for b in top | local
        if floor(b) is not None and floor(a) is not None and floor(b) > floor(a)  # type: ignore[operator]
    ]
    assert up == []


def _reached(graph: dict[str, tuple[set[str], set[str]]], start: list[str]) -> set[str]:
    """Every project module that ``start`` imports, directly or through others (module-level
    and function-local imports alike)."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        m = todo.pop()
        if m in seen or m not in graph:
            continue
        seen.add(m)
        todo.extend(graph[m][0] | graph[m][1])
    return seen


def test_the_kits_import_nothing_from_the_engine_or_the_agent_audit(graph):
    """The conformance kits (``dpbandits.testing``) stand beside the audits (``dpbandits.audit``)
    and use only the selector audit: nothing they import, directly or through other modules,
    belongs to the experiment engine or the agent audit (the deprecated old names load those
    only on demand, through ``importlib``)."""
    kits = [m for m in graph if m == "dpbandits.testing" or m.startswith("dpbandits.testing.")]
    reached = _reached(graph, kits)
    engine = sorted(m for m in reached if m.startswith("dpbandits.experiments")
                    or m in ("dpbandits.audit.agent", "dpbandits.audit.reward_tables"))  # fmt: skip
    assert kits and engine == []


def test_importing_the_kits_loads_no_engine():
    """The same at run time, in a fresh interpreter: ``check_selector`` and ``check_agent``
    load no module of ``dpbandits.experiments``."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom dpbandits.testing import check_agent, check_selector\n"
        "import dpbandits.audit\n"
        "print(sorted(m for m in sys.modules if m.startswith('dpbandits.experiments')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_import_cycle(graph):
    """Module-level imports (type-only ones included) form no cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v][0]:
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    assert cycles == []


def test_front_door_matches_the_docs():
    """``dpbandits.__all__`` is exactly the list of names the module docstring (the front door
    the README and docs show) presents, and every name resolves (scikit-learn's
    ``test_import_all_consistency``)."""
    doc_names = set(re.findall(r"^- :\w+:`(\w+)`", dpbandits.__doc__ or "", flags=re.M))
    assert doc_names == set(dpbandits.__all__) - {"__version__"}
    for name in dpbandits.__all__:
        assert getattr(dpbandits, name) is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    used = set(re.findall(r"\bdpbandits\.(\w+)\(", readme)) | set(
        re.findall(r"from dpbandits import ([\w, ]+)", readme)
    )
    names = {n.strip() for u in used for n in u.split(",")}
    assert names <= set(dpbandits.__all__) | {"selectors", "experiments", "testing"}


def test_architecture_lists_every_module():
    """docs/architecture.md's "Every module" section is the code's (docs/_tools/module_map.py)."""
    import subprocess
    import sys

    tool = ROOT / "docs" / "_tools" / "module_map.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], cwd=ROOT)
    assert done.returncode == 0, "run: python docs/_tools/module_map.py"

"""The API reference pages, generated from the packages' ``__all__`` (one page per room).

Every public module of ``dpbandits``, ``agents`` and ``envs`` (no name part starting with ``_``)
is found by walking the packages, so a new module appears in the reference without an edit
here. Its public names are its ``__all__``; a module without one (a CLI subcommand, a helper
module of the environments) is shown by its docstring alone.

Each object is documented in full once, at its *home*: the module that defines it when that
module exports it, otherwise the first module (packages before their submodules) that exports
it. A module that re-exports names from elsewhere (``dpbandits.selectors``, the front door
``dpbandits``) lists them in a table that links to their home. The pages group the modules by
room: ``dpbandits.<room>`` (``dpbandits`` itself is the front door), ``agents`` and ``envs``.

``tests/test_api_reference.py`` checks the pages against ``__all__``; ``hooks.py`` adds them to
the site and to its navigation.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGES = ("dpbandits", "agents", "envs")

#: Rooms in the order of the navigation (a new room goes after these, alphabetically).
ROOM_ORDER = (
    "dpbandits", "agents", "envs", "selectors", "continual", "quantiles", "accounting",
    "experiments", "scenarios", "topk", "recommendation", "testing", "course", "cli", "core",
)  # fmt: skip

#: What each room holds, for the reference's index page (a new room shows its docstring).
ROOM_TITLES = {
    "dpbandits": "the front door: the names most users need",
    "agents": "batched bandit agents (a sibling package)",
    "envs": "Gymnasium bandit environments (a sibling package)",
    "selectors": "the DP selectors of the paper (§III-§VII)",
    "continual": "private running sums by continual release (App. H)",
    "quantiles": "DP quantiles and windowed sensitivities (App. H)",
    "accounting": "the privacy ledger of a private agent",
    "experiments": "the regret engine, results, configs, sweeps, plots",
    "scenarios": "the synthetic selection scenarios and two-candidate maps (§V-§VII)",
    "topk": "private top-k and DP feature selection (companion paper 002)",
    "recommendation": "private recommendation and multi-selection (companion papers 001, 004)",
    "testing": "the conformance kit and the privacy audit for selector authors",
    "course": "the RL-course checker",
    "cli": "the dpbandits command line",
    "core": "the floor: input checks, compiled-code helpers, samplers, files",
}


@dataclass
class ModuleInfo:
    """A public module: its exported names, those documented here, those re-exported."""

    name: str
    module: types.ModuleType
    exports: list[str]
    members: list[str] = field(default_factory=list)  # documented in full here
    reexports: dict[str, str] = field(default_factory=dict)  # name -> path of its home
    submodules: list[str] = field(default_factory=list)  # exported names that are modules

    @property
    def room(self) -> str:
        return room_of(self.name)


def room_of(module: str) -> str:
    """``dpbandits.selectors.gem`` -> ``selectors``; ``dpbandits`` -> ``dpbandits``;
    ``agents.ucb`` -> ``agents``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "dpbandits" and len(parts) > 1 else parts[0]


def public_module_names() -> list[str]:
    """Every public module of the three packages, packages before their submodules."""
    names = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names.append(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names, key=lambda n: n.split("."))


@functools.cache
def _defined_names(module_name: str) -> frozenset[str]:
    """Names that the module's source binds at top level (def, class, assignment), not imports."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module) if getattr(module, "__file__", None) else ""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(
                node.target, ast.Name
            ):
                names.add(node.target.id)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(source).body)
    return frozenset(names)


def exported_names(module: types.ModuleType) -> list[str]:
    """The public names of ``module``: its ``__all__`` (none if it has no ``__all__``)."""
    return list(getattr(module, "__all__", ()))


@functools.cache
def modules() -> dict[str, ModuleInfo]:
    """Every public module with its exported, documented and re-exported names."""
    infos = {}
    for name in public_module_names():
        module = importlib.import_module(name)
        infos[name] = ModuleInfo(name, module, exported_names(module))
    homes: dict[int, str] = {}  # id(object) -> path of the module that documents it
    # First the modules that define what they export, then the re-exports in walk order.
    for info in infos.values():
        defined = _defined_names(info.name)
        for n in info.exports:
            obj = getattr(info.module, n)
            if isinstance(obj, types.ModuleType):
                info.submodules.append(n)
            elif n in defined:
                info.members.append(n)
                homes.setdefault(id(obj), info.name)
    for info in infos.values():
        for n in info.exports:
            obj = getattr(info.module, n)
            if isinstance(obj, types.ModuleType) or n in info.members:
                continue
            home = homes.get(id(obj))
            if home is None:  # defined in a module that does not export it: documented here
                homes[id(obj)] = info.name
                info.members.append(n)
            else:
                info.reexports[n] = f"{home}.{_name_in(infos[home], obj)}"
    return infos


def _name_in(info: ModuleInfo, obj: Any) -> str:
    return next(n for n in info.members if getattr(info.module, n) is obj)


def rooms() -> dict[str, list[ModuleInfo]]:
    """The modules of each room, rooms in navigation order."""
    grouped: dict[str, list[ModuleInfo]] = {}
    for info in modules().values():
        grouped.setdefault(info.room, []).append(info)
    known = [r for r in ROOM_ORDER if r in grouped]
    return {r: grouped[r] for r in known + sorted(set(grouped) - set(known))}


def page_path(room: str) -> str:
    """The page of a room, relative to the docs folder."""
    return f"reference/{room}.md"


def _room_heading(room: str, infos: list[ModuleInfo]) -> str:
    return infos[0].name if room in PACKAGES else f"dpbandits.{room}"


def made_at_runtime(info: ModuleInfo) -> bool:
    """Whether a member documented in full here is a class with no class statement in the
    source (made by a factory, e.g. ``types.new_class``): griffe reads source files, so the
    docstrings extension (docstrings.py) adds such classes from the imported module."""
    for name in info.members:
        obj = getattr(info.module, name, None)
        if isinstance(obj, type):
            try:
                inspect.getsource(obj)
            except (OSError, TypeError):
                return True
    return False


def room_page(room: str, infos: list[ModuleInfo]) -> str:
    """The markdown of a room's page: one ``:::`` directive per module, members listed."""
    out = [f"# {_room_heading(room, infos)}", ""]
    title = ROOM_TITLES.get(room)
    if title:
        out += [f"*{title[0].upper()}{title[1:]}.* Generated from the docstrings; every name in a "
                "module's `__all__` is here, in full where it is defined.", ""]  # fmt: skip
    for info in infos:
        out += [f"::: {info.name}", "    options:"]
        if info.members:
            out.append("      members:")
            out += [f"        - {n}" for n in info.members]
        else:
            out.append("      members: false")
        out.append("")
        if info.reexports or info.submodules:
            out += [f"Also importable from `{info.name}`:", "", "| name | documented at |",
                    "| --- | --- |"]  # fmt: skip
            for n in info.exports:
                if n in info.reexports:
                    target = info.reexports[n]
                    out.append(f"| `{n}` | [`{target}`][{target}] |")
                elif n in info.submodules:
                    sub = getattr(info.module, n).__name__
                    out.append(f"| `{n}` | the module [`{sub}`][{sub}] |")
            out.append("")
    return "\n".join(out)


def index_page() -> str:
    """The reference's first page: the rooms and what each holds."""
    out = ["# API reference", "",
           "Every public name of `dpbandits`, `agents` and `envs`, generated from the "
           "docstrings: signatures, types and the paper's sections, equations and algorithms "
           "that each docstring cites. One page per room of the code "
           "([architecture](../architecture.md) draws the rooms and the arrows between them).",
           "", "| room | what it holds | modules |", "| --- | --- | --- |"]  # fmt: skip
    for room, infos in rooms().items():
        first_line = (infos[0].module.__doc__ or "").strip().splitlines()[:1]
        what = ROOM_TITLES.get(room) or (first_line[0] if first_line else "")
        heading = _room_heading(room, infos)
        out.append(f"| [`{heading}`]({room}.md) | {what} | {len(infos)} |")
    return "\n".join(out) + "\n"


def pages() -> dict[str, str]:
    """Every page of the reference: path (relative to the docs folder) -> markdown."""
    result = {"reference/index.md": index_page()}
    for room, infos in rooms().items():
        result[page_path(room)] = room_page(room, infos)
    return result


def nav() -> list[dict[str, str] | str]:
    """The reference's navigation: the index, then one entry per room."""
    entries: list[dict[str, str] | str] = ["reference/index.md"]
    for room, infos in rooms().items():
        entries.append({_room_heading(room, infos): page_path(room)})
    return entries


def documented_paths() -> set[str]:
    """The dotted paths documented in full: every module and every member of one."""
    paths = set()
    for info in modules().values():
        paths.add(info.name)
        paths.update(f"{info.name}.{n}" for n in info.members)
    return paths


def repository_root() -> Path:
    return Path(__file__).resolve().parents[2]

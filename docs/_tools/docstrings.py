"""A griffe extension: the docstrings as the site shows them, with links the build checks.

Two rewrites, made on every docstring once the object tree is loaded:

- **Sphinx roles** (``:func:`run```, ``:class:`~x.y.Results```, ``:mod:`.local```) are resolved
  the way Python resolves the name where the docstring is (the enclosing classes, the module's
  globals, the builtins, then an absolute dotted path), on the imported objects, and become an
  autorefs link ``[text][path]`` when the reference documents the object (``path`` is where,
  ``reference.py``), or inline code when it exists but is not documented (a private helper,
  numpy). A name that resolves to nothing is a warning, which fails ``mkdocs build --strict``:
  a docstring naming a function that was renamed or removed is caught. A mention of a page as a
  repository path (``docs/quantiles.md``) becomes a link to the page, checked the same way.
- **Prose after a parameter list.** In the numpy style, a ``Parameters`` section runs until the
  next section title, so a paragraph written after the parameters would be read as more
  parameters. A paragraph that starts at the section's indentation and is not a parameter line
  (``name``, ``name : type``, ``name:``) starts a ``Notes`` section instead.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import inspect
import logging
import re
import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference  # noqa: E402

log = logging.getLogger("mkdocs.plugins.dpbandits.crossrefs")

_ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")
_DOCS_PAGE = re.compile(r"(``)?\bdocs/([A-Za-z0-9_-]+)\.md(#[A-Za-z0-9_-]+)?(``)?")
_MISSING = object()


@functools.cache
def _homes() -> dict[int, str]:
    """id(object) -> the path where the reference documents it in full."""
    homes = {}
    for info in reference.modules().values():
        homes[id(info.module)] = info.name
        for name in info.members:
            homes.setdefault(id(getattr(info.module, name)), f"{info.name}.{name}")
    return homes


@functools.cache
def _documented() -> frozenset[str]:
    return frozenset(reference.documented_paths())


def _import(path: str) -> Any:
    """The object at absolute dotted ``path`` (longest importable module, then attributes)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _scopes(obj: griffe.Object) -> list[tuple[Any, griffe.Object]]:
    """Where a name in ``obj``'s docstring is looked up, innermost first: each enclosing class,
    then the module, as (runtime object, griffe object) pairs."""
    chain: list[griffe.Object] = []
    current: griffe.Object | None = obj
    while current is not None:
        if current.is_class or current.is_module:
            chain.append(current)
        current = current.parent
    scopes = []
    for g in chain:
        runtime = _import(g.path)
        if runtime is not _MISSING:
            scopes.append((runtime, g))
    return scopes


def _lookup(scope: Any, g: griffe.Object | None, name: str) -> Any:
    """``name`` in one scope: a module's globals, or a class's attributes (with its bases'),
    including instance attributes that only the source shows (``self.x = ...``)."""
    if inspect.ismodule(scope):
        return vars(scope).get(name, _MISSING)
    found = getattr(scope, name, _MISSING)
    if found is _MISSING:
        try:
            if g is not None and name in g.all_members:
                return _ATTRIBUTE
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            pass
        assigned = re.compile(rf"\bself\.{re.escape(name)}\s*(:[^=]*)?=")
        for cls in inspect.getmro(scope):
            with contextlib.suppress(OSError, TypeError):
                if assigned.search(inspect.getsource(cls)):
                    return _SOURCE_ATTRIBUTE
    return found


_ATTRIBUTE = object()  # an instance attribute that griffe sees (and the reference shows)
_SOURCE_ATTRIBUTE = object()  # one set outside __init__: it exists, the reference omits it


def _griffe_class(obj: griffe.Object, cls: type) -> griffe.Object | None:
    """The griffe object of runtime class ``cls`` (to find its instance attributes)."""
    try:
        found = obj.modules_collection[f"{cls.__module__}.{cls.__qualname__}"]
    except (KeyError, ValueError, griffe.AliasResolutionError):
        return None
    return found if isinstance(found, griffe.Object) else None


def _resolve(target: str, obj: griffe.Object) -> tuple[Any, Any, str]:
    """(the object ``target`` names, the module or class that holds it, its last name)."""
    parts = target.lstrip(".").split(".")
    if target.startswith("."):  # relative to the docstring's package (``:mod:`.local```)
        module = obj.module
        is_init = module.filepath is not None and str(module.filepath).endswith("__init__.py")
        package = module.path if is_init else module.path.rsplit(".", 1)[0]
        target = f"{package}.{target.lstrip('.')}"
    else:
        for scope, g in _scopes(obj):
            found = _lookup(scope, g, parts[0])
            if found is _MISSING:
                continue
            holder = scope
            for part in parts[1:]:
                if found is _ATTRIBUTE or found is _SOURCE_ATTRIBUTE:
                    return _MISSING, None, parts[-1]
                holder = found
                g_holder = _griffe_class(obj, holder) if inspect.isclass(holder) else None
                found = (_lookup(holder, g_holder, part) if g_holder is not None
                         else getattr(holder, part, _MISSING))  # fmt: skip
                if found is _MISSING:
                    return _MISSING, None, parts[-1]
            return found, holder, parts[-1]
        if len(parts) == 1 and hasattr(builtins, parts[0]):
            return getattr(builtins, parts[0]), builtins, parts[0]
    found = _import(target)
    holder = _import(target.rsplit(".", 1)[0]) if "." in target else None
    return found, holder, parts[-1]


def _has_identity(x: Any) -> bool:
    return inspect.ismodule(x) or inspect.isclass(x) or hasattr(x, "__qualname__")


def _documented_path(found: Any, holder: Any, name: str) -> str | None:
    """Where the reference documents ``found`` (held by ``holder`` as ``name``), if it does."""
    homes = _homes()
    if _has_identity(found) and id(found) in homes:
        return homes[id(found)]
    if name.startswith("_") and not name.endswith("__"):
        return None  # private: mkdocstrings does not render it
    if inspect.isclass(holder):  # a method, property or attribute: documented with its class
        for cls in inspect.getmro(holder):
            if id(cls) in homes and (name in vars(cls) or found is _ATTRIBUTE):
                return f"{homes[id(cls)]}.{name}"
        return None
    if inspect.ismodule(holder) and id(holder) in homes:
        path = f"{homes[id(holder)]}.{name}"
        return path if path in _documented() else None
    return None


_SECTION = re.compile(
    r"^(Parameters|Other Parameters|Returns|Yields|Receives|Raises|Warns|Attributes)$"
)
_PARAMETER_LINE = re.compile(r"^\**\w+(\s*,\s*\**\w+)*\s*(:.*)?$")


def notes_after_parameters(text: str) -> str:
    """``text`` with a ``Notes`` title before a paragraph that follows a parameter list."""
    lines = text.split("\n")
    out: list[str] = []
    in_list = False
    for i, line in enumerate(lines):
        underline = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        if underline and not line.startswith(" "):
            in_list = bool(_SECTION.match(line.strip()))
        elif (in_list and line and not line.startswith(" ") and i > 0 and not lines[i - 1]
              and not re.fullmatch(r"-{3,}", line)
              and not _PARAMETER_LINE.match(line)):  # fmt: skip
            out += ["Notes", "-----"]
            in_list = False
        out.append(line)
    return "\n".join(out)


def _is_rendered(obj: griffe.Object) -> bool:
    """Whether the reference can show ``obj`` (no private part in its path)."""
    return not any(p.startswith("_") and not p.endswith("__") for p in obj.path.split("."))


def rewrite(text: str, obj: griffe.Object) -> str:
    """``text`` (a docstring of ``obj``) with its roles and page paths made links or code."""

    def role(match: re.Match[str]) -> str:
        kind, short, target = match.groups()
        target = re.sub(r"\s+", "", target)  # a role broken across two lines
        display = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        found, holder, name = _resolve(target, obj)
        if found is _MISSING:
            if _is_rendered(obj):
                log.warning(f"{obj.path}: the docstring's :{kind}:`{target}` names nothing")
            return f"`{display}`"
        path = _documented_path(found, holder, name)
        return f"[`{display}`][{path}]" if path else f"`{display}`"

    def page(match: re.Match[str]) -> str:
        _, name, anchor, _ = match.groups()
        return f"[docs/{name}.md{anchor or ''}](../{name}.md{anchor or ''})"

    return _DOCS_PAGE.sub(page, _ROLE.sub(role, notes_after_parameters(text)))


def _init_made_at_runtime(obj: Any) -> bool:
    """Whether ``obj`` is a class whose ``__init__`` carries the signature it was made with
    (``__signature__``, set by ``agents.base.variant``), not a written one."""
    return isinstance(obj, type) and hasattr(getattr(obj, "__init__", None), "__signature__")


class Docstrings(griffe.Extension):
    """Rewrites every docstring of the loaded packages once their object tree is complete, and
    adds the classes a module builds with a factory (no class statement for griffe's static
    reading: ``agents.private_shift``), read from the imported module."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        info = reference.modules().get(mod.path)
        if info is None:
            return
        factory_made = reference.made_at_runtime(info)
        # a class whose constructor is made when the module runs (agents.base.variant, e.g.
        # AdaP-UCB's alpha): griffe's reading of the source would give it its base class's
        # signature, so it is read from the imported class, as inspect.signature gives it
        runtime_init = set()
        for name in info.members:
            obj: Any = getattr(info.module, name, None)
            if _init_made_at_runtime(obj):  # it, and the class of the module it inherits from
                owner = next(c for c in obj.__mro__ if "__init__" in c.__dict__)
                runtime_init |= {name, owner.__name__} if owner.__module__ == mod.path else {name}
        if not (factory_made or runtime_init):
            return
        inspected = griffe.inspect(mod.path)
        for name in info.members:
            missing = factory_made and name not in mod.members
            if missing and name in inspected.members:
                mod.set_member(name, inspected.members[name])
        for name in runtime_init & set(inspected.members):
            mod.set_member(name, inspected.members[name])

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value, obj)

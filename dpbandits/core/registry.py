"""Name -> factory registries: the one lookup behind every named kind of the library.

Agents (``agents.make``), selectors (``dpbandits.selectors.make``) and top-k mechanisms
(``dpbandits.topk.make``) are each one :class:`Registry`. A registry holds

- **built-ins**, one line each: a name and its factory, or ``"module:attribute"`` imported on the
  first lookup of the name (a module that compiles kernels is then imported only when used);
- **run-time registrations** (:meth:`Registry.register`);
- **plug-ins** of installed distributions, declared as entry points of a group
  (``[project.entry-points."dpbandits.agents"]`` in the plug-in's ``pyproject.toml``): read
  lazily, listed by :meth:`Registry.available` without being imported, and loaded on the first
  lookup of their name. A plug-in that fails to load fails only the lookups of its own name,
  with a ``ValueError`` naming the plug-in and its entry point (error isolation: the other
  names, and listings, keep working).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = ["Kind", "Registry"]

Factory = Callable[..., Any]


@dataclass
class Registry:
    """The names of one kind of object (``kind``, e.g. ``"agent"``) and their factories.

    ``builtin`` maps the fixed names to their factories (or ``"module:attribute"`` strings);
    ``entry_point_group`` enables plug-ins; ``sort`` lists every name in alphabetical order
    (else the built-ins first, in their order); ``case_insensitive`` makes ``"UCB"`` the name
    ``"ucb"``; ``fixed_builtins`` refuses to register over a built-in name (else
    ``overwrite=True`` may, and :meth:`unregister` restores the built-in); ``available_label``
    starts the list of names in the error of an unknown name.
    """

    kind: str
    builtin: dict[str, Union[Factory, str]]  # noqa: UP007 (a runtime dataclass annotation)
    entry_point_group: str | None = None
    sort: bool = False
    case_insensitive: bool = False
    fixed_builtins: bool = True
    available_label: str = "available"
    runtime: dict[str, Factory] = field(default_factory=dict)
    _plugins: dict[str, importlib.metadata.EntryPoint] | None = None  # None: not yet read

    def key(self, name: object) -> str:
        """``name`` as the registry stores it; a ``TypeError`` for a name that is not a str."""
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} name must be a str, got {type(name).__name__}")
        return name.lower() if self.case_insensitive else name

    def plugins(self) -> dict[str, importlib.metadata.EntryPoint]:
        """The entry points of ``entry_point_group`` (read once; see :meth:`refresh_plugins`)."""
        if self._plugins is None:
            group = self.entry_point_group
            eps = importlib.metadata.entry_points(group=group) if group else ()
            self._plugins = {
                (ep.name.lower() if self.case_insensitive else ep.name): ep for ep in eps
            }
        return self._plugins

    def refresh_plugins(self) -> None:
        """Forget the discovered entry points; the next lookup scans the environment again."""
        self._plugins = None

    def available(self) -> list[str]:
        """Names :meth:`lookup` accepts: built-ins, run-time registrations and plug-ins."""
        if self.sort:
            return sorted(set(self.builtin) | set(self.runtime) | set(self.plugins()))
        others = (set(self.runtime) | set(self.plugins())) - set(self.builtin)
        return [*self.builtin, *sorted(others)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.key(name) in self.available()

    def register(self, name: str, factory: Factory, *, overwrite: bool = False) -> None:
        """Register ``factory(**params)`` (usually a class) under ``name``.

        An existing run-time name needs ``overwrite=True``; so does a built-in name when the
        built-ins are not fixed (``fixed_builtins``), else it is refused."""
        if not isinstance(name, str) or not name:
            raise (TypeError if not isinstance(name, str) else ValueError)(
                f"name must be a non-empty str, got {name!r}"
            )
        if not callable(factory):
            raise TypeError(f"factory must be callable, got {type(factory).__name__}")
        key = self.key(name)
        if key in self.builtin and self.fixed_builtins:
            raise ValueError(f"{name!r} is a built-in {self.kind} and cannot be re-registered")
        if (key in self.runtime or key in self.builtin) and not overwrite:
            raise ValueError(
                f"{self.kind} name {name!r} is already registered (pass overwrite=True)"
            )
        self.runtime[key] = factory

    def unregister(self, name: str) -> None:
        """Remove a run-time registration (back to the built-in it overwrote, if any)."""
        key = name.lower() if isinstance(name, str) and self.case_insensitive else name
        if not isinstance(key, str) or key not in self.runtime:
            raise ValueError(f"{name!r} is not a run-time registered {self.kind}")
        del self.runtime[key]

    def lookup(self, name: str) -> Factory:
        """The factory of ``name``; an unknown name raises ``ValueError`` listing the known, a
        plug-in that fails to load one naming it."""
        key = self.key(name)
        if key in self.runtime:
            return self.runtime[key]
        if key in self.builtin:
            factory = self.builtin[key]
            if isinstance(factory, str):  # "module:attribute", imported now, once
                module, _, attr = factory.partition(":")
                factory = self.builtin[key] = getattr(importlib.import_module(module), attr)
            return factory
        plugins = self.plugins()
        if key in plugins:
            try:
                loaded: Factory = plugins[key].load()
            except Exception as exc:  # a broken plug-in must say which one it is
                raise ValueError(
                    f"{self.kind} plug-in {name!r} ({plugins[key].value}) failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if not callable(loaded):
                raise ValueError(
                    f"{self.kind} plug-in {name!r} ({plugins[key].value}) is not callable"
                )
            return loaded
        raise ValueError(
            f"unknown {self.kind} {name!r}; {self.available_label}: {', '.join(self.available())}"
        )

    def builtin_path(self, name: str) -> str | None:
        """``"module:attribute"`` of a built-in not imported yet, else ``None``."""
        factory = self.builtin.get(self.key(name))
        return factory if isinstance(factory, str) else None

    def describe(self, name: str) -> Kind:
        """What ``name`` builds, learnt from the factory itself (nothing is built): a class
        and its constructor's signature, or a factory function and its own signature. A
        plug-in that fails to load is described by its error (``error``), not raised."""
        key = self.key(name)
        try:
            factory = self.lookup(key)
        except ValueError as exc:
            if key not in self.plugins():
                raise
            return Kind(key, None, None, None, str(exc))
        cls = factory if isinstance(factory, type) else None
        try:
            sig: inspect.Signature | None = inspect.signature(factory)
        except (TypeError, ValueError):
            sig = None
        return Kind(key, factory, cls, sig)


@dataclass(frozen=True)
class Kind:
    """A registered name: its factory, the class it is (``None`` for a factory function), the
    factory's signature (``None`` when it cannot be read) and, for a plug-in that failed to
    load, why (``error``)."""

    name: str
    factory: Factory | None
    cls: type | None
    signature: inspect.Signature | None
    error: str = ""

    @property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The named parameters (``{}`` when the signature is unknown)."""
        if self.signature is None:
            return {}
        return {
            p.name: p
            for p in self.signature.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    @property
    def var_keyword(self) -> bool:
        """Whether unknown keywords are accepted (passed on, e.g. to a private agent's
        selector); ``True`` when the signature is unknown, as only the factory can tell."""
        if self.signature is None:
            return True
        return any(p.kind == p.VAR_KEYWORD for p in self.signature.parameters.values())

    @property
    def constraints(self) -> dict[str, Any]:
        """The class's declared parameter table (``parameter_constraints``), ``{}`` if none."""
        return dict(getattr(self.cls, "parameter_constraints", None) or {})

"""Name -> factory registries: the one lookup behind ``selectors.make`` and ``topk.make``.

A :class:`Registry` holds built-in classes (fixed; a built-in given as ``"module:attribute"`` is
imported on its first lookup, so a mechanism of a companion module is listed and made by name
without the registry importing it up front), run-time registrations
(:meth:`Registry.register`) and, optionally, plug-ins declared as entry points of a group
(discovered lazily, on the first lookup of a name that is not built in or registered).
:meth:`Registry.make` builds an instance from a name and parameters -- unknown names and
parameters fail with an error naming the accepted ones -- or returns an instance unchanged.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, Union

from dpbandits.core.checks import ParameterTypeError
from dpbandits.selectors.base import Mechanism

__all__ = ["Registry"]

Factory = Callable[..., Any]
T = TypeVar("T", bound=Mechanism)


@dataclass
class Registry(Generic[T]):
    """Names of one kind of mechanism (``kind``, e.g. ``"selector"``) and their factories.

    ``base`` is the mechanism class (a factory that is a subclass of it has its parameters
    checked by name before the call); ``builtin`` maps the fixed names to their classes, or to
    ``"module:attribute"`` strings imported on first lookup;
    ``argument`` names the first parameter of :meth:`make` in error messages;
    ``entry_point_group`` enables plug-ins; ``sort`` lists every name in alphabetical order
    (else the built-ins first, in their order).
    """

    kind: str
    base: type[T]
    builtin: dict[str, Union[Factory, str]]  # noqa: UP007 (a runtime dataclass annotation)
    argument: str
    entry_point_group: str | None = None
    sort: bool = False
    runtime: dict[str, Factory] = field(default_factory=dict)
    _plugins: dict[str, importlib.metadata.EntryPoint] | None = None  # None: not yet read

    def plugins(self) -> dict[str, importlib.metadata.EntryPoint]:
        """The entry points of ``entry_point_group`` (read once; see :meth:`refresh_plugins`)."""
        if self._plugins is None:
            group = self.entry_point_group
            eps = importlib.metadata.entry_points(group=group) if group else ()
            self._plugins = {ep.name: ep for ep in eps}
        return self._plugins

    def refresh_plugins(self) -> None:
        """Forget the discovered entry points; the next lookup scans the environment again."""
        self._plugins = None

    def available(self) -> list[str]:
        """Names :meth:`make` accepts: built-ins, run-time registrations and plug-ins."""
        if self.sort:
            return sorted(set(self.builtin) | set(self.runtime) | set(self.plugins()))
        others = (set(self.runtime) | set(self.plugins())) - set(self.builtin)
        return [*self.builtin, *sorted(others)]

    def register(self, name: str, factory: Factory, *, overwrite: bool = False) -> None:
        """Register ``factory(**params)`` (e.g. a subclass of ``base``) under ``name``.

        Built-in names cannot be replaced; an existing run-time name needs ``overwrite=True``.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not callable(factory):
            raise TypeError(f"factory must be callable, got {type(factory).__name__}")
        if name in self.builtin:
            raise ValueError(f"{name!r} is a built-in {self.kind} and cannot be re-registered")
        if name in self.runtime and not overwrite:
            raise ValueError(f"{self.kind} {name!r} is already registered; pass overwrite=True")
        self.runtime[name] = factory

    def unregister(self, name: str) -> None:
        """Remove a run-time registration (built-ins and entry points cannot be removed)."""
        if name not in self.runtime:
            raise ValueError(f"{name!r} is not a run-time registered {self.kind}")
        del self.runtime[name]

    def is_instance(self, obj: object) -> bool:
        """Duck-typed protocol: ``select``, ``epsilon``, ``private``, ``name``."""
        return isinstance(obj, self.base) or (
            callable(getattr(obj, "select", None))
            and hasattr(obj, "epsilon")
            and hasattr(obj, "private")
            and hasattr(obj, "name")
        )

    def lookup(self, name: str) -> Factory:
        """The factory of ``name``; an unknown name raises ``ValueError`` listing the known."""
        if name in self.builtin:
            factory = self.builtin[name]
            if isinstance(factory, str):  # "module:attribute", imported now, once
                module, _, attr = factory.partition(":")
                factory = self.builtin[name] = getattr(importlib.import_module(module), attr)
            return factory
        if name in self.runtime:
            return self.runtime[name]
        plugins = self.plugins()
        if name in plugins:
            try:
                return plugins[name].load()
            except Exception as exc:  # a broken plug-in must say which one it is
                raise ValueError(
                    f"{self.kind} plug-in {name!r} ({plugins[name].value}) failed to load: {exc}"
                ) from exc
        raise ValueError(f"unknown {self.kind} {name!r}; available: {', '.join(self.available())}")

    def make(self, spec: str | T, **params: Any) -> T:
        """Build a mechanism from a name and parameters, or return an instance unchanged.

        Unknown names raise :class:`ValueError` listing the available names; unknown
        parameters raise :class:`TypeError` naming the accepted ones.
        """
        base = self.base.__name__
        if not isinstance(spec, str):
            if self.is_instance(spec):
                if params:
                    raise TypeError(
                        f"parameters cannot be combined with a {base} instance; "
                        "use .with_epsilon(...) or make(name, **params)"
                    )
                return spec
            raise TypeError(
                f"{self.argument} must be a name or a {base} instance, got {type(spec).__name__}"
            )
        factory = self.lookup(spec)
        if isinstance(factory, type) and issubclass(factory, self.base):
            accepted = factory.param_names()
            unknown = sorted(set(params) - set(accepted))
            if unknown:
                raise ParameterTypeError(
                    f"unknown parameter(s) {unknown} for {self.kind} {spec!r}; accepted: "
                    f"{accepted}",
                    unknown[0],
                )
        obj = factory(**params)
        if not self.is_instance(obj):
            raise TypeError(f"factory for {spec!r} returned {type(obj).__name__}, not a {base}")
        return obj

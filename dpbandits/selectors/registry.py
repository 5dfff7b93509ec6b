"""The mechanism registries behind ``selectors.make`` and ``topk.make``: the library's one
:class:`dpbandits.core.registry.Registry` (built-ins, run-time registrations, entry-point
plug-ins), plus what mechanisms add -- :meth:`Registry.make` builds an instance from a name and
parameters (unknown names and parameters fail with an error naming the accepted ones) or returns
an instance unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dpbandits.core.checks import ParameterTypeError
from dpbandits.core.registry import Registry as NameRegistry
from dpbandits.selectors.base import Mechanism

__all__ = ["Registry"]

T = TypeVar("T", bound=Mechanism)


@dataclass
class Registry(NameRegistry, Generic[T]):
    """The names of one kind of mechanism (:class:`dpbandits.core.registry.Registry`), with
    ``base`` the mechanism class (a factory that is a subclass of it has its parameters checked
    by name before the call) and ``argument`` the name of :meth:`make`'s first parameter in
    error messages."""

    base: type[Mechanism] = Mechanism
    argument: str = "mechanism"

    def is_instance(self, obj: object) -> bool:
        """Duck-typed protocol: ``select``, ``epsilon``, ``private``, ``name``."""
        return isinstance(obj, self.base) or (
            callable(getattr(obj, "select", None))
            and hasattr(obj, "epsilon")
            and hasattr(obj, "private")
            and hasattr(obj, "name")
        )

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

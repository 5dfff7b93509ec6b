"""DP selectors (§III-B, §IV, §VII and App. C of the main paper).

.. code-block:: python

    from dpbandits import selectors
    sel = selectors.make("mgem", epsilon=1.0, beta=0.05)
    idx = sel.select(q, d, rng=0)          # q (..., K), d scalar or broadcastable -> q.shape[:-1]

Built-in names: ``uniform``, ``greedy``, ``krr``, ``rnm`` (``noise="exponential" | "gumbel" |
"laplace"``), ``exponential_mechanism``, ``permute_and_flip``, ``rnmh``, ``rs``, ``rs_tnb``,
``gem``, ``mgem``, ``combined_gem``.

Plug-ins: third-party packages declare an entry point in the group ``dpbandits.selectors``
(``name = "package.module:FactoryOrClass"``); it is discovered lazily, on the first lookup of a
name that is not built in. Code that defines a selector at run time calls
:func:`register`; a plain function ``fn(q, d, epsilon, rng) -> indices`` is wrapped by
:func:`from_function`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

from dpbandits.selectors.advisor import Recommendation, recommend
from dpbandits.selectors.base import FunctionSelector, Selector, from_function
from dpbandits.selectors.gem import GEM, MGEM, CombinedGEM, gem_scores
from dpbandits.selectors.heuristics import spearman, weighted_correlation
from dpbandits.selectors.noisy_max import RNM, RNMH, ExponentialMechanism, PermuteAndFlip
from dpbandits.selectors.random_stopping import RS, RandomStoppingTNB, sample_tnb
from dpbandits.selectors.simple import KRR, Greedy, Uniform

__all__ = [
    "ENTRY_POINT_GROUP",
    "GEM",
    "KRR",
    "MGEM",
    "RNM",
    "RNMH",
    "RS",
    "RandomStoppingTNB",
    "CombinedGEM",
    "ExponentialMechanism",
    "FunctionSelector",
    "Greedy",
    "PermuteAndFlip",
    "Recommendation",
    "Selector",
    "Uniform",
    "available",
    "from_function",
    "gem_scores",
    "make",
    "recommend",
    "refresh_plugins",
    "register",
    "sample_tnb",
    "spearman",
    "unregister",
    "weighted_correlation",
]

ENTRY_POINT_GROUP = "dpbandits.selectors"

Factory = Callable[..., Any]

_BUILTIN: dict[str, Factory] = {
    cls.name: cls
    for cls in (
        Uniform,
        Greedy,
        KRR,
        RNM,
        ExponentialMechanism,
        PermuteAndFlip,
        RNMH,
        RS,
        RandomStoppingTNB,
        GEM,
        MGEM,
        CombinedGEM,
    )
}
_RUNTIME: dict[str, Factory] = {}
_PLUGINS: dict[str, importlib.metadata.EntryPoint] | None = None  # None = not yet discovered


def _plugins() -> dict[str, importlib.metadata.EntryPoint]:
    global _PLUGINS
    if _PLUGINS is None:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        _PLUGINS = {ep.name: ep for ep in eps}
    return _PLUGINS


def refresh_plugins() -> None:
    """Forget the discovered entry points; the next lookup scans the environment again."""
    global _PLUGINS
    _PLUGINS = None


def available() -> list[str]:
    """Names :func:`make` accepts: built-ins, run-time registrations and entry-point plug-ins."""
    names = set(_BUILTIN) | set(_RUNTIME) | set(_plugins())
    return sorted(names)


def register(name: str, factory: Factory, *, overwrite: bool = False) -> None:
    """Register ``factory(**params) -> Selector`` (e.g. a Selector subclass) under ``name``.

    Built-in names cannot be replaced; an existing run-time name needs ``overwrite=True``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    if name in _BUILTIN:
        raise ValueError(f"{name!r} is a built-in selector and cannot be re-registered")
    if name in _RUNTIME and not overwrite:
        raise ValueError(f"selector {name!r} is already registered; pass overwrite=True")
    _RUNTIME[name] = factory


def unregister(name: str) -> None:
    """Remove a run-time registration (built-ins and entry points cannot be removed)."""
    if name not in _RUNTIME:
        raise ValueError(f"{name!r} is not a run-time registered selector")
    del _RUNTIME[name]


def _is_selector(obj: object) -> bool:
    """Duck-typed Selector protocol: ``select``, ``epsilon``, ``private``, ``name``."""
    return isinstance(obj, Selector) or (
        callable(getattr(obj, "select", None))
        and hasattr(obj, "epsilon")
        and hasattr(obj, "private")
        and hasattr(obj, "name")
    )


def _lookup(name: str) -> Factory:
    if name in _BUILTIN:
        return _BUILTIN[name]
    if name in _RUNTIME:
        return _RUNTIME[name]
    plugins = _plugins()
    if name in plugins:
        try:
            return plugins[name].load()
        except Exception as exc:  # a broken plug-in must say which one it is
            raise ValueError(
                f"selector plug-in {name!r} ({plugins[name].value}) failed to load: {exc}"
            ) from exc
    raise ValueError(f"unknown selector {name!r}; available: {', '.join(available())}")


def make(selector: str | Selector, **params: Any) -> Selector:
    """Build a selector from a name and parameters, or return a Selector instance unchanged.

    ``make("mgem", epsilon=1.0, beta=0.05)``; ``make(sel) is sel``. Unknown names raise
    :class:`ValueError` listing the available names; unknown parameters raise
    :class:`TypeError` naming the accepted ones.
    """
    if not isinstance(selector, str):
        if _is_selector(selector):
            if params:
                raise TypeError(
                    "parameters cannot be combined with a Selector instance; "
                    "use sel.with_epsilon(...) or make(name, **params)"
                )
            return selector
        raise TypeError(
            f"selector must be a name or a Selector instance, got {type(selector).__name__}"
        )
    factory = _lookup(selector)
    if isinstance(factory, type) and issubclass(factory, Selector):
        accepted = factory._param_names()
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise TypeError(
                f"unknown parameter(s) {unknown} for selector {selector!r}; accepted: {accepted}"
            )
    obj = factory(**params)
    if not _is_selector(obj):
        raise TypeError(f"factory for {selector!r} returned {type(obj).__name__}, not a Selector")
    return obj

"""Private top-k selection: choose k of d items at once (paper 002; slates in bandits).

.. code-block:: python

    from dpbandits import topk
    sel = topk.make("canonical_lipschitz", epsilon=1.0)   # gamma = 1/2 as in paper 002
    idx = sel.select(q, k=5, sensitivity=1.0, rng=0)      # q (..., d) -> (..., 5)

Built-in names and guarantees (eps is the budget of one call selecting all k items):

=======================  ====================================================  ===========
name                     mechanism                                             eps over k
=======================  ====================================================  ===========
``canonical_lipschitz``  Lipschitz mechanism with the canonical loss (paper    not split
                         002, App. A, Alg. 2); a set, returned in index order
``joint``                joint exponential mechanism over sequences            not split
                         (Gillenwater et al. 2022); a ranking
``gumbel``               one-shot top-k of ``q + Gumbel(2kD/eps)``             eps/k each
                         (Durfee & Rogers 2019); a ranking
``peeling``              k rounds of the exponential mechanism at eps/k        eps/k each
                         (same law as ``gumbel``); a ranking
``exact``                the true top-k (**not private**)                      --
=======================  ====================================================  ===========

All private ones are eps-DP (pure). Run-time additions: :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpbandits.topk.base import TopKSelector, check_k
from dpbandits.topk.gumbel import ExactTopK, OneShotGumbel, PeelingEM
from dpbandits.topk.joint import JointEM
from dpbandits.topk.lipschitz import CanonicalLipschitz

__all__ = [
    "CanonicalLipschitz",
    "ExactTopK",
    "JointEM",
    "OneShotGumbel",
    "PeelingEM",
    "TopKSelector",
    "available",
    "check_k",
    "make",
    "register",
    "unregister",
]

Factory = Callable[..., Any]

_BUILTIN: dict[str, Factory] = {
    cls.name: cls for cls in (CanonicalLipschitz, JointEM, OneShotGumbel, PeelingEM, ExactTopK)
}
_RUNTIME: dict[str, Factory] = {}


def available() -> list[str]:
    """Names :func:`make` accepts (built-ins, then run-time registrations)."""
    return [*_BUILTIN, *sorted(_RUNTIME)]


def register(name: str, factory: Factory, *, overwrite: bool = False) -> None:
    """Register ``factory(**params) -> TopKSelector`` under ``name`` (built-ins are fixed)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    if name in _BUILTIN:
        raise ValueError(f"{name!r} is a built-in top-k mechanism and cannot be re-registered")
    if name in _RUNTIME and not overwrite:
        raise ValueError(f"top-k mechanism {name!r} is already registered; pass overwrite=True")
    _RUNTIME[name] = factory


def unregister(name: str) -> None:
    """Remove a run-time registration."""
    if name not in _RUNTIME:
        raise ValueError(f"{name!r} is not a run-time registered top-k mechanism")
    del _RUNTIME[name]


def _is_topk(obj: object) -> bool:
    return isinstance(obj, TopKSelector) or (
        callable(getattr(obj, "select", None))
        and hasattr(obj, "epsilon")
        and hasattr(obj, "private")
        and hasattr(obj, "name")
    )


def make(mechanism: str | TopKSelector, **params: Any) -> TopKSelector:
    """Build a top-k mechanism from a name and parameters, or return an instance unchanged.

    ``make("canonical_lipschitz", epsilon=2.0, gamma=0.5)``. Unknown names raise
    :class:`ValueError` listing the available ones; unknown parameters :class:`TypeError`.
    """
    if not isinstance(mechanism, str):
        if _is_topk(mechanism):
            if params:
                raise TypeError("parameters cannot be combined with a mechanism instance")
            return mechanism
        raise TypeError(
            f"mechanism must be a name or a TopKSelector, got {type(mechanism).__name__}"
        )
    if mechanism in _BUILTIN:
        factory = _BUILTIN[mechanism]
    elif mechanism in _RUNTIME:
        factory = _RUNTIME[mechanism]
    else:
        raise ValueError(
            f"unknown top-k mechanism {mechanism!r}; available: {', '.join(available())}"
        )
    if isinstance(factory, type) and issubclass(factory, TopKSelector):
        accepted = factory._param_names()
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise TypeError(
                f"unknown parameter(s) {unknown} for top-k mechanism {mechanism!r}; "
                f"accepted: {accepted}"
            )
    obj = factory(**params)
    if not _is_topk(obj):
        raise TypeError(f"factory for {mechanism!r} returned {type(obj).__name__}")
    return obj

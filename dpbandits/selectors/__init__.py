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

from dpbandits.selectors.advisor import Recommendation, recommend
from dpbandits.selectors.base import FunctionSelector, Selector, from_function
from dpbandits.selectors.gem import GEM, MGEM, CombinedGEM, gem_scores
from dpbandits.selectors.heuristics import spearman, weighted_correlation
from dpbandits.selectors.noisy_max import RNM, RNMH, ExponentialMechanism, PermuteAndFlip
from dpbandits.selectors.random_stopping import RS, RandomStoppingTNB, sample_tnb
from dpbandits.selectors.registry import Registry
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

#: The selector names: built-ins, run-time registrations and entry-point plug-ins.
REGISTRY: Registry[Selector] = Registry(
    "selector",
    {**{cls.name: cls for cls in (Uniform, Greedy, KRR, RNM, ExponentialMechanism,
                                  PermuteAndFlip, RNMH, RS, RandomStoppingTNB, GEM, MGEM,
                                  CombinedGEM)},
     # the score transforms of private recommendation (paper 001), imported when first used
     "scaled": "dpbandits.recommendation.local:Scaled",
     "clipped": "dpbandits.recommendation.local:Clipped"},
    base=Selector,
    argument="selector",
    entry_point_group=ENTRY_POINT_GROUP,
    sort=True,
)  # fmt: skip

#: Names :func:`make` accepts (sorted): built-ins, run-time registrations, entry-point plug-ins.
available = REGISTRY.available
#: ``register(name, factory, *, overwrite=False)``: ``factory(**params) -> Selector`` (e.g. a
#: Selector subclass) under ``name``; built-ins are fixed, a run-time name needs ``overwrite``.
register = REGISTRY.register
#: ``unregister(name)``: remove a run-time registration.
unregister = REGISTRY.unregister
#: ``refresh_plugins()``: forget the discovered entry points (the next lookup reads them again).
refresh_plugins = REGISTRY.refresh_plugins
#: ``make("mgem", epsilon=1.0, beta=0.05)`` builds a selector; ``make(sel) is sel``. Unknown
#: names raise ValueError listing the available ones, unknown parameters TypeError.
make = REGISTRY.make

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

from dpbandits.selectors.registry import Registry
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

#: The top-k mechanism names: built-ins (in the order above), then run-time registrations.
REGISTRY: Registry[TopKSelector] = Registry(
    "top-k mechanism",
    {cls.name: cls for cls in (CanonicalLipschitz, JointEM, OneShotGumbel, PeelingEM, ExactTopK)},
    base=TopKSelector,
    argument="mechanism",
)

#: Names :func:`make` accepts (built-ins, then run-time registrations).
available = REGISTRY.available
#: ``register(name, factory, *, overwrite=False)``: ``factory(**params) -> TopKSelector``
#: under ``name`` (built-ins are fixed).
register = REGISTRY.register
#: ``unregister(name)``: remove a run-time registration.
unregister = REGISTRY.unregister
#: ``make("canonical_lipschitz", epsilon=2.0, gamma=0.5)`` builds a mechanism, or returns an
#: instance unchanged. Unknown names raise ValueError listing the available ones, unknown
#: parameters TypeError.
make = REGISTRY.make

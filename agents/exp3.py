"""Exp3, the adversarial-bandit baseline (Auer, Cesa-Bianchi, Freund & Schapire 2002)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.skeleton import CompiledAgent, fields
from dpbandits.core.jit import beats, inline_kernel, kernel, pairwise_sum
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["Exp3"]


# -- the compiled step on the skeleton (agents.skeleton). Per (replication, arm): the log-weight
# and the probability of the last draw; every operation is numpy's, in numpy's order, so the
# numbers are those of Exp3's numpy code (tests/agents/test_exp3_compiled.py).
ARM = fields("log_weight", "prob")
RUN = fields("arm")  # the arm drawn at this step
PAR = fields("gamma")


@inline_kernel
def _weights(arms: Any, r: int) -> None:
    """``w = exp(l - max l)``, ``l`` replication ``r``'s log-weights, into its ``prob``
    fields."""
    n_arms = arms.shape[1]
    top = arms[r, 0, ARM.log_weight]
    for a in range(1, n_arms):  # numpy's max: NaN wins, as in argmax
        if beats(arms[r, a, ARM.log_weight], top):
            top = arms[r, a, ARM.log_weight]
    for a in range(n_arms):
        # exp(0) is exactly 1: the arm of largest weight needs no test (a branch to skip its
        # exp, taken at a different arm in each replication, cost more than the exp)
        arms[r, a, ARM.prob] = math.exp(arms[r, a, ARM.log_weight] - top)


@inline_kernel
def _normalise(arms: Any, r: int, gamma: float, total: float) -> None:
    """``p = (1 - gamma) w / total + gamma / K`` in replication ``r``'s ``prob`` fields."""
    n_arms = arms.shape[1]
    keep, floor = 1.0 - gamma, gamma / n_arms
    for a in range(n_arms):
        arms[r, a, ARM.prob] = keep * (arms[r, a, ARM.prob] / total) + floor


@inline_kernel
def _lane(arms: Any, r: int, j: int, end: int) -> float:
    """``w_j + w_{j+8} + ...`` (left to right, indices below ``end``), replication ``r``'s
    weights in its ``prob`` fields: one of the 8 accumulators of numpy's pairwise sum."""
    s = arms[r, j, ARM.prob]
    for a in range(j + 8, end, 8):
        s += arms[r, a, ARM.prob]
    return s


@inline_kernel
def _weight_sum(arms: Any, r: int) -> float:
    """numpy's sum of replication ``r``'s ``K <= 128`` weights (:func:`pairwise_sum`'s block):
    fewer than 8 left to right, else the 8 lanes over the largest multiple of 8 terms combined
    as ``((l_0 + l_1) + (l_2 + l_3)) + ((l_4 + l_5) + (l_6 + l_7))``, then the rest left to
    right."""
    n = arms.shape[1]
    if n < 8:
        res = -0.0  # keeps a sum of -0.0 terms -0.0, as numpy does
        for a in range(n):
            res += arms[r, a, ARM.prob]
        return res
    end = n - n % 8
    l01 = _lane(arms, r, 0, end) + _lane(arms, r, 1, end)
    l23 = _lane(arms, r, 2, end) + _lane(arms, r, 3, end)
    l45 = _lane(arms, r, 4, end) + _lane(arms, r, 5, end)
    l67 = _lane(arms, r, 6, end) + _lane(arms, r, 7, end)
    res = (l01 + l23) + (l45 + l67)
    for a in range(end, n):
        res += arms[r, a, ARM.prob]
    return res


@inline_kernel
def _distribution(arms: Any, r: int, gamma: float) -> None:
    """``p = (1 - gamma) w / sum(w) + gamma / K`` with ``w = exp(l - max l)``, ``l``
    replication ``r``'s log-weights (Auer et al. 2002, Fig. 1, step 1), into its ``prob``
    fields, for ``K <= 128`` (:func:`_weight_sum`)."""
    _weights(arms, r)
    _normalise(arms, r, gamma, 0.0 + _weight_sum(arms, r))  # numpy's w.sum(axis=1)


@kernel
def _any_distribution(arms: Any, r: int, gamma: float) -> None:
    """:func:`_distribution` for any ``K`` (numpy's pairwise sum of the row)."""
    _weights(arms, r)
    _normalise(arms, r, gamma, 0.0 + pairwise_sum(arms[r, :, ARM.prob], 0, arms.shape[1]))


@inline_kernel
def _draw(arms: Any, r: int, u: float) -> int:
    """The arm drawn from replication ``r``'s distribution with the uniform ``u``: the number
    of cumulative sums ``c_a = p_0 + ... + p_a`` (left to right, as ``numpy.cumsum``) at most
    ``u c_{K-1}``, capped at ``K - 1``. Scaling ``u`` by the last cumulative sum keeps rounding
    from pushing the draw past the last arm."""
    n_arms = arms.shape[1]
    last = arms[r, 0, ARM.prob]
    for a in range(1, n_arms):
        last += arms[r, a, ARM.prob]
    target = u * last
    c = arms[r, 0, ARM.prob]
    below = 1 if c <= target else 0
    for a in range(1, n_arms):
        c += arms[r, a, ARM.prob]
        if c <= target:
            below += 1
    return min(below, n_arms - 1)


@kernel
def _prepare(arms: Any, runs: Any, par: Any, t: int, f: float, bits: Any) -> None:
    """Every replication's arm, in replication order: one uniform (as ``rng.random(R)`` draws
    them), its distribution, the draw, into its ``arm`` field. The skeleton's
    ``prepare_kernel``: the distributions are loops over each replication's arms. Up to 128
    arms, the loop calls nothing and takes no view of ``arms`` (either keeps numba's reference
    counts of ``arms`` in it: a third of the step's time at K = 10; docs/agents.md, "Choosing
    a whole step at once")."""
    gamma = par[PAR.gamma]
    if arms.shape[1] <= 128:
        for r in range(arms.shape[0]):
            u = next_double(bits)
            _distribution(arms, r, gamma)
            runs[r, RUN.arm] = _draw(arms, r, u)
    else:
        for r in range(arms.shape[0]):
            u = next_double(bits)
            _any_distribution(arms, r, gamma)
            runs[r, RUN.arm] = _draw(arms, r, u)


@inline_kernel
def _choose(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """Replication ``r``'s arm, drawn by :func:`_prepare`."""
    return int(runs[r, RUN.arm])


@inline_kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """``l_a += gamma (x / p_a) / K`` for the played arm ``a`` (Auer et al. 2002, Fig. 1,
    steps 4-5, in logarithms). The initial round is not drawn from ``p``: it teaches
    nothing."""
    n_arms = arms.shape[1]
    if t >= n_arms:
        arms[r, a, ARM.log_weight] += par[PAR.gamma] * (x / arms[r, a, ARM.prob]) / n_arms


@kernel
def _distributions(arms: Any, gamma: float) -> None:
    """Every replication's distribution (:meth:`Exp3.probabilities`)."""
    for r in range(arms.shape[0]):
        _any_distribution(arms, r, gamma)


class Exp3(CompiledAgent):
    """Exp3 (Auer et al. 2002, Fig. 1) for rewards in ``[0, 1]``.

    ``p_a = (1 - gamma) w_a / sum_b w_b + gamma / K``; the played arm ``a`` updates
    ``w_a <- w_a exp(gamma (r / p_a) / K)``. Weights are kept as logarithms and renormalised by
    their maximum, so they never overflow. ``gamma=None`` takes Auer et al.'s Corollary 3.2 value
    ``min(1, sqrt(K ln K / ((e - 1) T)))`` for the horizon ``T`` given to ``reset`` (then the
    horizon is required).

    The first ``K`` steps pull each arm once (common to all agents). Those pulls are not
    drawn from ``p``, so an importance-weighted update would be biased: Exp3 ignores them.
    Rewards outside ``[0, 1]`` raise ``ValueError``.
    """

    name = "exp3"
    traits = AgentTraits(rewards="unit", compiled=True)
    ARM, RUN, PAR = ARM, RUN, PAR
    prepare_kernel, arm_kernel, learn_kernel = _prepare, _choose, _learn

    parameter_constraints = {
        "gamma": Param(
            low=0,
            high=1,
            low_open=True,
            none=True,
            doc="exploration rate; None: tuned to the horizon",
        ),
    }

    def __init__(self, gamma: float | None = None) -> None:
        self.gamma = gamma

    def parameters(self) -> dict[str, float]:
        k = self.n_arms
        if self.gamma is None:
            horizon = self.needed_horizon("Exp3(gamma=None) tunes gamma to it")
            g = min(1.0, math.sqrt(k * math.log(k) / ((math.e - 1.0) * horizon))) if k > 1 else 1.0
        else:
            g = float(self.gamma)
        return {"gamma": float(g)}

    def init_state(self) -> None:
        self.arm_field("prob")[:] = 1.0 / self.n_arms  # (no draw yet: uniform)

    @property
    def log_weights(self) -> NDArray[np.float64]:
        """The ``(R, K)`` log-weights (a view)."""
        return self.arm_field("log_weight")

    def probabilities(self) -> NDArray[np.float64]:
        """The ``(R, K)`` distribution ``p`` from which the next action is drawn."""
        arms = self.arms.copy()
        _distributions(arms, self.par[PAR.gamma])
        return np.array(arms[:, :, ARM.prob])

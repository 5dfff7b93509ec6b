"""Exp3, the adversarial-bandit baseline (Auer, Cesa-Bianchi, Freund & Schapire 2002)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent
from dpbandits import checks
from dpbandits.arms import RunArms

__all__ = ["Exp3"]


class Exp3(Agent):
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

    def __init__(self, gamma: float | None = None) -> None:
        self.gamma = gamma

    def setup(self) -> None:
        k = self.n_arms
        if self.gamma is None:
            if self.horizon is None:
                raise ValueError("Exp3(gamma=None) needs the horizon: reset(..., horizon=T)")
            g = (
                min(1.0, math.sqrt(k * math.log(k) / ((math.e - 1.0) * self.horizon)))
                if k > 1
                else 1.0
            )
        else:
            g = checks.number(self.gamma, "gamma")
            if not (0.0 < g <= 1.0):
                raise ValueError(f"gamma must be in (0, 1], got {self.gamma}")
        self._gamma = g
        self.log_weights = np.zeros((self.n_runs, k))
        self._probs = np.full((self.n_runs, k), 1.0 / k)
        self._layout = RunArms(self.n_runs, k)  # flat index of (r, actions[r])

    def probabilities(self) -> NDArray[np.float64]:
        """The ``(R, K)`` distribution ``p`` from which the next action is drawn."""
        w = np.exp(self.log_weights - self.log_weights.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        return (1.0 - self._gamma) * w + self._gamma / self.n_arms

    def choose(self) -> NDArray[np.int64]:
        p = self.probabilities()
        self._probs = p
        cdf = np.cumsum(p, axis=1)
        # Scale u by the last cumulative value so rounding cannot push the draw past arm K-1.
        u = self.rng.random(self.n_runs) * cdf[:, -1]
        return np.minimum((cdf <= u[:, None]).sum(axis=1), self.n_arms - 1)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if self.t < self.n_arms:
            return
        r = np.asarray(rewards, dtype=float)
        if not (r.min() >= 0.0 and r.max() <= 1.0):
            raise ValueError(f"Exp3 needs rewards in [0, 1], got min {r.min()}, max {r.max()}")
        idx = self._layout.flat(actions)
        p_taken = self._probs.reshape(-1)[idx]
        self.log_weights.reshape(-1)[idx] += self._gamma * (r / p_taken) / self.n_arms

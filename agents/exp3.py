"""Exp3, the adversarial-bandit baseline (Auer, Cesa-Bianchi, Freund & Schapire 2002)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, in_unit_interval, unit_interval_error
from dpbandits.core.arms import read_only
from dpbandits.core.jit import beats, generator_address, generator_at, kernel, pairwise_sum
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["Exp3"]


# -- the compiled step (dpbandits.core.jit): one implementation for probabilities/choose/observe and
# play. ``log_weights`` and ``probs`` are the (R, K) log-weights and the distribution of the
# last draw; every operation is numpy's, in numpy's order, so the numbers are numpy's bits.
@kernel
def _distributions(log_weights: Any, gamma: float, probs: Any) -> None:
    """``probs[r] = (1 - gamma) w / sum(w) + gamma / K`` with ``w = exp(l - max l)``, ``l``
    replication ``r``'s log-weights (Auer et al. 2002, Fig. 1, step 1), for every ``r``."""
    n_runs, n_arms = log_weights.shape
    flat = probs.reshape(n_runs * n_arms)  # (one view for pairwise_sum, not one per row)
    keep, floor = 1.0 - gamma, gamma / n_arms
    for r in range(n_runs):
        top = log_weights[r, 0]
        for a in range(1, n_arms):  # numpy's max: NaN wins, as in argmax
            if beats(log_weights[r, a], top):
                top = log_weights[r, a]
        for a in range(n_arms):
            d = log_weights[r, a] - top
            # exp(+-0) is exactly 1: the arm of largest weight needs no exp (one of two when K=2)
            probs[r, a] = 1.0 if d == 0.0 else math.exp(d)
        total = 0.0 + pairwise_sum(flat, r * n_arms, n_arms)  # numpy's w.sum(axis=1)
        for a in range(n_arms):
            probs[r, a] = keep * (probs[r, a] / total) + floor


@kernel
def _choose(log_weights: Any, gamma: float, u: Any, probs: Any, out: Any) -> None:
    """Draw every replication's arm from its distribution with the uniforms ``u``: the number
    of cumulative sums ``c_a = p_0 + ... + p_a`` (left to right, as ``numpy.cumsum``) at most
    ``u c_{K-1}``, capped at ``K - 1``. Scaling ``u`` by the last cumulative sum keeps rounding
    from pushing the draw past the last arm."""
    _distributions(log_weights, gamma, probs)
    n_arms = probs.shape[1]
    for r in range(out.shape[0]):
        last = probs[r, 0]
        for a in range(1, n_arms):
            last += probs[r, a]
        target = u[r] * last
        c = probs[r, 0]
        below = 1 if c <= target else 0
        for a in range(1, n_arms):
            c += probs[r, a]
            if c <= target:
                below += 1
        out[r] = min(below, n_arms - 1)


@kernel
def _update(log_weights: Any, probs: Any, gamma: float, actions: Any, x: Any) -> None:
    """``l_a += gamma (x / p_a) / K`` for the played arm ``a`` of every replication (Auer et
    al. 2002, Fig. 1, steps 4-5, in logarithms)."""
    n_arms = log_weights.shape[1]
    for r in range(actions.shape[0]):
        a = actions[r]
        log_weights[r, a] += gamma * (x[r] / probs[r, a]) / n_arms


@kernel
def _play(log_weights: Any, probs: Any, gamma: float, address: int, t0: int, rows: Any,
          actions: Any, rewards: Any, chosen: Any, u: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step after the initial round met a reward outside
    ``[0, 1]`` (that step's arms are drawn, nothing is learnt from it). The uniforms are the
    step protocol's: one per replication, in order."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = log_weights.shape
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            for r in range(n_runs):
                u[r] = next_double(bits)
            _choose(log_weights, gamma, u, probs, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if t >= n_arms and not in_unit_interval(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        if t >= n_arms:  # the initial round is not drawn from p: it teaches nothing
            _update(log_weights, probs, gamma, chosen, x)
    return rows.shape[0]


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
    traits = AgentTraits(rewards="unit", compiled=True)

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

    def setup(self) -> None:
        k = self.n_arms
        if self.gamma is None:
            horizon = self.needed_horizon("Exp3(gamma=None) tunes gamma to it")
            g = min(1.0, math.sqrt(k * math.log(k) / ((math.e - 1.0) * horizon))) if k > 1 else 1.0
        else:
            g = float(self.gamma)
        self._gamma = float(g)
        self.log_weights = np.zeros((self.n_runs, k))
        self._probs = np.full((self.n_runs, k), 1.0 / k)  # the distribution of the last draw
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._u = np.empty(self.n_runs)
        self._x = np.empty(self.n_runs)

    def probabilities(self) -> NDArray[np.float64]:
        """The ``(R, K)`` distribution ``p`` from which the next action is drawn."""
        out = np.empty((self.n_runs, self.n_arms))
        _distributions(self.log_weights, self._gamma, out)
        return out

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        # the uniforms are drawn here, by one numpy call: a Generator passed to a compiled
        # function costs tens of microseconds per call (play draws them inside, once a block)
        u = self.rng.random(self.n_runs)
        _choose(self.log_weights, self._gamma, u, self._probs, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if self.t < self.n_arms:
            return
        x = np.asarray(rewards, dtype=np.float64)
        if not in_unit_interval(x):
            raise unit_interval_error("Exp3", x)
        _update(self.log_weights, self._probs, self._gamma,
                np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        rows = read_only(rows)  # the one compiled loop for the engine's tape and any other rows
        done = _play(self.log_weights, self._probs, self._gamma, generator_address(self.rng),
                     self.t, rows, actions, rewards, self._chosen, self._u, self._x)  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("Exp3", self._x)

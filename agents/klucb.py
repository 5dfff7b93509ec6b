"""KL-UCB (Garivier & Cappé 2011), the non-private asymptotically optimal baseline for rewards in
``[0, 1]`` with the Bernoulli KL divergence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, in_unit_interval, unit_interval_error
from agents.kl import kl_upper, kl_upper_logit, kl_with, log_pair, neg_entropy, sigmoid
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param

__all__ = ["KLUCB", "exploration"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play. The
# argmax of the K indices needs one index computed in full, not K: the previous action's arm
# (usually the argmax again) is the candidate b, its index u_b is inverted (agents.kl, warm
# started from its last root), and another arm a beats it exactly when kl(p_a, u_b) < level_a
# (kl(p_a, .) increases on [p_a, 1]), one evaluation from the two logarithms of u_b shared by
# all arms and a's -H(p_a). Only an arm that beats the candidate has its own index inverted.
# Indices are compared as log-odds, which keeps apart indices within 1e-16 of 1 (p = 1 gives
# exactly 1, +inf). Ties (the same p and level) go to the lowest arm, numpy.argmax's rule. The state
# is one array ``arms[r, a, :]`` (reward sum, pull count, -H of the mean, last index as a
# log-odds) and the candidates ``last[r]``: the helpers take two arrays (numba counts the
# references of every array passed to a call).
SUM, COUNT, NEG_H, ROOT = range(4)
N_ARM_FIELDS = 4


@kernel
def exploration(t: int, c: float) -> float:
    """``f(t) = ln t + c ln ln t`` of Garivier & Cappé (2011), ``t`` the number of rounds played
    (``c ln ln t`` counts as 0 while ``ln t <= 1``, where it would be negative or undefined)."""
    lt = math.log(max(t, 1))
    return lt + c * math.log(lt) if lt > 1.0 else lt


@kernel
def _arm(arms: Any, r: int, b: int, f: float) -> int:
    """The arm of highest KL-UCB index of replication ``r``, from the candidate arm ``b``
    (comment above); the roots of the indices it inverts are kept for the next warm start."""
    best = b
    p_best = arms[r, b, SUM] / arms[r, b, COUNT]
    level_best = f / arms[r, b, COUNT]
    y = kl_upper_logit(p_best, arms[r, b, NEG_H], level_best, arms[r, b, ROOT])
    arms[r, b, ROOT] = y
    u_best = sigmoid(y)  # (compared with means only: the order of indices is that of y)
    log_u, log_1mu = log_pair(y)
    for a in range(arms.shape[1]):
        if a == best:
            continue
        p = arms[r, a, SUM] / arms[r, a, COUNT]
        level = f / arms[r, a, COUNT]
        if p == p_best and level == level_best:  # the same index: the lowest arm
            if a < best:
                best = a
            continue
        # below u_best, a's index exceeds u_best iff kl(p, u_best) < level
        if p < u_best and kl_with(p, arms[r, a, NEG_H], log_u, log_1mu) > level:
            continue
        ya = kl_upper_logit(p, arms[r, a, NEG_H], level, arms[r, a, ROOT])
        arms[r, a, ROOT] = ya
        if beats(ya, y) or (ya == y and a < best):
            best, y, u_best, p_best, level_best = a, ya, sigmoid(ya), p, level
            log_u, log_1mu = log_pair(y)
    return best


@kernel
def _choose(arms: Any, last: Any, f: float, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(arms, r, last[r], f)


@kernel
def _record(arms: Any, last: Any, r: int, a: int, x: float) -> None:
    """Replication ``r`` pulled arm ``a`` and got ``x``: the sum, the count, the arm's ``-H(p)``
    and the next candidate."""
    arms[r, a, SUM] += x
    arms[r, a, COUNT] += 1.0
    arms[r, a, NEG_H] = neg_entropy(arms[r, a, SUM] / arms[r, a, COUNT])
    last[r] = a


@kernel
def _observe(arms: Any, last: Any, actions: Any, x: Any) -> None:
    for r in range(actions.shape[0]):
        _record(arms, last, r, actions[r], x[r])


@kernel
def _play(arms: Any, last: Any, c: float, t0: int, rows: Any, actions: Any, rewards: Any,
          chosen: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward outside ``[0, 1]`` (its arms are
    chosen, nothing is learnt from it)."""
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            f = exploration(t, c)
            for r in range(n_runs):
                chosen[r] = _arm(arms, r, last[r], f)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            a = chosen[r]
            actions[i, r] = a
            rewards[i, r] = x[r]
            _record(arms, last, r, a, x[r])
    return rows.shape[0]


class KLUCB(Agent):
    """KL-UCB (Garivier & Cappé 2011, "The KL-UCB algorithm for bounded stochastic bandits and
    beyond", COLT, arXiv 1102.2490, Algorithm 1) with the Bernoulli divergence ``kl``: at round
    ``t + 1`` play the arm of largest index

        ``u_a = max{q in [p_a, 1] : N_a kl(p_a, q) <= ln t + c ln ln t}``,

    ``p_a`` the mean and ``N_a`` the number of the arm's rewards among the ``t`` so far. It is
    asymptotically optimal for Bernoulli arms, and the paper's bounded-reward setting is any
    rewards in ``[0, 1]``; rewards outside ``[0, 1]`` raise ``ValueError`` (at the first such
    step, before anything is learnt from it).

    Parameters
    ----------
    c:
        The ``c`` of the exploration function; 0 (default) is what Garivier & Cappé use in
        their experiments, ``c = 3`` what their regret bound (Theorem 1) needs.
        ``c ln ln t`` counts as 0 while ``ln t <= 1``.

    Every arm is pulled once first (common to all agents). The index is computed by
    :func:`agents.kl.kl_upper` (Halley's method, accurate to 1e-10), and the argmax needs one
    index in full per step (module comment); ties of the index go to the lowest arm. Anytime:
    no horizon needed.
    """

    name = "klucb"
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md):
    #: ~90 ns per agent-step at R = 100 against UCB's ~12 (benchmarks/bench_scaling.py).
    cost_hint = 7.0

    parameter_constraints = {
        "c": Param(low=0, doc="the c of the exploration function ln t + c ln ln t"),
    }

    def __init__(self, c: float = 0.0) -> None:
        self.c = c

    def setup(self) -> None:
        self._c = float(self.c)
        r, k = self.n_runs, self.n_arms
        self._arms = np.zeros((r, k, N_ARM_FIELDS))
        self._arms[:, :, ROOT] = np.nan  # no warm start yet
        self._last = np.zeros(r, dtype=np.int64)  # the candidate of the next argmax
        self._chosen = np.empty(r, dtype=np.int64)  # work space of play
        self._x = np.empty(r)

    @property
    def counts(self) -> NDArray[np.float64]:
        """The ``(R, K)`` pull counts (a copy)."""
        return self._arms[:, :, COUNT].copy()

    @property
    def sums(self) -> NDArray[np.float64]:
        """The ``(R, K)`` reward sums (a copy)."""
        return self._arms[:, :, SUM].copy()

    def index(self) -> NDArray[np.float64]:
        """The ``(R, K)`` KL-UCB indices at the current step (each computed in full)."""
        level = exploration(self.t, self._c) / self._arms[:, :, COUNT]
        return np.vectorize(kl_upper)(self._arms[:, :, SUM] / self._arms[:, :, COUNT], level)

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._arms, self._last, exploration(self.t, self._c), out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not in_unit_interval(x):
            raise unit_interval_error("KL-UCB", x)
        _observe(self._arms, self._last, np.asarray(actions, dtype=np.int64), x)

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = _play(self._arms, self._last, self._c, self.t, rows, actions, rewards,
                     self._chosen, self._x)  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("KL-UCB", self._x)

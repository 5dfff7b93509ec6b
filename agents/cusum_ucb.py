"""CUSUM-UCB (Liu, Lee & Shroff, AAAI 2018): UCB with a two-sided CUSUM test on every arm, a
restart of the arm that changed, and uniform random exploration. Not private: an anchor of the
piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, in_unit_interval, unit_interval_error
from agents.change_tests import cusum_step
from dpbandits.core import checks
from dpbandits.core.jit import beats, generator_address, generator_at, kernel
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param

__all__ = ["CUSUMUCB"]

# per (replication, arm): pulls and reward sum since the arm's restart, the mean of its first M
# observations, the two walks of the CUSUM (agents.change_tests.cusum_step)
COUNT, SUM, U0, G_PLUS, G_MINUS = range(5)
N_FIELDS = 5


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play. The
# uniform u of a replication's step decides its exploration: u < alpha explores arm
# floor(u / alpha * K) (given u < alpha, u / alpha is uniform: one draw per step).
@kernel
def _arm(arms: Any, r: int, u: float, alpha: float, xi: float) -> int:
    """Replication ``r``'s arm: with probability ``alpha`` a uniform arm, else the highest UCB
    index ``mean_k + sqrt(xi ln(n_t) / n_k)``, ``n_t`` the sum of the arms' pulls since their
    restarts (an arm not pulled since its restart first; ties to the lowest arm)."""
    n_arms = arms.shape[1]
    if u < alpha:
        return min(int(u / alpha * n_arms), n_arms - 1)
    n_t = 0.0
    for b in range(n_arms):
        n_t += arms[r, b, COUNT]
    log_n = math.log(max(n_t, 1.0))
    best_a = 0
    best = -math.inf
    for b in range(n_arms):
        n = arms[r, b, COUNT]
        v = math.inf if n == 0.0 else arms[r, b, SUM] / n + math.sqrt(xi * log_n / n)
        if beats(v, best):
            best_a, best = b, v
    return best_a


@kernel
def _record(arms: Any, params: Any, m: int, r: int, a: int, x: float) -> bool:
    """Replication ``r`` pulled arm ``a`` and got ``x``: the first ``m`` observations since the
    arm's restart give ``u0``, each later one a CUSUM step (Liu et al. 2018, Algorithm 2);
    ``g+ >= h`` or ``g- >= h`` restarts the arm (Algorithm 1). Returns whether it did."""
    drift, h = params[2], params[3]
    arms[r, a, COUNT] += 1.0
    arms[r, a, SUM] += x
    n = arms[r, a, COUNT]
    if n == m:
        arms[r, a, U0] = arms[r, a, SUM] / n
        return False
    if n < m:
        return False
    gp, gm = cusum_step(arms[r, a, G_PLUS], arms[r, a, G_MINUS], x, arms[r, a, U0], drift)
    if gp >= h or gm >= h:
        for f in range(N_FIELDS):
            arms[r, a, f] = 0.0
        return True
    arms[r, a, G_PLUS] = gp
    arms[r, a, G_MINUS] = gm
    return False


@kernel
def _choose(arms: Any, params: Any, u: Any, out: Any) -> None:
    alpha, xi = params[0], params[1]
    for r in range(out.shape[0]):
        out[r] = _arm(arms, r, u[r], alpha, xi)


@kernel
def _observe(arms: Any, params: Any, m: int, restarts: Any, actions: Any, x: Any) -> None:
    for r in range(actions.shape[0]):
        if _record(arms, params, m, r, actions[r], x[r]):
            restarts[r] += 1


@kernel
def _play(arms: Any, params: Any, m: int, restarts: Any, address: int, t0: int, rows: Any,
          actions: Any, rewards: Any, chosen: Any, u: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward outside ``[0, 1]`` (its arms are
    chosen, nothing is learnt from it). The uniforms are the step protocol's: one per
    replication and step after the initial round, in order."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            for r in range(n_runs):
                u[r] = next_double(bits)
            _choose(arms, params, u, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(arms, params, m, restarts, chosen, x)
    return rows.shape[0]


class CUSUMUCB(Agent):
    """CUSUM-UCB (Liu, Lee & Shroff 2018, "A change-detection based framework for
    piecewise-stationary multi-armed bandit problem", AAAI, Algorithm 1 (CD-UCB) with the
    two-sided CUSUM of Algorithm 2) for rewards in ``[0, 1]``.

    - **Uniform exploration**: with probability ``alpha`` a uniformly random arm (any of the
      ``K``, the last included).
    - **Otherwise UCB** on each arm's pulls since its last restart: ``mean_k + sqrt(xi ln n_t /
      n_k)`` with ``n_t = sum_k n_k`` (Algorithm 1), an arm not pulled since its restart first,
      ties to the lowest arm.
    - **Change test** (Algorithm 2) on the pulled arm: the mean ``u0`` of its first ``m``
      observations since its restart, then ``g+ = max(0, g+ + u0 - y - drift)`` and ``g- =
      max(0, g- + y - u0 - drift)`` for each later observation ``y``; ``g+ >= h`` or ``g- >=
      h`` is a detection, which **restarts that arm only** (its statistics and test).

    Parameters
    ----------
    m:
        The number ``M`` of observations that estimate ``u0`` (default 150, Besson et al.
        2022's tuning of CUSUM-UCB in their experiments).
    drift:
        The CUSUM's ``epsilon``, the smallest change it looks for (default 0.1, Besson et
        al.'s tuning for "easy" problems; they take 0.001 for hard ones).
    h:
        The threshold; ``None`` takes ``ln(T / n_changes)`` (Liu et al., Corollary 1) for the
        horizon ``T`` given to ``reset`` (then required).
    alpha:
        The probability of uniform exploration; ``None`` takes ``sqrt(n_changes ln(T /
        n_changes) / T)`` (Liu et al., Corollary 1), capped at 1.
    n_changes:
        The number of change points ``Upsilon_T`` assumed by the defaults.
    xi:
        The constant of the UCB index; 2 (default) is UCB1's (Auer et al. 2002) and
        SMPyBandits' ``UCB``.

    ``restarts`` counts each replication's detections. Rewards outside ``[0, 1]`` raise
    ``ValueError`` (at the first such step, before anything is learnt from it).
    """

    name = "cusum_ucb"

    parameter_constraints = {
        "m": Param("int", low=1, doc="observations estimating the mean before a change"),
        "drift": Param(low=0, doc="CUSUM drift epsilon: the smallest change looked for"),
        "h": Param(low=0, low_open=True, none=True, doc="CUSUM threshold; None: ln(T/n_changes)"),
        "alpha": Param(low=0, high=1, none=True, doc="probability of uniform exploration; "
                       "None: sqrt(n_changes ln(T/n_changes) / T)"),  # fmt: skip
        "n_changes": Param("int", low=1, doc="number of change points assumed by the defaults"),
        "xi": Param(low=0, low_open=True, doc="constant of the UCB index sqrt(xi ln n / n_k)"),
    }

    def __init__(self, m: int = 150, drift: float = 0.1, h: float | None = None,
                 alpha: float | None = None, n_changes: int = 1,
                 xi: float = 2.0) -> None:  # fmt: skip
        self.m = m
        self.drift = drift
        self.h = h
        self.alpha = alpha
        self.n_changes = n_changes
        self.xi = xi

    def setup(self) -> None:
        r, k = self.n_runs, self.n_arms
        if self.h is None or self.alpha is None:
            horizon = self.needed_horizon("CUSUM-UCB(h=None or alpha=None) tunes them to it")
            ratio = max(horizon / self.n_changes, 1.0)
        h = math.log(ratio) if self.h is None else float(self.h)
        if self.alpha is None:
            alpha = min(1.0, math.sqrt(math.log(ratio) / ratio))
        else:
            alpha = float(self.alpha)
        if not h > 0.0:
            raise checks.ParameterError(f"h = ln(T / n_changes) = {h} must be > 0: give h, or a "
                                        f"horizon larger than n_changes = {self.n_changes}",
                                        "h")  # fmt: skip
        self._params = np.array([alpha, float(self.xi), float(self.drift), h])
        self._m = int(self.m)
        self._arms = np.zeros((r, k, N_FIELDS))
        self.restarts = np.zeros(r, dtype=np.int64)
        self._chosen = np.empty(r, dtype=np.int64)  # work space of play
        self._u = np.empty(r)
        self._x = np.empty(r)

    @property
    def counts(self) -> NDArray[np.float64]:
        """The ``(R, K)`` pulls since each arm's restart (a copy)."""
        return self._arms[:, :, COUNT].copy()

    @property
    def sums(self) -> NDArray[np.float64]:
        """The ``(R, K)`` reward sums since each arm's restart (a copy)."""
        return self._arms[:, :, SUM].copy()

    @property
    def threshold(self) -> float:
        """The threshold ``h`` in use."""
        return float(self._params[3])

    @property
    def exploration(self) -> float:
        """The probability ``alpha`` of uniform exploration in use."""
        return float(self._params[0])

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        # the uniforms are drawn here, by one numpy call (play draws the same ones inside)
        _choose(self._arms, self._params, self.rng.random(self.n_runs), out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not in_unit_interval(x):
            raise unit_interval_error("CUSUM-UCB", x)
        _observe(self._arms, self._params, self._m, self.restarts,
                 np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = _play(self._arms, self._params, self._m, self.restarts,
                     generator_address(self.rng), self.t, rows, actions, rewards, self._chosen,
                     self._u, self._x)  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("CUSUM-UCB", self._x)

"""M-UCB (Cao, Wen, Kveton & Xie, AISTATS 2019): UCB1 with a window change test on every arm,
a global restart when it fires, and deterministic forced exploration. Not private: an anchor of
the piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, in_unit_interval, unit_interval_error
from agents.change_tests import forced_arm, forced_period, window_alarm, window_push
from dpbandits.core import checks
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param

__all__ = ["MUCB"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play.
# ``counts``/``sums`` (R, K) are the statistics since the replication's last restart, ``tau``
# (R,) the step of that restart (0-based: the first step after it), ``window`` (R, K, w) and
# ``halves`` (R, K, 2) the state of the window test (agents.change_tests).
@kernel
def _arm(counts: Any, sums: Any, r: int, since: int, period: int) -> int:
    """Replication ``r``'s arm ``since`` steps after its last restart: the forced arm if the
    schedule has one, else the highest UCB1 index ``mean + sqrt(2 ln(since + 1) / n)``
    (an arm not pulled since the restart first; ties to the lowest arm)."""
    n_arms = counts.shape[1]
    a = forced_arm(since, period, n_arms)
    if a >= 0:
        return a
    log_t = math.log(since + 1.0)
    best_a = 0
    best = -math.inf
    for b in range(n_arms):
        n = counts[r, b]
        v = math.inf if n == 0.0 else sums[r, b] / n + math.sqrt(2.0 * log_t / n)
        if beats(v, best):
            best_a, best = b, v
    return best_a


@kernel
def _record(counts: Any, sums: Any, tau: Any, window: Any, halves: Any, w_b: Any, r: int, a: int,
            x: float, t: int) -> bool:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` at step ``t`` and got ``x``; a detection restarts
    every arm (Cao et al. 2019, Algorithm 2: ``tau = t``, ``n_k = 0`` for all ``k``). Returns
    whether it restarted."""
    counts[r, a] += 1.0
    sums[r, a] += x
    n = int(counts[r, a])
    window_push(window[r, a], halves[r, a], n, x)
    if not window_alarm(halves[r, a], n, window.shape[2], w_b[0]):
        return False
    for b in range(counts.shape[1]):
        counts[r, b] = 0.0
        sums[r, b] = 0.0
        halves[r, b, 0] = 0.0
        halves[r, b, 1] = 0.0
    tau[r] = t + 1
    return True


@kernel
def _choose(counts: Any, sums: Any, tau: Any, t: int, period: int, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(counts, sums, r, t - tau[r], period)


@kernel
def _observe(counts: Any, sums: Any, tau: Any, window: Any, halves: Any, w_b: Any,
             restarts: Any, actions: Any, x: Any, t: int) -> None:  # fmt: skip
    for r in range(actions.shape[0]):
        if _record(counts, sums, tau, window, halves, w_b, r, actions[r], x[r], t):
            restarts[r] += 1


@kernel
def _play(counts: Any, sums: Any, tau: Any, window: Any, halves: Any, w_b: Any, restarts: Any,
          period: int, t0: int, rows: Any, actions: Any, rewards: Any, chosen: Any,
          x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward outside ``[0, 1]`` (its arms are
    chosen, nothing is learnt from it)."""
    n_runs, n_arms = counts.shape
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            _choose(counts, sums, tau, t, period, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(counts, sums, tau, window, halves, w_b, restarts, chosen, x, t)
    return rows.shape[0]


class MUCB(Agent):
    """M-UCB (Cao, Wen, Kveton & Xie 2019, "Nearly optimal adaptive procedure with change
    detection for piecewise-stationary bandit", AISTATS, Algorithm 2) for rewards in ``[0, 1]``.

    - **Forced exploration**: ``since`` steps after the last restart, if ``since mod
      floor(K / gamma) < K`` the agent plays that arm (Algorithm 2's deterministic uniform
      exploration; every arm once per period, the last included).
    - **Otherwise UCB1** on the pulls since the last restart: ``mean_k + sqrt(2 ln(t - tau) /
      n_k)``, ``t - tau = since + 1`` the rounds since the restart, an arm not pulled since the
      restart first, ties to the lowest arm.
    - **Change test** (Algorithm 1, ``CD(w, b)``) on the pulled arm once it has ``w``
      observations since the restart: ``|sum of the newer w/2 - sum of the older w/2| > b``
      (:mod:`agents.change_tests`). A detection is a **global restart**: every arm's statistics
      and window are forgotten and ``tau`` is the next step.

    Parameters
    ----------
    w:
        The window, an even integer (default 150, the tuning of Besson et al. 2022's
        experiments; Cao et al.'s Remark 1 gives ``w`` from the smallest change ``delta``,
        ``(4 / delta^2) (sqrt(ln(2 K T^2)) + sqrt(ln(2 T)))^2``, much larger).
    b:
        The threshold; ``None`` takes Cao et al.'s Theorem 1 value ``sqrt((w / 2) ln(2 K
        T^2))`` for the horizon ``T`` given to ``reset`` (then required).
    gamma:
        The share of forced exploration, in ``[0, 1]``; ``None`` takes ``sqrt(n_changes K (2 b
        + 3 sqrt(w)) / (2 T))`` (Cao et al., the tuning of their experiments; Besson et al.
        2022 use it too), capped at 1. 0: no forced exploration.
    n_changes:
        The number of change points ``Upsilon_T`` assumed by the default ``gamma``.

    ``restarts`` counts each replication's detections. Rewards outside ``[0, 1]`` raise
    ``ValueError`` (at the first such step, before anything is learnt from it).
    """

    name = "m_ucb"

    parameter_constraints = {
        "w": Param("int", low=2, doc="window of the change test (even)"),
        "b": Param(low=0, low_open=True, none=True, doc="threshold of the change test; None: "
                   "sqrt((w/2) ln(2 K T^2))"),  # fmt: skip
        "gamma": Param(low=0, high=1, none=True, doc="share of forced exploration; None: "
                       "sqrt(n_changes K (2 b + 3 sqrt w) / (2 T))"),  # fmt: skip
        "n_changes": Param("int", low=1, doc="number of change points assumed by the defaults"),
    }

    def __init__(self, w: int = 150, b: float | None = None, gamma: float | None = None,
                 n_changes: int = 1) -> None:  # fmt: skip
        self.w = w
        self.b = b
        self.gamma = gamma
        self.n_changes = n_changes

    def setup(self) -> None:
        w = int(self.w)
        if w % 2:
            raise checks.ParameterError(f"w must be even (two halves of w/2), got {w}", "w")
        r, k = self.n_runs, self.n_arms
        if self.b is None or self.gamma is None:
            horizon = self.needed_horizon("M-UCB(b=None or gamma=None) tunes them to it")
        b = (math.sqrt(w / 2 * math.log(2 * k * horizon**2)) if self.b is None
             else float(self.b))  # fmt: skip
        if self.gamma is None:
            gamma = min(1.0, math.sqrt(self.n_changes * k * (2 * b + 3 * math.sqrt(w)) /
                                       (2 * horizon)))  # fmt: skip
        else:
            gamma = float(self.gamma)
        checks.memory(r * k * w, f"n_runs * n_arms * w = {r} * {k} * {w}")
        self._w_b = np.array([b])
        self._gamma = gamma
        self._period = forced_period(k, gamma)
        self.counts = np.zeros((r, k))
        self.sums = np.zeros((r, k))
        self.tau = np.zeros(r, dtype=np.int64)
        self.restarts = np.zeros(r, dtype=np.int64)
        self._window = np.zeros((r, k, w))
        self._halves = np.zeros((r, k, 2))
        self._chosen = np.empty(r, dtype=np.int64)  # work space of play
        self._x = np.empty(r)

    @property
    def threshold(self) -> float:
        """The threshold ``b`` in use."""
        return float(self._w_b[0])

    @property
    def exploration(self) -> float:
        """The share ``gamma`` of forced exploration in use."""
        return self._gamma

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self.counts, self.sums, self.tau, self.t, self._period, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not in_unit_interval(x):
            raise unit_interval_error("M-UCB", x)
        _observe(self.counts, self.sums, self.tau, self._window, self._halves, self._w_b,
                 self.restarts, np.asarray(actions, dtype=np.int64), x, self.t)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = _play(self.counts, self.sums, self.tau, self._window, self._halves, self._w_b,
                     self.restarts, self._period, self.t, rows, actions, rewards, self._chosen,
                     self._x)  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("M-UCB", self._x)

"""GLR-klUCB (Besson, Kaufmann, Maillard & Seznec, JMLR 2022): kl-UCB with the Bernoulli GLR
change test on every arm, local or global restarts, and deterministic forced exploration. Not
private: an anchor of the piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, bernoulli_error, in_bernoulli
from agents.change_tests import forced_arm, forced_period, glr_detect, glr_threshold, xlogx_table
from agents.kl import kl_upper
from agents.klucb import exploration
from dpbandits.core import checks
from dpbandits.core.jit import beats, kernel
from dpbandits.core.params import Param

__all__ = ["GLRKLUCB"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play.
# ``counts``/``sums`` (R, K): each arm's pulls and ones since its last restart; ``tau`` (R, K)
# the step of that restart (0-based, the first step after it); ``prefix`` (R, K, J): the ones
# among the first j * ds observations since the restart; ``table``: i ln i (glr_split);
# ``params`` = (delta, c); ``sizes`` = (period, dn, ds, global restart 0/1).
@kernel
def _arm(counts: Any, sums: Any, tau: Any, r: int, t: int, c: float, period: int) -> int:
    """Replication ``r``'s arm at step ``t``: the forced arm of the schedule, else the highest
    kl-UCB index ``max{q : n_k kl(mean_k, q) <= f(t + 1 - tau_k)}`` with ``f(t) = ln t + c ln
    ln t`` (an arm not pulled since its restart first; ties to the lowest arm)."""
    n_arms = counts.shape[1]
    a = forced_arm(t, period, n_arms)
    if a >= 0:
        return a
    best_a = 0
    best = -math.inf
    for b in range(n_arms):
        n = counts[r, b]
        if n == 0.0:
            v = math.inf
        else:
            v = kl_upper(sums[r, b] / n, exploration(t + 1 - tau[r, b], c) / n)
        if beats(v, best):
            best_a, best = b, v
    return best_a


@kernel
def _restart(counts: Any, sums: Any, tau: Any, r: int, a: int, t: int) -> None:
    counts[r, a] = 0.0
    sums[r, a] = 0.0
    tau[r, a] = t + 1


@kernel
def _record(counts: Any, sums: Any, tau: Any, prefix: Any, table: Any, delta: float,
            sizes: Any, r: int, a: int, x: float, t: int) -> bool:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` at step ``t`` and got ``x`` (0 or 1); every ``dn``-th
    observation since the arm's restart runs the GLR test on them (Besson et al. 2022,
    Algorithm 1) and a detection restarts the arm (local) or every arm (global). Returns
    whether it restarted."""
    dn, ds = sizes[1], sizes[2]
    counts[r, a] += 1.0
    sums[r, a] += x
    n = int(counts[r, a])
    k_n = int(sums[r, a])
    if n % ds == 0:
        prefix[r, a, n // ds] = k_n
    if n % dn != 0 or glr_detect(table, prefix[r, a], n, k_n, ds, glr_threshold(n, delta)) == 0:
        return False
    if sizes[3]:
        for b in range(counts.shape[1]):
            _restart(counts, sums, tau, r, b, t)
    else:
        _restart(counts, sums, tau, r, a, t)
    return True


@kernel
def _choose(counts: Any, sums: Any, tau: Any, t: int, c: float, period: int, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(counts, sums, tau, r, t, c, period)


@kernel
def _observe(counts: Any, sums: Any, tau: Any, prefix: Any, table: Any, delta: float,
             sizes: Any, restarts: Any, actions: Any, x: Any, t: int) -> None:  # fmt: skip
    for r in range(actions.shape[0]):
        if _record(counts, sums, tau, prefix, table, delta, sizes, r, actions[r], x[r], t):
            restarts[r] += 1


@kernel
def _play(counts: Any, sums: Any, tau: Any, prefix: Any, table: Any, delta: float, c: float,
          sizes: Any, restarts: Any, t0: int, rows: Any, actions: Any, rewards: Any,
          chosen: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward other than 0 or 1 (its arms are
    chosen, nothing is learnt from it)."""
    n_runs, n_arms = counts.shape
    period = sizes[0]
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            _choose(counts, sums, tau, t, c, period, chosen)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_bernoulli(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(counts, sums, tau, prefix, table, delta, sizes, restarts, chosen, x, t)
    return rows.shape[0]


class GLRKLUCB(Agent):
    """GLR-klUCB (Besson, Kaufmann, Maillard & Seznec 2022, "Efficient change-point detection
    for tackling piecewise-stationary bandits", JMLR 23(77), Algorithm 1) for Bernoulli rewards.

    - **Forced exploration**: at step ``t`` (1-based), if ``t mod floor(K / alpha)`` is in
      ``{1, .., K}`` the agent plays that arm (every arm once per period, the last included).
    - **Otherwise kl-UCB** (Garivier & Cappé 2011) on each arm's observations since its last
      restart ``tau_k``: ``max{q : n_k kl(mean_k, q) <= f(t - tau_k)}``, ``f(t) = ln t + c ln
      ln t`` (:func:`agents.klucb.exploration`), an arm not pulled since its restart first,
      ties to the lowest arm.
    - **Change test**: the Bernoulli GLR (:mod:`agents.change_tests`) on the ``n``
      observations of the pulled arm since its restart, ``sup_s s kl(mu_1:s, mu_1:n) + (n -
      s) kl(mu_s+1:n, mu_1:n) >= beta(n, delta) = ln(3 n^(3/2) / delta)``, run at every
      ``delta_n``-th observation over the splits ``s = delta_s, 2 delta_s, ..`` (the authors'
      two speed-ups, ``delta_n = delta_s = 10`` in their experiments; 1 and 1: the exact test
      at every observation).
    - **Restart**: ``restart="local"`` forgets the arm that changed (``tau_k = t``, ``n_k =
      0``), ``"global"`` every arm.

    Parameters
    ----------
    restart:
        ``"local"`` (default; the better variant in the authors' experiments) or ``"global"``.
    delta:
        The confidence level of the test; ``None`` takes the authors' tuning ``1 / sqrt(K
        n_changes T)`` (local) or ``1 / sqrt(n_changes T)`` (global) for the horizon ``T``
        given to ``reset`` (then required).
    alpha:
        The share of forced exploration, in ``[0, 1]``; ``None`` takes ``alpha0 sqrt(K
        n_changes ln T / T)`` (local) or ``alpha0 sqrt(n_changes ln T / T)`` (global), capped
        at 1. 0: no forced exploration.
    alpha0:
        The constant of the default ``alpha``; 0.05 in the authors' experiments (the
        regret-bound tuning, ``alpha0 = 1``, explores too much).
    n_changes:
        The number of change points ``Upsilon_T`` assumed by the defaults.
    c:
        The ``c`` of the exploration function; 0 (default) is ``f(t) = ln t``, the authors'
        experiments, 3 is the value of their analysis.
    delta_n, delta_s:
        The speed-ups of the test (above); ``delta_s`` also sets the memory kept per arm:
        ``T / delta_s`` counts.

    ``restarts`` counts each replication's detections. Rewards other than 0 and 1 raise
    ``ValueError`` (at the first such step, before anything is learnt from it): the index and
    the test are Bernoulli ones.
    """

    name = "glr_klucb"
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling.
    cost_hint = 20.0

    parameter_constraints = {
        "restart": Param("str", options=("local", "global"), doc="what a detection forgets"),
        "delta": Param(low=0, high=1, low_open=True, high_open=True, none=True,
                       doc="confidence level of the GLR test; None: 1/sqrt(K n_changes T) "
                       "(local) or 1/sqrt(n_changes T) (global)"),  # fmt: skip
        "alpha": Param(low=0, high=1, none=True, doc="share of forced exploration; None: "
                       "alpha0 sqrt((K) n_changes ln T / T)"),  # fmt: skip
        "alpha0": Param(low=0, low_open=True, doc="constant of the default alpha"),
        "n_changes": Param("int", low=1, doc="number of change points assumed by the defaults"),
        "c": Param(low=0, doc="the c of the exploration function ln t + c ln ln t"),
        "delta_n": Param("int", low=1, doc="test every delta_n-th observation of an arm"),
        "delta_s": Param("int", low=1, doc="test the splits s = delta_s, 2 delta_s, ..."),
    }

    def __init__(self, restart: str = "local", delta: float | None = None,
                 alpha: float | None = None, alpha0: float = 0.05, n_changes: int = 1,
                 c: float = 0.0, delta_n: int = 10, delta_s: int = 10) -> None:  # fmt: skip
        self.restart = restart
        self.delta = delta
        self.alpha = alpha
        self.alpha0 = alpha0
        self.n_changes = n_changes
        self.c = c
        self.delta_n = delta_n
        self.delta_s = delta_s

    def setup(self) -> None:
        r, k = self.n_runs, self.n_arms
        local = self.restart == "local"
        horizon = self.needed_horizon("GLR-klUCB keeps T / delta_s counts per arm")
        factor = k * self.n_changes if local else self.n_changes
        delta = 1.0 / math.sqrt(factor * horizon) if self.delta is None else float(self.delta)
        if self.alpha is None:
            alpha = min(1.0, self.alpha0 * math.sqrt(factor * math.log(horizon) / horizon))
        else:
            alpha = float(self.alpha)
        ds = int(self.delta_s)
        size = horizon // ds + 1
        checks.memory(r * k * size, f"n_runs * n_arms * (T / delta_s) = {r} * {k} * {size}")
        self._delta = delta
        self._alpha = alpha
        self._c = float(self.c)
        self._sizes = np.array([forced_period(k, alpha), int(self.delta_n), ds, 0 if local else 1],
                               dtype=np.int64)  # fmt: skip
        self._table = xlogx_table(horizon)
        self.counts = np.zeros((r, k))
        self.sums = np.zeros((r, k))
        self.tau = np.zeros((r, k), dtype=np.int64)
        self.restarts = np.zeros(r, dtype=np.int64)
        self._prefix = np.zeros((r, k, size))
        self._chosen = np.empty(r, dtype=np.int64)  # work space of play
        self._x = np.empty(r)

    @property
    def confidence(self) -> float:
        """The confidence level ``delta`` in use."""
        return self._delta

    @property
    def exploration(self) -> float:
        """The share ``alpha`` of forced exploration in use."""
        return self._alpha

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self.counts, self.sums, self.tau, self.t, self._c, int(self._sizes[0]), out)
        return out

    def _check_step(self) -> None:
        if self.t >= self._table.size - 1:
            raise ValueError(f"GLR-klUCB was reset for horizon {self._table.size - 1}: step "
                             f"{self.t} is past it")  # fmt: skip

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not in_bernoulli(x):
            raise bernoulli_error("GLR-klUCB", x)
        self._check_step()
        _observe(self.counts, self.sums, self.tau, self._prefix, self._table, self._delta,
                 self._sizes, self.restarts, np.asarray(actions, dtype=np.int64), x,
                 self.t)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        if self.t + rows.shape[0] > self._table.size - 1:
            raise ValueError(f"GLR-klUCB was reset for horizon {self._table.size - 1}: steps "
                             f"{self.t} .. {self.t + rows.shape[0] - 1} go past it")  # fmt: skip
        done = _play(self.counts, self.sums, self.tau, self._prefix, self._table, self._delta,
                     self._c, self._sizes, self.restarts, self.t, rows, actions, rewards,
                     self._chosen, self._x)  # fmt: skip
        self.played(done)
        if done < rows.shape[0]:
            raise bernoulli_error("GLR-klUCB", self._x)

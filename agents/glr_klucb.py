"""GLR-klUCB (Besson, Kaufmann, Maillard & Seznec, JMLR 2022): kl-UCB with the Bernoulli GLR
change test on every arm, local or global restarts, and deterministic forced exploration. Not
private: an anchor of the piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.anchors import ShiftAnchor
from agents.change_tests import forced_arm, forced_period, glr_detect, glr_threshold, xlogx_table
from agents.kl import kl_upper_logit, neg_entropy
from agents.klucb import exploration
from agents.skeleton import fields
from dpbandits.core import checks
from dpbandits.core.jit import beats, inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["GLRKLUCB"]


# -- the compiled step, on the skeleton (agents.skeleton, docs/agents.md). Per (replication,
# arm): the pulls and ones since the arm's last restart, the step ``tau`` of that restart
# (0-based, the first step after it), -H of the mean (agents.kl), the restarts it triggered,
# then the counts of ones among the first j * ds observations since the restart, j = 0 ..
# T / ds (a tail of ``arms`` past the ARM fields). ``runs[r]`` is the table i ln i, i = 0 ..
# T, of agents.change_tests.glr_split: the same for every replication, so ``runs`` is a
# read-only view of one table (stride 0 across replications), T + 1 floats for any R.
ARM = fields("sum", "count", "tau", "neg_h", "restarts")
PAR = fields("delta", "c", "period", "dn", "ds", "global_restart")
PREFIX = len(ARM)  # the first slot of the counts of ones in arms[r, a, :]


@kernel
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """Replication ``r``'s arm at step ``t``: the forced arm of the schedule (Besson et al.
    2022, Algorithm 1), else the highest kl-UCB index ``max{q : n_k kl(mean_k, q) <= f(t + 1 -
    tau_k)}``, ``f(t) = ln t + c ln ln t``, compared as log-odds (an arm not pulled since its
    restart first; ties to the lowest arm)."""
    n_arms = arms.shape[1]
    a = forced_arm(t, int(par[PAR.period]), n_arms)
    if a >= 0:
        return a
    for b in range(n_arms):  # an arm not pulled since its restart: index +inf, above any q
        if arms[r, b, ARM.count] == 0.0:
            return b
    best_a = 0
    best = -math.inf
    for b in range(n_arms):
        n = arms[r, b, ARM.count]
        level = exploration(t + 1 - int(arms[r, b, ARM.tau]), par[PAR.c]) / n
        # from a cold start: the index is a function of (mean, level) only, so equal (mean,
        # level) give equal indices and the tie goes to the lowest arm; a mean of 1 gives the
        # index 1, +inf as a log-odds
        v = kl_upper_logit(arms[r, b, ARM.sum] / n, arms[r, b, ARM.neg_h], level, math.nan)
        if beats(v, best):
            best_a, best = b, v
    return best_a


@inline_kernel
def _restart(arms: Any, r: int, a: int, t: int) -> None:
    arms[r, a, ARM.sum] = 0.0
    arms[r, a, ARM.count] = 0.0
    arms[r, a, ARM.tau] = t + 1
    arms[r, a, ARM.neg_h] = 0.0


@kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
           bits: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` at step ``t`` and got ``x`` (0 or 1); every ``dn``-th
    observation since the arm's restart runs the GLR test on them (Besson et al. 2022,
    Algorithm 1) and a detection restarts the arm (local) or every arm (global)."""
    dn, ds = int(par[PAR.dn]), int(par[PAR.ds])
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    n = int(arms[r, a, ARM.count])
    k_n = int(arms[r, a, ARM.sum])
    arms[r, a, ARM.neg_h] = neg_entropy(k_n / n)
    if n % ds == 0:
        arms[r, a, PREFIX + n // ds] = k_n
    if n % dn != 0:
        return
    threshold = glr_threshold(n, par[PAR.delta])
    if glr_detect(runs[r], arms[r, a, PREFIX:], n, k_n, ds, threshold) == 0:
        return
    arms[r, a, ARM.restarts] += 1.0
    if par[PAR.global_restart] != 0.0:
        for b in range(arms.shape[1]):
            _restart(arms, r, b, t)
    else:
        _restart(arms, r, a, t)


class GLRKLUCB(ShiftAnchor):
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

    ``restarts`` counts each replication's detections; ``stats.counts`` and ``stats.sums`` are
    the pulls and reward sums since each arm's last restart. Rewards other than 0 and 1 raise
    ``ValueError`` (at the first such step, before anything is learnt from it): the index and
    the test are Bernoulli ones. On the play skeleton (:mod:`agents.skeleton`): the forced arm
    and the kl-UCB argmax are the ``arm_kernel``, the test and the restarts the
    ``learn_kernel``.
    """

    name = "glr_klucb"
    algorithm = "GLR-klUCB"
    traits = AgentTraits(rewards="bernoulli", compiled=True, needs_horizon=True)
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling.
    cost_hint = 20.0
    ARM, PAR = ARM, PAR
    arm_kernel, learn_kernel = _arm, _learn

    parameter_constraints = {
        "restart": Param("str", options=("local", "global"), doc="what a detection forgets"),
        "delta": Param(low=0, high=1, low_open=True, high_open=True, none=True,
                       doc="confidence level of the GLR test; None: 1/sqrt(K n_changes T) "
                       "(local) or 1/sqrt(n_changes T) (global)"),  # fmt: skip
        "alpha": Param(low=0, high=1, none=True, doc="share of forced exploration; None: "
                       "alpha0 sqrt((K) n_changes ln T / T)"),  # fmt: skip
        "alpha0": Param(low=0, low_open=True, doc="constant of the default alpha"),
        **ShiftAnchor.parameter_constraints,  # n_changes
        "c": Param(low=0, doc="the c of the exploration function ln t + c ln ln t"),
        "delta_n": Param("int", low=1, doc="test every delta_n-th observation of an arm"),
        "delta_s": Param("int", low=1, doc="test the splits s = delta_s, 2 delta_s, ..."),
    }

    # the parameters, stored as given (keep_parameters)
    restart: str
    delta: float | None
    alpha: float | None
    alpha0: float
    c: float
    delta_n: int
    delta_s: int

    def __init__(self, restart: str = "local", delta: float | None = None,
                 alpha: float | None = None, alpha0: float = 0.05, n_changes: int = 1,
                 c: float = 0.0, delta_n: int = 10, delta_s: int = 10) -> None:  # fmt: skip
        self.keep_parameters(locals())

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
        checks.memory(r * k * (size + PREFIX),
                      f"n_runs * n_arms * (T / delta_s) = {r} * {k} * {size}")  # fmt: skip
        self.tuned(alpha, {"delta": delta, "c": float(self.c),
                           "period": float(forced_period(k, alpha)), "dn": float(self.delta_n),
                           "ds": float(ds), "global_restart": 0.0 if local else 1.0})  # fmt: skip
        self.arms = np.zeros((r, k, PREFIX + size))  # the ARM fields, then the counts of ones
        self._table = xlogx_table(horizon)
        self.runs = np.broadcast_to(self._table, (r, horizon + 1))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("runs", None)  # a view of _table: rebuilt, not copied R times
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_table" in state:
            self.runs = np.broadcast_to(self._table, (self.n_runs, self._table.size))

    @property
    def confidence(self) -> float:
        """The confidence level ``delta`` in use."""
        return self.par[PAR.delta]

    @property
    def restarts(self) -> NDArray[np.int64]:
        """The ``(R,)`` numbers of detections (restarts) so far (GLR-klUCB's local restarts
        are counted per arm)."""
        return self.arm_field("restarts").sum(axis=1).astype(np.int64)

    @property
    def tau(self) -> NDArray[np.int64]:
        """The ``(R, K)`` step of each arm's last restart (0: none yet)."""
        return self.arm_field("tau").astype(np.int64)

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        if self.t >= self._table.size - 1:
            raise ValueError(f"GLR-klUCB was reset for horizon {self._table.size - 1}: step "
                             f"{self.t} is past it")  # fmt: skip
        super().observe(actions, rewards)

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        if self.t + rows.shape[0] > self._table.size - 1:
            raise ValueError(f"GLR-klUCB was reset for horizon {self._table.size - 1}: steps "
                             f"{self.t} .. {self.t + rows.shape[0] - 1} go past it")  # fmt: skip
        super().play(rows, actions, rewards)

"""M-UCB (Cao, Wen, Kveton & Xie, AISTATS 2019): UCB1 with a window change test on every arm,
a global restart when it fires, and deterministic forced exploration. Not private: an anchor of
the piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.anchors import ShiftAnchor
from agents.change_tests import forced_arm, forced_period, window_alarm, window_push
from agents.skeleton import fields
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.core.params import Param

__all__ = ["MUCB"]


# -- the compiled step, on the skeleton (agents.skeleton, docs/agents.md). Per (replication,
# arm): the pulls and reward sum since the replication's last restart and the two half sums of
# the window test, followed by the window itself (w slots, a tail of ``arms`` past the ARM
# fields: agents.change_tests.window_push). Per replication: the step ``tau`` of the last
# restart (0-based, the first step after it), the next step ``now`` (written by every learn:
# the forced-exploration schedule counts from the restart) and the number of restarts.
ARM = fields("sum", "count", "older", "newer")
RUN = fields("tau", "now", "restarts")
PAR = fields("b", "w", "period")
WINDOW = len(ARM)  # the first slot of the window in arms[r, a, :]


@inline_kernel
def _forced(arms: Any, runs: Any, par: Any, r: int) -> int:
    """The arm of the forced-exploration schedule ``since = t - tau`` steps after the
    replication's last restart (Cao et al. 2019, Algorithm 2), or -1."""
    since = int(runs[r, RUN.now] - runs[r, RUN.tau])
    return forced_arm(since, int(par[PAR.period]), arms.shape[1])


@inline_kernel
def _index(arms: Any, runs: Any, par: Any, r: int, a: int, f: float, bits: Any) -> float:
    """UCB1 on the pulls since the restart: ``mean + sqrt(2 ln(t - tau) / n)`` in the paper's
    1-based rounds (``t - tau = since + 1``); ``+inf`` for an arm not pulled since."""
    n = arms[r, a, ARM.count]
    if n == 0.0:
        return math.inf
    log_t = math.log(runs[r, RUN.now] - runs[r, RUN.tau] + 1.0)
    return arms[r, a, ARM.sum] / n + math.sqrt(2.0 * log_t / n)


@kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
           bits: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` at step ``t`` and got ``x``; a detection of the
    window test (Cao et al. 2019, Algorithm 1) restarts every arm (Algorithm 2: ``tau = t``,
    ``n_k = 0`` for all ``k``)."""
    runs[r, RUN.now] = t + 1
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    n = int(arms[r, a, ARM.count])
    w = int(par[PAR.w])
    halves = arms[r, a, ARM.older : ARM.newer + 1]
    window_push(arms[r, a, WINDOW : WINDOW + w], halves, n, x)
    if window_alarm(halves, n, w, par[PAR.b]):
        for k in range(arms.shape[1]):
            for field in range(WINDOW):
                arms[r, k, field] = 0.0
        runs[r, RUN.tau] = t + 1
        runs[r, RUN.restarts] += 1.0


class MUCB(ShiftAnchor):
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

    ``restarts`` counts each replication's detections; ``stats.counts`` and ``stats.sums`` are
    the pulls and reward sums since its last restart. Rewards outside ``[0, 1]`` raise
    ``ValueError`` (at the first such step, before anything is learnt from it). On the play
    skeleton (:mod:`agents.skeleton`): UCB1 is the ``index_kernel``, the forced arm the
    ``held_kernel``, the window test the ``learn_kernel``.
    """

    name = "m_ucb"
    algorithm = "M-UCB"
    ARM, RUN, PAR = ARM, RUN, PAR
    index_kernel, held_kernel, learn_kernel = _index, _forced, _learn

    parameter_constraints = {
        "w": Param("int", low=2, doc="window of the change test (even)"),
        "b": Param(low=0, low_open=True, none=True,
                   doc="threshold of the change test; None: sqrt((w/2) ln(2 K T^2))"),
        "gamma": Param(low=0, high=1, none=True, doc="share of forced exploration; None: "
                       "sqrt(n_changes K (2 b + 3 sqrt w) / (2 T))"),
        **ShiftAnchor.parameter_constraints,  # n_changes
    }  # fmt: skip

    # the parameters, stored as given (keep_parameters)
    w: int
    b: float | None
    gamma: float | None

    def __init__(self, w: int = 150, b: float | None = None, gamma: float | None = None,
                 n_changes: int = 1) -> None:  # fmt: skip
        self.keep_parameters(locals())

    def setup(self) -> None:
        w = int(self.w)
        if w % 2:
            raise checks.ParameterError(f"w must be even (two halves of w/2), got {w}", "w")
        r, k = self.n_runs, self.n_arms
        horizon = 0
        if self.b is None or self.gamma is None:
            horizon = self.needed_horizon("M-UCB(b=None or gamma=None) tunes them to it")
        b = (math.sqrt(w / 2 * math.log(2 * k * horizon**2)) if self.b is None
             else float(self.b))  # fmt: skip
        if self.gamma is None:
            gamma = min(1.0, math.sqrt(self.n_changes * k * (2 * b + 3 * math.sqrt(w)) /
                                       (2 * horizon)))  # fmt: skip
        else:
            gamma = float(self.gamma)
        checks.memory(r * k * (w + WINDOW), f"n_runs * n_arms * w = {r} * {k} * {w}")
        self.tuned(gamma, {"b": b, "w": float(w), "period": float(forced_period(k, gamma))})
        self.arms = np.zeros((r, k, WINDOW + w))  # the ARM fields, then the window

    @property
    def threshold(self) -> float:
        """The threshold ``b`` in use."""
        return self.par[PAR.b]

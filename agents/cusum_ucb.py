"""CUSUM-UCB (Liu, Lee & Shroff, AAAI 2018): UCB with a two-sided CUSUM test on every arm, a
restart of the arm that changed, and uniform random exploration. Not private: an anchor of the
piecewise-stationary setting (docs/shift-anchors.md)."""

from __future__ import annotations

import math
from typing import Any

from agents.anchors import ShiftAnchor
from agents.change_tests import cusum_step
from agents.skeleton import fields
from dpbandits.core import checks
from dpbandits.core.jit import beats, inline_kernel
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param

__all__ = ["CUSUMUCB"]

# -- the compiled step, on the skeleton (agents.skeleton, docs/agents.md). Per (replication,
# arm): pulls and reward sum since the arm's restart, the mean of its first M observations, the
# two walks of the CUSUM (agents.change_tests.cusum_step); per replication, the number of
# restarts. The uniform u of a replication's step decides its exploration: u < alpha explores
# arm floor(u / alpha * K) (given u < alpha, u / alpha is uniform: one draw per step).
ARM = fields("sum", "count", "u0", "g_plus", "g_minus")
RUN = fields("restarts")
PAR = fields("alpha", "xi", "drift", "h", "m")


@inline_kernel
def _arm(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """Replication ``r``'s arm: with probability ``alpha`` a uniform arm, else the highest UCB
    index ``mean_k + sqrt(xi ln(n_t) / n_k)``, ``n_t`` the sum of the arms' pulls since their
    restarts (an arm not pulled since its restart first; ties to the lowest arm)."""
    n_arms = arms.shape[1]
    u = next_double(bits)
    alpha = par[PAR.alpha]
    if u < alpha:
        return min(int(u / alpha * n_arms), n_arms - 1)
    n_t = 0.0
    for b in range(n_arms):
        n_t += arms[r, b, ARM.count]
    log_n = math.log(max(n_t, 1.0))
    best_a = 0
    best = -math.inf
    for b in range(n_arms):
        n = arms[r, b, ARM.count]
        v = math.inf if n == 0.0 else arms[r, b, ARM.sum] / n + math.sqrt(par[PAR.xi] * log_n / n)
        if beats(v, best):
            best_a, best = b, v
    return best_a


@inline_kernel
def _learn(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float,
           bits: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` and got ``x``: the first ``m`` observations since the
    arm's restart give ``u0``, each later one a CUSUM step (Liu et al. 2018, Algorithm 2);
    ``g+ >= h`` or ``g- >= h`` restarts the arm (Algorithm 1)."""
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.sum] += x
    n = arms[r, a, ARM.count]
    m = par[PAR.m]
    if n <= m:
        if n == m:
            arms[r, a, ARM.u0] = arms[r, a, ARM.sum] / n
        return
    gp, gm = cusum_step(arms[r, a, ARM.g_plus], arms[r, a, ARM.g_minus], x, arms[r, a, ARM.u0],
                        par[PAR.drift])  # fmt: skip
    if gp >= par[PAR.h] or gm >= par[PAR.h]:
        for field in range(len(ARM)):
            arms[r, a, field] = 0.0
        runs[r, RUN.restarts] += 1.0
        return
    arms[r, a, ARM.g_plus] = gp
    arms[r, a, ARM.g_minus] = gm


class CUSUMUCB(ShiftAnchor):
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

    ``restarts`` counts each replication's detections; ``stats.counts`` and ``stats.sums`` are
    the pulls and reward sums since each arm's last restart. Rewards outside ``[0, 1]`` raise
    ``ValueError`` (at the first such step, before anything is learnt from it). On the play
    skeleton (:mod:`agents.skeleton`): the exploration draw and the UCB argmax are the
    ``arm_kernel`` (it draws from the Generator given to ``reset``), the test the
    ``learn_kernel``.
    """

    name = "cusum_ucb"
    algorithm = "CUSUM-UCB"
    ARM, RUN, PAR = ARM, RUN, PAR
    arm_kernel, learn_kernel = _arm, _learn

    parameter_constraints = {
        "m": Param("int", low=1, doc="observations estimating the mean before a change"),
        "drift": Param(low=0, doc="CUSUM drift epsilon: the smallest change looked for"),
        "h": Param(low=0, low_open=True, none=True, doc="CUSUM threshold; None: ln(T/n_changes)"),
        "alpha": Param(low=0, high=1, none=True, doc="probability of uniform exploration; "
                       "None: sqrt(n_changes ln(T/n_changes) / T)"),  # fmt: skip
        **ShiftAnchor.parameter_constraints,  # n_changes
        "xi": Param(low=0, low_open=True, doc="constant of the UCB index sqrt(xi ln n / n_k)"),
    }

    # the parameters, stored as given (keep_parameters)
    m: int
    drift: float
    h: float | None
    alpha: float | None
    xi: float

    def __init__(self, m: int = 150, drift: float = 0.1, h: float | None = None,
                 alpha: float | None = None, n_changes: int = 1,
                 xi: float = 2.0) -> None:  # fmt: skip
        self.keep_parameters(locals())

    def setup(self) -> None:
        ratio = 1.0
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
        self.tuned(alpha, {"alpha": alpha, "xi": float(self.xi), "drift": float(self.drift),
                           "h": h, "m": float(self.m)})  # fmt: skip

    @property
    def threshold(self) -> float:
        """The threshold ``h`` in use."""
        return self.par[PAR.h]

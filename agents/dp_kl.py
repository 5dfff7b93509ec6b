"""DP-KLUCB and DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025): eps-global-DP versions of
KL-UCB and IMED for Bernoulli bandits, on arm-dependent geometric phases with one Laplace
release per phase and the divergence ``d_eps`` (:mod:`agents.kl`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.base import variant
from agents.episodes import LaplaceBatchAgent
from agents.kl import d_eps, d_eps_upper_logit, kink_level, kl_with, neg_entropy
from agents.skeleton import fields
from dpbandits.core.jit import beats, inline_kernel, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace
from dpbandits.core.traits import AgentTraits

__all__ = ["DPIMED", "DPKLUCB"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play. The
# state is two arrays, so that the helpers below take two arrays (numba counts the references of
# every array passed to a call: a dozen arrays per call cost more than the step's work). Per
# (replication, arm), ``arms[r, a, :]``: the pull count, the rewards of the current phase, the
# count that ends it, the private sum ``S~`` of all earlier phases (their rewards and one Laplace
# variable each) over ``STAT_N`` rewards, the private mean ``S~ / STAT_N``, its clip to [0, 1],
# that clip's -H, the level of ``d_eps``'s kink (agents.kl), DP-KLUCB's last index of the arm
# (a log-odds, the warm start of the next) and the number of releases. Per replication,
# ``runs[r, :]`` (integers stored exactly as floats): DP-IMED's choice and whether it must be
# recomputed (its index does not depend on t: only after a release); DP-KLUCB's last argmax
# ``CAND``, whether its index ``U`` (and ``ln U``, ``ln(1 - U)``, ``ln(1 - U (1 - e^-eps))``,
# and its log-odds ``Y``, by which indices are compared: it keeps apart indices within 1e-16 of
# 1) is still a lower bound of its index now (no release since: the index grows with t), and
# those five numbers. The Laplace draws are made in the order of the step protocol.
ARM = fields(
    "count",
    "phase_sum",
    "phase_end",
    "private_sum",
    "stat_n",
    "private",
    "clipped",
    "neg_h",
    "kink",
    "root",
    "releases",
)
RUN = fields("choice", "stale", "cand", "valid", "y", "u", "log_u", "log_1mu", "closed")
PAR = fields("eps", "scale", "alpha", "spread")


@kernel
def _phase_end(alpha: float, n: float) -> float:
    """The pull count ``ceil(alpha n)`` that ends the phase after one ending at ``n`` pulls
    (> n for alpha > 1)."""
    return float(math.ceil(alpha * n))


@kernel
def _d_eps_at(x: float, neg_h: float, kink: float, log_u: float, log_1mu: float,
              closed: float, eps: float) -> float:  # fmt: skip
    """``d_eps(x, u)`` for ``x < u`` from quantities of ``u`` shared by all arms (``ln u``,
    ``ln(1 - u)``, ``ln(1 - u (1 - e^-eps))``): ``kl(x, u)`` up to the kink of ``x`` -- where
    ``kl(x, .)`` reaches ``kink = kink_level(x, eps)`` -- and ``-eps x - ln(1 - u (1 -
    e^-eps))`` above it (agents.kl)."""
    k = kl_with(x, neg_h, log_u, log_1mu)
    return k if k <= kink else -eps * x - closed


@kernel
def _remember(runs: Any, r: int, a: int, y: float, spread: float) -> None:
    """Keep arm ``a``'s index (log-odds ``y``) as replication ``r``'s candidate."""
    e = math.exp(-abs(y))
    tail = math.log1p(e)
    runs[r, RUN.cand] = a
    runs[r, RUN.valid] = 1.0
    runs[r, RUN.y] = y
    runs[r, RUN.u] = 1.0 / (1.0 + e) if y >= 0.0 else e / (1.0 + e)
    runs[r, RUN.log_u] = -(max(-y, 0.0) + tail)
    runs[r, RUN.log_1mu] = -(max(y, 0.0) + tail)
    runs[r, RUN.closed] = math.log1p(-runs[r, RUN.u] * spread)


@kernel
def _beaten(arms: Any, runs: Any, r: int, b: int, f: float, eps: float) -> bool:
    """Whether some arm may beat the candidate ``b`` of replication ``r``, whose remembered index
    ``U`` is a lower bound of its index now: an arm a cannot when ``d_eps(x_a, U) > f / n_a``
    (then a's index is below ``U``), nor an arm with the same statistics and a larger number."""
    u = runs[r, RUN.u]
    x_b, n_b = arms[r, b, ARM.clipped], arms[r, b, ARM.stat_n]
    for a in range(arms.shape[1]):
        if a == b:
            continue
        x, n = arms[r, a, ARM.clipped], arms[r, a, ARM.stat_n]
        if x == x_b and n == n_b:
            if a < b:
                return True
            continue
        if not x < u:
            return True
        d = _d_eps_at(x, arms[r, a, ARM.neg_h], arms[r, a, ARM.kink], runs[r, RUN.log_u],
                      runs[r, RUN.log_1mu], runs[r, RUN.closed], eps)  # fmt: skip
        if not d > f / n:
            return True
    return False


@kernel
def _klucb_arm(arms: Any, runs: Any, r: int, f: float, eps: float, spread: float) -> int:
    """The arm of highest DP-KLUCB index ``max{q : d_eps(x_a, q) <= f / n_a}`` of replication
    ``r`` (ties: the lowest arm). Between releases the statistics are fixed and every index
    grows with ``t``: the last argmax stays the argmax while no arm passes the test of
    :func:`_beaten`, which needs no index computed. Otherwise a scan from the last argmax b:
    b's index is computed in full (warm started from its last root), another arm a beats it
    exactly when ``d_eps(x_a, u_b) < f / n_a`` (``d_eps(x_a, .)`` increases on ``[x_a, 1]``),
    and only then is a's index computed."""
    b = np.int64(runs[r, RUN.cand])
    if runs[r, RUN.valid] != 0.0 and not _beaten(arms, runs, r, b, f, eps):
        return b
    best = b
    x_best = arms[r, b, ARM.clipped]
    level_best = f / arms[r, b, ARM.stat_n]
    y = d_eps_upper_logit(x_best, arms[r, b, ARM.neg_h], arms[r, b, ARM.kink], level_best, eps,
                          arms[r, b, ARM.root])  # fmt: skip
    arms[r, b, ARM.root] = y
    _remember(runs, r, b, y, spread)
    for a in range(arms.shape[1]):
        if a == best:
            continue
        x = arms[r, a, ARM.clipped]
        level = f / arms[r, a, ARM.stat_n]
        if x == x_best and level == level_best:  # the same index: the lowest arm
            if a < best:
                best = a
                runs[r, RUN.cand] = a
            continue
        if x < runs[r, RUN.u]:
            d = _d_eps_at(x, arms[r, a, ARM.neg_h], arms[r, a, ARM.kink], runs[r, RUN.log_u],
                          runs[r, RUN.log_1mu], runs[r, RUN.closed], eps)  # fmt: skip
            if d > level:
                continue
        ya = d_eps_upper_logit(x, arms[r, a, ARM.neg_h], arms[r, a, ARM.kink], level, eps,
                               arms[r, a, ARM.root])  # fmt: skip
        arms[r, a, ARM.root] = ya
        if beats(ya, runs[r, RUN.y]) or (ya == runs[r, RUN.y] and a < best):
            best, x_best, level_best = a, x, level
            _remember(runs, r, a, ya, spread)
    return best


@kernel
def _imed_arm(arms: Any, r: int, eps: float) -> int:
    """The arm of smallest DP-IMED index ``n_a d_eps(x_a, x*) + ln n_a`` of replication ``r``,
    ``x* = max_a x_a`` (ties: the lowest arm)."""
    n_arms = arms.shape[1]
    top = arms[r, 0, ARM.clipped]
    for a in range(1, n_arms):
        top = max(top, arms[r, a, ARM.clipped])
    best_a = 0
    best = math.inf
    for a in range(n_arms):
        n = arms[r, a, ARM.stat_n]
        v = n * d_eps(arms[r, a, ARM.clipped], top, eps) + math.log(n)
        if v < best:
            best_a, best = a, v
    return best_a


@inline_kernel
def _round(par: Any, t: int) -> float:
    """``f = ln t`` of the 1-based round."""
    return math.log(t + 1.0)


@kernel
def _klucb(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """DP-KLUCB's arm of replication ``r`` in a round with ``f = ln t``."""
    return _klucb_arm(arms, runs, r, f, par[PAR.eps], par[PAR.spread])


@kernel
def _imed(arms: Any, runs: Any, par: Any, r: int, t: int, f: float, bits: Any) -> int:
    """DP-IMED's arm of replication ``r``: its index does not depend on ``t``, so it is
    recomputed only after a release."""
    eps = par[PAR.eps]
    if runs[r, RUN.stale] != 0.0:
        runs[r, RUN.choice] = _imed_arm(arms, r, eps)
        runs[r, RUN.stale] = 0.0
    return np.int64(runs[r, RUN.choice])


@inline_kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """Replication ``r`` pulled arm ``a`` and got ``x``. When the pull ends the arm's phase, the
    phase's sum and one ``Lap(1 / eps)`` variable join the arm's private sum, which is
    released."""
    alpha, eps, scale = par[PAR.alpha], par[PAR.eps], par[PAR.scale]
    arms[r, a, ARM.count] += 1.0
    arms[r, a, ARM.phase_sum] += x
    if arms[r, a, ARM.count] == arms[r, a, ARM.phase_end]:
        arms[r, a, ARM.private_sum] += arms[r, a, ARM.phase_sum] + standard_laplace(bits) * scale
        arms[r, a, ARM.phase_sum] = 0.0
        n = arms[r, a, ARM.count]
        arms[r, a, ARM.stat_n] = n
        mean = arms[r, a, ARM.private_sum] / n
        arms[r, a, ARM.private] = mean
        clipped = min(max(mean, 0.0), 1.0)
        arms[r, a, ARM.clipped] = clipped
        arms[r, a, ARM.neg_h] = neg_entropy(clipped)
        arms[r, a, ARM.kink] = kink_level(clipped, eps)
        arms[r, a, ARM.phase_end] = _phase_end(alpha, n)
        arms[r, a, ARM.releases] += 1.0
        runs[r, RUN.stale] = 1.0
        runs[r, RUN.valid] = 0.0


@variant(alpha=2.0)
class _DPKL(LaplaceBatchAgent):
    """The blueprint of Azize et al. (2025) with the index of ``kind`` (the classes below)."""

    batches = "phase"
    citation = "Azize et al. 2025, Proposition 2"
    traits = AgentTraits(rewards="bernoulli", private=True, compiled=True)
    ARM, RUN, PAR = ARM, RUN, PAR
    # the initial pull is phase 0, of one reward; no warm start of the index yet
    ARM_START = {"phase_end": 1.0, "stat_n": 1.0, "root": math.nan}
    RUN_START = {"stale": 1.0}
    round_kernel, learn_kernel = _round, _pull
    cost_hint = 6.0
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "alpha": Param(low=1, low_open=True, doc="growth ratio of the phases"),
    }
    alpha: float  # the constructor's (variant), read by the kernels as PAR.alpha

    def parameters(self) -> dict[str, float]:
        values = super().parameters()
        return {**values, "spread": -math.expm1(-values["eps"])}



_COMMON_DOC = """
    Phases (the blueprint of Azize et al. 2025): each arm's pulls are cut into phases that end
    when its pull count reaches ``n_0 = 1`` (the initial pull), ``n_1 = ceil(alpha n_0)``,
    ``n_{m+1} = ceil(alpha n_m)``, ... When a phase ends, its rewards' sum and one
    ``Lap(1 / eps)`` variable are added to the arm's private sum ``S~_a`` (past rewards are
    kept, not forgotten), and ``mu~_a = S~_a / n_a`` is released, ``n_a`` the arm's pull count
    at the end of the phase; ``x_a`` is ``mu~_a`` clipped to ``[0, 1]``. Every reward is in
    the sum of exactly one phase, so the whole run is eps-DP (Proposition 2);
    ``privacy_report`` states it. ``d_eps(x, y) = inf_{z in [x, y]} eps (z - x) + kl(z, y)``
    (:func:`agents.kl.d_eps`), which is ``kl`` for large ``eps`` and about ``eps (y - x)``
    for small ``eps``.

    Parameters
    ----------
    epsilon:
        The privacy budget of the whole run (> 0).
    alpha:
        The phases' growth ratio, > 1. The regret bound (Theorem 2) is ``alpha`` times the
        lower bound, so the theory favours ``alpha`` close to 1; 2 here is our choice (the
        paper's experimental value was not available to us). Every phase adds one Laplace
        variable to the arm's sum, so an ``alpha`` close to 1 makes the early sums noisy
        (about ``ln(n) / ln(alpha)`` variables in a sum of ``n`` rewards, and one per reward
        while ``alpha n < n + 1``), and a best arm that looks bad early is then left for a long
        time: on a Bernoulli bandit with means (0.75, 0.625, 0.5, 0.375, 0.25), ``T = 50 000``
        and ``eps = 0.5``, 100 runs, DP-KLUCB's regret was 367 +- 106 at ``alpha = 1.2``,
        144 +- 6 at 1.5, 162 +- 4 at 2 and 202 +- 6 at 3 (worst runs 6385, 623, 320, 557);
        DP-IMED's 789 +- 192, 258 +- 87, 303 +- 97 and 139 +- 10.

    What comes from where. The paper's full text was not available to us: the indices, the
    divergence ``d_eps``, the arm-dependent geometric phases of ratio ``alpha > 1`` and the
    private sums that keep past rewards and gain one Laplace variable per phase are as its
    abstract and a published summary of it state them (Theorem and Proposition numbers from
    there too). Our choices for the rest (tested: the step protocol against a plain
    implementation of this reading, and the limit eps -> inf, alpha -> 1, which is KL-UCB,
    resp. IMED): the action is chosen at every step from the statistics released so far (an
    arm's current phase is not used until it ends); the phase ends are ``ceil(alpha n_m)`` as
    above; ``t`` in ``ln t`` is the 1-based round being played; ties go to the lowest arm
    (indices are compared by their log-odds). The algorithm is defined for Bernoulli bandits: a
    reward other than 0 or 1 raises ``ValueError`` at the first such step, before anything is
    learnt from it (its ``traits`` say ``rewards="bernoulli"``, for a caller that checks the
    environment before a run). Anytime: no horizon needed.
"""


class DPKLUCB(_DPKL):
    __doc__ = (
        """DP-KLUCB (Azize, Wu, Honda, Orabona, Ito & Basu 2025, "Optimal Regret of Bandits
    under Differential Privacy", arXiv 2505.05613, the DP-KLUCB index): eps-global DP,
    asymptotically optimal for Bernoulli bandits up to the factor ``alpha`` (Theorem 2).

    After every arm is pulled once, round ``t`` plays the arm of largest index

        ``max{q in [x_a, 1] : d_eps(x_a, q) <= ln(t) / n_a}``

    (:func:`agents.kl.d_eps_upper`: the KL-UCB index below a kink, a closed form above it).
"""
        + _COMMON_DOC
    )

    name = "dp_klucb"
    algorithm = "DP-KLUCB"
    arm_kernel = _klucb


class DPIMED(_DPKL):
    __doc__ = (
        """DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025, "Optimal Regret of Bandits
    under Differential Privacy", arXiv 2505.05613, the DP-IMED index): eps-global DP,
    asymptotically optimal for Bernoulli bandits up to the factor ``alpha`` (Theorem 2); the
    private version of IMED (Honda & Takemura 2015).

    After every arm is pulled once, each round plays the arm of smallest index

        ``I_a = n_a d_eps(x_a, x*) + ln(n_a)``,  ``x* = max_b x_b``.

    The index depends on the released statistics only, so the choice changes only after a
    release.
"""
        + _COMMON_DOC
    )

    name = "dp_imed"
    algorithm = "DP-IMED"
    arm_kernel = _imed

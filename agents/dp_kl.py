"""DP-KLUCB and DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025): eps-global-DP versions of
KL-UCB and IMED for Bernoulli bandits, on arm-dependent geometric phases with one Laplace
release per phase and the divergence ``d_eps`` (:mod:`agents.kl`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import in_bernoulli
from agents.episodes import LaplaceBatchAgent
from agents.kl import d_eps, d_eps_upper_logit, kink_level, kl_with, neg_entropy
from dpbandits.core.jit import beats, generator_address, generator_at, kernel
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace

__all__ = ["DPIMED", "DPKLUCB"]

_KLUCB, _IMED = 0, 1


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
(COUNT, PHASE_SUM, PHASE_END, PRIVATE_SUM, STAT_N, PRIVATE, CLIPPED, NEG_H, KINK, ROOT,
 RELEASES) = range(11)  # fmt: skip
N_ARM_FIELDS = 11
CHOICE, STALE, CAND, VALID, Y, U, LOG_U, LOG_1MU, CLOSED = range(9)
N_RUN_FIELDS = 9


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
    runs[r, CAND] = a
    runs[r, VALID] = 1.0
    runs[r, Y] = y
    runs[r, U] = 1.0 / (1.0 + e) if y >= 0.0 else e / (1.0 + e)
    runs[r, LOG_U] = -(max(-y, 0.0) + tail)
    runs[r, LOG_1MU] = -(max(y, 0.0) + tail)
    runs[r, CLOSED] = math.log1p(-runs[r, U] * spread)


@kernel
def _beaten(arms: Any, runs: Any, r: int, b: int, f: float, eps: float) -> bool:
    """Whether some arm may beat the candidate ``b`` of replication ``r``, whose remembered index
    ``U`` is a lower bound of its index now: an arm a cannot when ``d_eps(x_a, U) > f / n_a``
    (then a's index is below ``U``), nor an arm with the same statistics and a larger number."""
    u = runs[r, U]
    x_b, n_b = arms[r, b, CLIPPED], arms[r, b, STAT_N]
    for a in range(arms.shape[1]):
        if a == b:
            continue
        x, n = arms[r, a, CLIPPED], arms[r, a, STAT_N]
        if x == x_b and n == n_b:
            if a < b:
                return True
            continue
        if not x < u:
            return True
        d = _d_eps_at(x, arms[r, a, NEG_H], arms[r, a, KINK], runs[r, LOG_U],
                      runs[r, LOG_1MU], runs[r, CLOSED], eps)  # fmt: skip
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
    b = np.int64(runs[r, CAND])
    if runs[r, VALID] != 0.0 and not _beaten(arms, runs, r, b, f, eps):
        return b
    best = b
    x_best = arms[r, b, CLIPPED]
    level_best = f / arms[r, b, STAT_N]
    y = d_eps_upper_logit(x_best, arms[r, b, NEG_H], arms[r, b, KINK], level_best, eps,
                          arms[r, b, ROOT])  # fmt: skip
    arms[r, b, ROOT] = y
    _remember(runs, r, b, y, spread)
    for a in range(arms.shape[1]):
        if a == best:
            continue
        x = arms[r, a, CLIPPED]
        level = f / arms[r, a, STAT_N]
        if x == x_best and level == level_best:  # the same index: the lowest arm
            if a < best:
                best = a
                runs[r, CAND] = a
            continue
        if x < runs[r, U]:
            d = _d_eps_at(x, arms[r, a, NEG_H], arms[r, a, KINK], runs[r, LOG_U],
                          runs[r, LOG_1MU], runs[r, CLOSED], eps)  # fmt: skip
            if d > level:
                continue
        ya = d_eps_upper_logit(x, arms[r, a, NEG_H], arms[r, a, KINK], level, eps,
                               arms[r, a, ROOT])  # fmt: skip
        arms[r, a, ROOT] = ya
        if beats(ya, runs[r, Y]) or (ya == runs[r, Y] and a < best):
            best, x_best, level_best = a, x, level
            _remember(runs, r, a, ya, spread)
    return best


@kernel
def _imed_arm(arms: Any, r: int, eps: float) -> int:
    """The arm of smallest DP-IMED index ``n_a d_eps(x_a, x*) + ln n_a`` of replication ``r``,
    ``x* = max_a x_a`` (ties: the lowest arm)."""
    n_arms = arms.shape[1]
    top = arms[r, 0, CLIPPED]
    for a in range(1, n_arms):
        top = max(top, arms[r, a, CLIPPED])
    best_a = 0
    best = math.inf
    for a in range(n_arms):
        n = arms[r, a, STAT_N]
        v = n * d_eps(arms[r, a, CLIPPED], top, eps) + math.log(n)
        if v < best:
            best_a, best = a, v
    return best_a


@kernel
def _arm(kind: int, arms: Any, runs: Any, r: int, f: float, eps: float,
         spread: float) -> int:  # fmt: skip
    """The arm replication ``r`` plays in a round with ``f = ln t``."""
    if kind == _KLUCB:
        return _klucb_arm(arms, runs, r, f, eps, spread)
    if runs[r, STALE] != 0.0:
        runs[r, CHOICE] = _imed_arm(arms, r, eps)
        runs[r, STALE] = 0.0
    return np.int64(runs[r, CHOICE])


@kernel
def _pull(arms: Any, runs: Any, r: int, a: int, x: float, alpha: float, eps: float,
          scale: float, bits: Any) -> None:  # fmt: skip
    """Replication ``r`` pulled arm ``a`` and got ``x``. When the pull ends the arm's phase, the
    phase's sum and one ``Lap(1 / eps)`` variable join the arm's private sum, which is
    released."""
    arms[r, a, COUNT] += 1.0
    arms[r, a, PHASE_SUM] += x
    if arms[r, a, COUNT] == arms[r, a, PHASE_END]:
        arms[r, a, PRIVATE_SUM] += arms[r, a, PHASE_SUM] + standard_laplace(bits) * scale
        arms[r, a, PHASE_SUM] = 0.0
        n = arms[r, a, COUNT]
        arms[r, a, STAT_N] = n
        mean = arms[r, a, PRIVATE_SUM] / n
        arms[r, a, PRIVATE] = mean
        clipped = min(max(mean, 0.0), 1.0)
        arms[r, a, CLIPPED] = clipped
        arms[r, a, NEG_H] = neg_entropy(clipped)
        arms[r, a, KINK] = kink_level(clipped, eps)
        arms[r, a, PHASE_END] = _phase_end(alpha, n)
        arms[r, a, RELEASES] += 1.0
        runs[r, STALE] = 1.0
        runs[r, VALID] = 0.0


@kernel
def _choose(kind: int, arms: Any, runs: Any, f: float, eps: float, out: Any) -> None:
    spread = -math.expm1(-eps)
    for r in range(out.shape[0]):
        out[r] = _arm(kind, arms, runs, r, f, eps, spread)


@kernel
def _observe(arms: Any, runs: Any, actions: Any, x: Any, alpha: float, eps: float,
             scale: float, address: int) -> None:  # fmt: skip
    bits = generator_at(address).bit_generator
    for r in range(x.shape[0]):
        _pull(arms, runs, r, actions[r], x[r], alpha, eps, scale, bits)


@kernel
def _play(kind: int, arms: Any, runs: Any, alpha: float, eps: float, scale: float,
          address: int, t0: int, rows: Any, actions: Any, rewards: Any, chosen: Any,
          x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if a step met a reward other than 0 or 1 (its arms are
    chosen, nothing is learnt from it)."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    spread = -math.expm1(-eps)
    for i in range(rows.shape[0]):
        t = t0 + i
        if t < n_arms:
            chosen[:] = t
        else:
            f = math.log(t + 1.0)
            for r in range(n_runs):
                chosen[r] = _arm(kind, arms, runs, r, f, eps, spread)
        for r in range(n_runs):
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not in_bernoulli(x):
            return i
        for r in range(n_runs):
            a = chosen[r]
            actions[i, r] = a
            rewards[i, r] = x[r]
            _pull(arms, runs, r, a, x[r], alpha, eps, scale, bits)
    return rows.shape[0]


class _DPKL(LaplaceBatchAgent):
    """The blueprint of Azize et al. (2025) with the index of ``kind`` (the classes below)."""

    _kind = _KLUCB
    batches = "phase"
    private_field, releases_field = PRIVATE, RELEASES
    citation = "Azize et al. 2025, Proposition 2"
    bernoulli_only = True
    cost_hint = 6.0
    parameter_constraints = {
        **LaplaceBatchAgent.parameter_constraints,
        "alpha": Param(low=1, low_open=True, doc="growth ratio of the phases"),
    }

    def __init__(self, epsilon: float = 1.0, alpha: float = 2.0) -> None:
        self.epsilon = epsilon
        self.alpha = alpha

    def setup(self) -> None:
        self._setup_common()
        self._alpha = float(self.alpha)
        arms = np.zeros((self.n_runs, self.n_arms, N_ARM_FIELDS))
        arms[:, :, PHASE_END] = 1.0  # the initial pull is phase 0, of one reward
        arms[:, :, STAT_N] = 1.0
        arms[:, :, ROOT] = np.nan  # no warm start yet
        self._arms = arms
        self._runs = np.zeros((self.n_runs, N_RUN_FIELDS))
        self._runs[:, STALE] = 1.0

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self._kind, self._arms, self._runs, math.log(self.t + 1.0), self._eps, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = self._rewards(rewards)
        _observe(self._arms, self._runs, np.asarray(actions, dtype=np.int64), x, self._alpha,
                 self._eps, self._scale, generator_address(self.rng))  # fmt: skip

    play = LaplaceBatchAgent.play  # (the engine plays the class that defines play by blocks)

    def _play_block(self, rows: Any, actions: Any, rewards: Any) -> int:
        return int(_play(self._kind, self._arms, self._runs, self._alpha, self._eps,
                         self._scale, generator_address(self.rng), self.t, rows, actions,
                         rewards, self._chosen, self._x))  # fmt: skip


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
    learnt from it (the class attribute ``bernoulli_only`` says so, for a caller that checks
    the environment before a run). Anytime: no horizon needed.
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
    _kind = _KLUCB


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
    _kind = _IMED

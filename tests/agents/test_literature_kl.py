"""The KL indices (agents.kl) and the agents built on them: KL-UCB (Garivier & Cappé 2011),
DP-KLUCB and DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025).

(c) the compiled indices against their definitions solved by scipy; (a) each agent's step
protocol against a plain per-step implementation written here from its paper (same seeds,
identical actions); the non-private limit of DP-KLUCB and DP-IMED. The tests every
literature agent shares (block path, regret, noise, parameters) are in
``test_literature_common.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import agents
from agents.kl import (
    KL_UPPER_TOLERANCE,
    d_eps,
    d_eps_upper,
    kink_level,
    kl_bernoulli,
    kl_upper,
    kl_upper_logit,
    neg_entropy,
)
from dpbandits.core.jit import generator_address
from dpbandits.core.samplers import fill_standard_laplace
from dpbandits.theory import d_epsilon_bernoulli
from tests.agents.test_literature_dp_ucb import bernoulli_rows, play_rows
from tests.marks import slow_except
from tests.stats import assert_same_distribution

PS = [0.0, 1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-9, 1.0]
LEVELS = [1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 1.0, 5.0, 30.0, 1000.0]


# -- definitions, written from the papers ------------------------------------------------------
def kl_ref(p: float, q: float) -> float:
    """Bernoulli ``kl(p, q)``, ``0 ln 0 = 0``."""
    out = 0.0
    if p > 0:
        out += p * math.log(p / q) if q > 0 else math.inf
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q)) if q < 1 else math.inf
    return out


def upper_ref(divergence, x: float, level: float) -> float:
    """``max{q in [x, 1] : divergence(x, q) <= level}`` by scipy's brentq (``divergence``
    increasing in ``q`` on ``[x, 1]``)."""
    if level <= 0 or x >= 1:
        return x
    if divergence(x, 1.0) <= level:
        return 1.0
    top = np.nextafter(1.0, 0.0)
    if divergence(x, top) <= level:
        return float(top)
    return brentq(lambda q: divergence(x, q) - level, x, top, xtol=1e-15, rtol=1e-15)


def kl_ucb_ref(p: float, level: float) -> float:
    """Garivier & Cappé's (2011) index ``max{q in [p, 1] : kl(p, q) <= level}``."""
    return upper_ref(kl_ref, p, level)


def kl_ucb_logit_ref(p: float, level: float) -> float:
    """The same index as its log-odds ``y``, solved in ``y`` (``kl(p, q)`` written with ``ln q
    = -ln(1 + e^-y)``, ``ln(1 - q) = -ln(1 + e^y)``), so that indices within 1e-16 of 1 keep
    their order: how the agents compare them."""
    if p >= 1:
        return math.inf
    y_p = math.log(p / (1 - p)) if p > 0 else -math.inf
    if level <= 0:
        return y_p

    def g(y: float) -> float:
        log_q, log_1mq = -np.logaddexp(0.0, -y), -np.logaddexp(0.0, y)
        out = -level - (1 - p) * log_1mq + ((1 - p) * math.log(1 - p) if p < 1 else 0.0)
        return out + (p * (math.log(p) - log_q) if p > 0 else 0.0)

    lo = max(y_p, -800.0)
    hi = lo + 1.0
    while g(hi) <= 0:
        hi = lo + 2 * (hi - lo)
    return brentq(g, lo, hi, xtol=1e-13, rtol=1e-15)


def d_eps_ref(x: float, y: float, eps: float) -> float:
    """Azize et al.'s (2025) ``d_eps(x, y) = inf_{z in [x, y]} eps |z - x| + kl(z, y)``: the
    two ends and scipy's bounded minimisation in between (the function is convex in z)."""
    if y <= x:
        return 0.0
    if y >= 1:  # kl(z, 1) is infinite for z < 1: z = 1 is the only candidate
        return eps * (1 - x)
    ends = min(kl_ref(x, y), eps * (y - x))
    inner = minimize_scalar(lambda z: eps * (z - x) + kl_ref(z, y), bounds=(x, y),
                            method="bounded", options={"xatol": 1e-13})  # fmt: skip
    return min(ends, float(inner.fun))


# -- (c) the indices -----------------------------------------------------------------------------
def test_kl_bernoulli_is_the_definition():
    for p in PS:
        for q in PS:
            assert kl_bernoulli(p, q) == pytest.approx(kl_ref(p, q), rel=1e-12, abs=1e-300)


def test_kl_upper_is_the_root_within_its_tolerance():
    for p in PS:
        for level in LEVELS:
            got, want = kl_upper(p, level), kl_ucb_ref(p, level)
            assert abs(got - want) <= KL_UPPER_TOLERANCE, (p, level, got, want)
            assert p <= got <= 1.0
    assert kl_upper(0.3, 0.0) == 0.3 and kl_upper(0.3, -1.0) == 0.3
    assert kl_upper(0.3, math.inf) == 1.0 and kl_upper(1.0, 0.5) == 1.0
    assert kl_upper(0.0, 0.5) == pytest.approx(1 - math.exp(-0.5), rel=1e-15)  # closed form


def test_kl_upper_warm_starts_give_the_same_root():
    """A warm start (the root for another level, left or right of this one's, or a stale one
    left of ``logit(p)``) converges to the same root as the cold start."""
    for p in [0.05, 0.4, 0.93]:
        h = neg_entropy(p)
        for level in [1e-4, 0.05, 2.0]:
            cold = kl_upper_logit(p, h, level, math.nan)
            for start in [cold - 3.0, cold - 1e-3, cold + 1e-3, cold + 5.0, -40.0]:
                warm = kl_upper_logit(p, h, level, start)
                q_warm, q_cold = 1 / (1 + math.exp(-warm)), 1 / (1 + math.exp(-cold))
                assert abs(q_warm - q_cold) <= KL_UPPER_TOLERANCE, (p, level, start)


def test_d_eps_is_its_definition_and_the_kink_is_where_the_pieces_meet():
    """The closed form of ``d_eps`` (agents.kl) against the infimum over ``z``; its two limits
    (``kl`` for large ``eps``, ``eps (y - x)`` as ``eps -> 0``); ``kink_level`` is ``kl(x,
    y_c)`` at ``y_c = x / (x + (1 - x) e^-eps)``."""
    for eps in [0.05, 0.5, 1.0, 4.0]:
        for x in [0.0, 0.1, 0.35, 0.6, 0.95, 1.0]:
            for y in [0.0, 0.2, 0.4, 0.65, 0.9, 0.999, 1.0]:
                assert d_eps(x, y, eps) == pytest.approx(d_eps_ref(x, y, eps), abs=1e-10), (
                    x, y, eps)  # fmt: skip
            y_c = x / (x + (1 - x) * math.exp(-eps))
            assert kink_level(x, eps) == pytest.approx(kl_ref(x, y_c), abs=1e-12)
    assert d_eps(0.2, 0.7, 50.0) == pytest.approx(kl_ref(0.2, 0.7), rel=1e-12)
    # the same quantity as the lower bounds' (dpbandits.theory, numpy) for y >= x
    rng = np.random.default_rng(0)
    x, y, eps = rng.random(300), rng.random(300), rng.exponential(1.0, 300)
    x, y = np.minimum(x, y), np.maximum(x, y)
    for xi, yi, ei in zip(x, y, eps, strict=True):
        want = float(d_epsilon_bernoulli(xi, yi, ei))
        assert d_eps(xi, yi, ei) == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert d_eps(0.2, 0.7, 1e-6) == pytest.approx(1e-6 * 0.5, rel=1e-5)


def test_d_eps_upper_is_the_root_of_the_definition():
    for eps in [0.1, 1.0, 3.0]:
        for x in [0.0, 0.05, 0.3, 0.7, 0.99, 1.0]:
            for level in [1e-6, 1e-3, 0.05, 0.5, 2.0, 10.0]:
                want = upper_ref(lambda a, b, e=eps: d_eps_ref(a, b, e), x, level)
                assert d_eps_upper(x, level, eps) == pytest.approx(want, abs=1e-9), (
                    x, level, eps)  # fmt: skip


# -- (a) the agents against plain implementations of their papers --------------------------------
def laplace_source(seed: int):
    """The standard Laplace draws the agents make (``dpbandits.core.samplers.standard_laplace``),
    one at a time, from ``numpy.random.default_rng(seed)``, the Generator an agent reset with
    ``rng=seed`` draws from."""
    rng = np.random.default_rng(seed)
    one = np.empty(1)

    def draw() -> float:
        fill_standard_laplace(generator_address(rng), one)
        return float(one[0])

    return rng, draw


def reference_klucb(rows, R, K, c=0.0):
    """Garivier & Cappé (2011), Fig. 1: each arm once, then the arm of largest ``u_a = max{q :
    N_a kl(p_a, q) <= ln t + c ln ln t}`` (``t`` rounds played; first maximum; compared by
    their log-odds)."""
    T = rows.shape[0]
    actions = np.empty((T, R), dtype=np.int64)
    for r in range(R):
        s, n = np.zeros(K), np.zeros(K)
        for t in range(T):
            if t < K:
                a = t
            else:
                f = math.log(t) + (c * math.log(math.log(t)) if math.log(t) > 1 else 0.0)
                a = int(np.argmax([kl_ucb_logit_ref(s[b] / n[b], f / n[b]) for b in range(K)]))
            x = rows[t, a * R + r]
            s[a] += x
            n[a] += 1
            actions[t, r] = a
    return actions


def reference_dp_kl(rows, R, K, eps, alpha, seed, imed):
    """Azize et al. (2025), DP-KLUCB / DP-IMED, as ``agents.DPKLUCB``'s docstring reads the
    paper: phases of each arm end at pull counts 1, ceil(alpha), ceil(alpha ceil(alpha)), ...;
    at the end of a phase its rewards' sum and one Lap(1/eps) join the arm's private sum,
    released as the private mean over all its pulls so far; round t (1-based) plays
    ``argmax max{q : d_eps(x_a, q) <= ln t / n_a}`` (DP-KLUCB) or ``argmin n_a d_eps(x_a, x*)
    + ln n_a`` (DP-IMED), ``x_a`` the private mean clipped to [0, 1]. The draws: step by step,
    each step's replications in order."""
    T = rows.shape[0]
    _, laplace = laplace_source(seed)
    actions = np.empty((T, R), dtype=np.int64)
    count, phase_sum = np.zeros((R, K)), np.zeros((R, K))
    phase_end = np.ones((R, K))
    private_sum, stat_n, x = np.zeros((R, K)), np.ones((R, K)), np.zeros((R, K))
    for t in range(T):
        for r in range(R):
            if t < K:
                a = t
            elif imed:
                top = x[r].max()
                a = int(np.argmin([stat_n[r, b] * d_eps_ref(x[r, b], top, eps)
                                   + math.log(stat_n[r, b]) for b in range(K)]))  # fmt: skip
            else:
                level = math.log(t + 1) / stat_n[r]
                a = int(np.argmax([upper_ref(lambda u, v: d_eps_ref(u, v, eps), x[r, b],
                                             level[b]) for b in range(K)]))  # fmt: skip
            actions[t, r] = a
        for r in range(R):
            a = actions[t, r]
            count[r, a] += 1
            phase_sum[r, a] += rows[t, a * R + r]
            if count[r, a] == phase_end[r, a]:
                private_sum[r, a] += phase_sum[r, a] + laplace() * (1.0 / eps)
                phase_sum[r, a] = 0.0
                stat_n[r, a] = count[r, a]
                x[r, a] = min(max(private_sum[r, a] / stat_n[r, a], 0.0), 1.0)
                phase_end[r, a] = math.ceil(alpha * count[r, a])
    return actions


def test_klucb_step_protocol_is_garivier_and_cappe():
    R, K, T = 3, 4, 600
    rows = bernoulli_rows(np.random.default_rng(1), np.array([0.3, 0.5, 0.45, 0.6]), T, R)
    for c in (0.0, 3.0):
        agent = agents.make("klucb", c=c)
        agent.reset(R, K, rng=0)
        np.testing.assert_array_equal(play_rows(agent, rows, R, steps=True),
                                      reference_klucb(rows, R, K, c))  # fmt: skip


@pytest.mark.parametrize("name", ["dp_klucb", "dp_imed"])
def test_dp_kl_step_protocol_is_the_papers_algorithm(name):
    """A short run (the reference solves every index numerically) with ``alpha = 1.5``: phases
    of 1, 2, 3, 5, 8, 12, ... pulls, a small eps (noisy releases, both pieces of d_eps)."""
    R, K, T, eps, alpha = 2, 3, 160, 0.5, 1.5
    rows = bernoulli_rows(np.random.default_rng(2), np.array([0.3, 0.7, 0.5]), T, R)
    agent = agents.make(name, epsilon=eps, alpha=alpha)
    agent.reset(R, K, rng=7)
    got = play_rows(agent, rows, R, steps=True)
    want = reference_dp_kl(rows, R, K, eps, alpha, 7, name == "dp_imed")
    np.testing.assert_array_equal(got, want)
    assert agent.privacy_report()["releases_per_arm"][1] >= 8  # ceil(1.5 n): 1, 2, ..., 56, 84


# -- the non-private limit ---------------------------------------------------------------------
def regret_per_run(agent, means, T, R, seed):
    rows = bernoulli_rows(np.random.default_rng(seed), means, T, R)
    agent.reset(R, means.size, horizon=T, rng=seed + 1)
    return (means.max() - means)[play_rows(agent, rows, R)].sum(axis=0)


def argmax_random_ties(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's argmax, ties broken uniformly at random: the law of a private agent's choice
    between arms whose statistics are equal, which its i.i.d. noise decides."""
    top = values.max(axis=1, keepdims=True)
    return np.argmax(rng.random(values.shape) * (values == top), axis=1)


def kl_vector(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``kl(p, q)`` elementwise (``0 ln 0 = 0``; infinite where ``q`` is 0 or 1 and ``p`` is
    not)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(p / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0)
    return np.where(np.isnan(a + b), np.inf, a + b)


def index_regret(index, means, T, R, seed):
    """Per-run regret of the index policy ``index(s, n, t) -> (R, K)`` (largest wins, ties at
    random): each arm once, then the index of the sums ``s`` and counts ``n`` after ``t``
    rounds; numpy over the runs."""
    rng = np.random.default_rng(seed)
    K = means.size
    s, n = np.zeros((R, K)), np.zeros((R, K))
    regret = np.zeros(R)
    runs = np.arange(R)
    for t in range(T):
        a = np.full(R, t) if t < K else argmax_random_ties(index(s, n, t), rng)
        s[runs, a] += (rng.random(R) < means[a]).astype(float)
        n[runs, a] += 1
        regret += means.max() - means[a]
    return regret


def klucb_index(s, n, t):
    """KL-UCB with ``c = 0`` and the 1-based round ``t + 1`` (DP-KLUCB's ``ln t``): bisection
    on ``kl(p, .)`` between ``p`` and Pinsker's ``p + sqrt(level / 2)``, to 2^-44 of it."""
    p, level = s / n, math.log(t + 1) / n
    lo, hi = p.copy(), np.minimum(p + np.sqrt(level / 2), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg_h = np.where(p > 0, p * np.log(p), 0.0) + np.where(p < 1, (1 - p) * np.log1p(-p), 0.0)
        for _ in range(44):
            mid = (lo + hi) / 2
            k = neg_h - np.where(p > 0, p * np.log(mid), 0.0) - (1 - p) * np.log1p(-mid)
            below = k <= level
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
    return lo


def imed_index(s, n, t):
    """Minus IMED's index (Honda & Takemura 2015): ``-(N_a kl(p_a, p*) + ln N_a)``, ``p*`` the
    largest empirical mean."""
    p = s / n
    top = p.max(axis=1, keepdims=True)
    k = np.where(p >= top, 0.0, kl_vector(p, np.broadcast_to(top, p.shape)))
    return -(n * k + np.log(n))


@pytest.mark.parametrize(("name", "index"), slow_except(
    [("dp_klucb", klucb_index), ("dp_imed", imed_index)], fast=["dp_imed"], key=lambda c: c[0]))
def test_huge_eps_and_alpha_near_1_is_the_non_private_algorithm(name, index):
    """``eps -> inf``: no noise and ``d_eps = kl``; ``alpha -> 1``: every pull ends a phase, so
    the statistics are the running means. DP-KLUCB is then KL-UCB (Garivier & Cappé 2011, ``c
    = 0``, ``ln`` of the round being played) and DP-IMED is IMED (Honda & Takemura 2015), with
    ties -- frequent with Bernoulli rewards -- broken by the i.i.d. noise, i.e. uniformly:
    two-sample test of the per-run regrets against the numpy versions above (independent
    rewards)."""
    means, T, R = np.array([0.35, 0.65, 0.5]), 2000, 300
    ours = regret_per_run(agents.make(name, epsilon=1e9, alpha=1 + 1e-9), means, T, R, 1)
    assert_same_distribution(ours, index_regret(index, means, T, R, 2))

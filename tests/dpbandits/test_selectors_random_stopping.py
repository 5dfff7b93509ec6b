"""rs / rs_tnb (Alg. 1, App. C): the D_{eta,gamma} sampler, the max-of-Laplace sampler, and the
vectorised selectors against the literal loop and against exact output probabilities."""

import math

import numpy as np
import pytest
from scipy import stats

from dpbandits import selectors
from dpbandits.selectors.random_stopping import max_laplace, rs_loop_reference, sample_tnb
from tests.stats import (
    P_MIN,
    assert_counts_match_pmf,
    assert_mean_close,
    assert_proportion_close,
    assert_same_distribution,
)

N = 100_000


def app_c_pmf(eta, gamma, kmax):
    """P[N = k], k = 1..kmax, straight from App. C Definition A.1 (running product)."""
    k = np.arange(1, kmax + 1)
    if eta == 0:
        return (1 - gamma) ** k / (k * math.log(1 / gamma))
    ratios = (np.arange(kmax) + eta) / (np.arange(kmax) + 1.0)  # (l + eta)/(l + 1), l = 0..k-1
    return (1 - gamma) ** k / (gamma**-eta - 1) * np.cumprod(ratios)


def app_c_mean(eta, gamma):
    if eta == 0:
        return (1 / gamma - 1) / math.log(1 / gamma)
    return eta * (1 - gamma) / (gamma * (1 - gamma**eta))


# eta = 0.1 (gamma**eta > 1/2) exercises the inverse-CDF path for eta > 0, eta = 0.5 and 3 the
# conditioned negative binomial, eta = -0.5 the inverse CDF, 0 the logseries, 1 the geometric.
@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [0.05, 0.4])
def test_tnb_sampler_matches_app_c_pmf(eta, gamma):
    n = sample_tnb(
        eta, gamma, N, rng=np.random.default_rng([11, int(eta * 10) + 10, int(gamma * 100)])
    )
    assert n.dtype == np.int64 and n.min() >= 1
    kmax = int(np.ceil(40 / gamma))
    pmf = app_c_pmf(eta, gamma, kmax)
    probs = np.append(pmf, max(0.0, 1 - pmf.sum()))
    probs /= probs.sum()
    counts = np.bincount(np.minimum(n, kmax + 1) - 1, minlength=kmax + 1)
    assert_counts_match_pmf(counts, probs)
    assert_mean_close(n, app_c_mean(eta, gamma))


def test_tnb_sampler_shapes_and_errors():
    assert sample_tnb(0.5, 0.1, (3, 4), rng=0).shape == (3, 4)
    with pytest.raises(ValueError, match="eta"):
        sample_tnb(-1.0, 0.1, 5)
    with pytest.raises(ValueError, match="gamma"):
        sample_tnb(0.5, 1.0, 5)


@pytest.mark.parametrize("m", [1, 3, 1000, 10**12])
def test_max_laplace_matches_cdf(m):
    x = max_laplace(np.full(50_000, m), rng=m % 997)

    def cdf(t):
        # F(t)^m computed stably; exact for every m
        t = np.asarray(t, float)
        log_f = np.where(t < 0, np.log(0.5) + np.minimum(t, 0), np.log1p(-0.5 * np.exp(-np.abs(t))))
        return np.exp(m * log_f)

    assert np.all(np.isfinite(x))
    assert stats.kstest(x, cdf).pvalue > P_MIN


def test_max_laplace_far_tail_precision():
    # V = U^(1/m) within 1e-16 of 1: a naive U**(1/m) would return +-inf or a few values only.
    x = max_laplace(np.full(10_000, 1e15), rng=1)
    assert np.unique(x).size > 9_900
    # median of the max of m Laplace: F(x) = 2^(-1/m) => x = -log(2 (1 - 2^(-1/m)))
    med = -math.log(2 * -math.expm1(-math.log(2) / 1e15))
    assert abs(np.median(x) - med) < 0.1


def _loop_sample(n, q, d, eps, gamma, eta, seed):
    rng = np.random.default_rng(seed)
    return np.array([rs_loop_reference(q, d, eps, gamma, eta, rng) for _ in range(n)])


@pytest.mark.parametrize(
    "name,eta", [("rs", 1.0), ("rs_tnb", 0.0), ("rs_tnb", -0.5), ("rs_tnb", 3.0)]
)
def test_rs_vectorised_matches_literal_loop(name, eta):
    q = np.array([0.0, 0.5, 1.0])
    d = np.array([0.2, 0.5, 1.0])
    eps, gamma = 2.0, 0.3
    params = {"gamma": gamma} if name == "rs" else {"gamma": gamma, "eta": eta}
    sel = selectors.make(name, epsilon=eps, **params)
    fast = sel.select(np.broadcast_to(q, (200_000, 3)), d, rng=21)
    slow = _loop_sample(20_000, q, d, eps, gamma, eta, seed=22)
    assert_same_distribution(fast, slow)


def tnb_pgf(x, eta, gamma):
    """E[x^N] for N ~ D_{eta,gamma} (App. C), from the negative-binomial series."""
    if eta == 0:
        return math.log1p(-(1 - gamma) * x) / math.log(gamma)
    return ((1 - (1 - gamma) * x) ** -eta - 1) / (gamma**-eta - 1)


@pytest.mark.parametrize(
    "eta,k,gamma",
    # few draws per candidate: the split counts generated draws; many (K = 2, gamma = 0.02):
    # the split uses Generator.multinomial
    [(1.0, 6, 0.2), (0.0, 6, 0.2), (-0.5, 6, 0.2), (3.0, 6, 0.2), (1.0, 2, 0.02), (0.0, 2, 0.02)],
)
def test_candidate_never_drawn_is_never_output(eta, k, gamma):
    # Candidate 0 dominates by far, so it is output iff it was drawn at least once:
    # P = 1 - E[(1 - 1/K)^N]. This checks N's law, the multinomial split and the masking.
    q = np.array([100.0] + [0.0] * (k - 1))
    sel = selectors.make("rs_tnb", epsilon=1.0, gamma=gamma, eta=eta)
    idx = sel.select(np.broadcast_to(q, (N, k)), 1e-3, rng=31)
    p = 1 - tnb_pgf(1 - 1 / k, eta, gamma)
    assert_proportion_close(int((idx == 0).sum()), N, p)
    if k > 2:  # when 0 was not drawn, the others are exchangeable
        others = np.bincount(idx[idx != 0], minlength=k)[1:]
        assert_counts_match_pmf(others, np.full(k - 1, 1 / (k - 1)))


def test_rs_is_rs_tnb_with_eta_one():
    q = np.array([0.0, 0.3, 0.9, 1.0])
    d = np.array([1.0, 0.1, 0.5, 2.0])
    a = selectors.make("rs", epsilon=1.0, gamma=0.1).select(np.broadcast_to(q, (N, 4)), d, rng=41)
    b = selectors.make("rs_tnb", epsilon=1.0, gamma=0.1, eta=1.0).select(
        np.broadcast_to(q, (N, 4)), d, rng=42
    )
    assert_same_distribution(a, b)


def rs_two_candidate_p0(gap, b, gamma, nmax=32):
    """P[rs outputs 0] for q = (0, gap), equal Laplace scales b, N ~ Geometric(gamma).

    Sum over N = n and the split (m0, m1) ~ Bin(n, 1/2): candidate 0 wins iff it was drawn and
    either 1 was not, or the max of m0 Lap(b) exceeds gap + max of m1 Lap(b). The last
    probability is int f_{m0}(x) F(x - gap)^{m1} dx, computed on a fine grid.
    """
    x = np.linspace(-50 * b, 50 * b, 50_001)
    dx = x[1] - x[0]

    def cdf(t):
        return np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0) / b), 1 - 0.5 * np.exp(-np.abs(t) / b))

    f0, f1 = cdf(x), cdf(x - gap)
    dens = 0.5 / b * np.exp(-np.abs(x) / b)
    total = 0.0
    for n in range(1, nmax + 1):
        p_n = gamma * (1 - gamma) ** (n - 1)
        for m0 in range(1, n + 1):
            m1 = n - m0
            w = math.comb(n, m0) / 2**n
            win = 1.0 if m1 == 0 else float(np.sum(m0 * f0 ** (m0 - 1) * dens * f1**m1) * dx)
            total += p_n * w * win
    return total


def test_rs_two_candidate_exact_probability():
    # Exact law of Alg. 1 with Lap(3 d / eps) noise. A wrong noise factor (2 instead of 3) or
    # stopping rule shifts P[output 0] by many standard errors (checked below).
    eps, gamma, gap = 1.0, 0.5, 3.0
    q = np.array([0.0, gap])
    sel = selectors.make("rs", epsilon=eps, gamma=gamma)
    idx = sel.select(np.broadcast_to(q, (N, 2)), 1.0, rng=51)
    p0 = rs_two_candidate_p0(gap, 3.0 / eps, gamma)
    assert_proportion_close(int((idx == 0).sum()), N, p0)
    se = math.sqrt(p0 * (1 - p0) / N)
    assert abs(rs_two_candidate_p0(gap, 2.0 / eps, gamma) - p0) > 10 * se

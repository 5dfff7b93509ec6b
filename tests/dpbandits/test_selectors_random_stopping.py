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


# -- the compiled sampling draws what the vectorised numpy formulation drew -----------------
def _numpy_tnb(eta, gamma, size, gen):
    """sample_tnb as numpy array calls (the formulation the kernels reproduce)."""
    if eta == 0.0:
        return gen.logseries(1.0 - gamma, size=size).astype(np.int64)
    if eta == 1.0:
        return gen.geometric(gamma, size=size).astype(np.int64)
    if eta > 0.0 and eta * math.log(gamma) <= -math.log(2.0):
        n = np.asarray(gen.negative_binomial(eta, gamma, size=size), dtype=np.int64)
        flat = n.reshape(-1)
        redo = np.flatnonzero(flat == 0)
        while redo.size:
            flat[redo] = gen.negative_binomial(eta, gamma, size=redo.size)
            redo = redo[flat[redo] == 0]
        return n
    from dpbandits.selectors.random_stopping import tnb_method

    cdf = tnb_method(eta, gamma)[1]
    return np.searchsorted(cdf, gen.random(size), side="right") + 1


def _numpy_max_laplace(m, gen):
    e = gen.standard_exponential(m.shape)
    zero = np.flatnonzero(e == 0.0)
    while zero.size:
        e[zero] = gen.standard_exponential(zero.size)
        zero = zero[e[zero] == 0.0]
    log_v = -e / m
    with np.errstate(divide="ignore"):
        high = -math.log(2.0) - np.log(-np.expm1(log_v))
    return np.where(log_v < -math.log(2.0), log_v + math.log(2.0), high)


def _numpy_rs(q, d, eps, gamma, eta, gen):
    """Random stopping as numpy array calls: all rows' N, then all rows' split, then the noise
    of every drawn cell in row-major order."""
    r, k = q.shape
    n = _numpy_tnb(eta, gamma, r, gen)
    total = int(n.sum())
    if total <= min(4 * r * k, 2**24):
        cell = np.repeat(np.arange(r) * k, n) + gen.integers(0, k, size=total, dtype=np.int64)
        counts = np.bincount(cell, minlength=r * k)
    else:
        counts = gen.multinomial(n, np.full(k, 1.0 / k)).reshape(-1)
    cells = np.flatnonzero(counts)
    row, col = cells // k, cells % k
    value = _numpy_max_laplace(counts[cells].astype(np.float64), gen)
    value *= (2.0 + eta) * d[row, col] / eps
    with np.errstate(over="ignore"):
        value += q[row, col] - q.max(axis=1)[row]
    noisy = np.full(r * k, -np.inf)
    noisy[cells] = value
    return noisy.reshape(r, k).argmax(1)


@pytest.mark.parametrize(
    "eta,gamma", [(1.0, 0.05), (1.0, 0.3), (0.0, 0.05), (0.1, 0.3), (0.5, 0.05), (-0.5, 0.05)]
)
@pytest.mark.parametrize("k", [2, 3, 10])
def test_compiled_rs_draws_as_the_numpy_formulation(eta, gamma, k):
    # Same numbers for the same seed, bit for bit, and the generator left in the same state:
    # R = 1 and 7 take the multinomial split (many draws per cell) or the counted draws, R = 200
    # mostly the counted draws; ties and a huge range of scores included.
    data = np.random.default_rng([k, int(100 * gamma)])
    sel = selectors.make("rs_tnb", epsilon=0.7, gamma=gamma, eta=eta)
    for r in (1, 7, 200):
        q = np.round(data.normal(size=(r, k)), 1)
        q[0, 0], q[0, -1] = -1e308, 1e308  # q[0, 0] - max q overflows to -inf
        d = data.uniform(0.5, 2.0, size=(r, k))
        a, b = np.random.default_rng(r), np.random.default_rng(r)
        for _ in range(3):
            np.testing.assert_array_equal(
                sel.select_batch(q, d, a), _numpy_rs(q, d, 0.7, gamma, eta, b)
            )
        assert a.random() == b.random()


@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.1, 0.5, 1.0, 3.0])
def test_compiled_samplers_draw_as_numpy(eta):
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(
        sample_tnb(eta, 0.05, (40, 5), a), _numpy_tnb(eta, 0.05, (40, 5), b)
    )
    m = np.concatenate([np.arange(1.0, 100.0), [1e15, 2.0**60]])
    np.testing.assert_array_equal(max_laplace(m, a), _numpy_max_laplace(m, b))
    assert a.random() == b.random()

"""rs / rs_tnb (Alg. 1, App. C): the D_{eta,gamma} sampler, the max-of-Laplace sampler, and the
vectorised selectors against the literal loop and against exact output probabilities."""

import math

import numpy as np
import pytest
from scipy import stats

from dpbandits import selectors
from dpbandits.core.arms import read_only
from dpbandits.selectors.max_laplace import (
    BOUNDS_MIN_T,
    LOG_SINHC,
    max_laplace,
    max_laplace_bounds,
    max_laplace_value,
)
from dpbandits.selectors.random_stopping import rs_loop_reference, sample_tnb
from tests.marks import slow_except
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
    "name,eta",
    slow_except([("rs", 1.0), ("rs_tnb", 0.0), ("rs_tnb", -0.5), ("rs_tnb", 3.0)],
                fast=[("rs", 1.0), ("rs_tnb", 3.0)]),  # the others: CI's slow step
)  # fmt: skip
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


# -- the compiled sampling draws what its plain-Python transcription draws ------------------
# The reference below pins the random stream (changed once, 2026-11-23: rows one by one;
# docs/performance.md): the same primitives of numpy's Generator, the same arithmetic.
LOG2 = math.log(2.0)


def _reference_tnb(eta, gamma, gen):
    """One N ~ D_{eta,gamma}, as tnb_draw draws it."""
    from dpbandits.selectors.random_stopping import tnb_method

    if eta == 0.0:
        return int(gen.logseries(1.0 - gamma))
    if eta == 1.0:
        return 1 + int(gen.standard_exponential() / -math.log1p(-gamma))
    if eta > 0.0 and eta * math.log(gamma) <= -LOG2:
        while True:
            n = int(gen.negative_binomial(eta, gamma))
            if n > 0:
                return n
    cdf = tnb_method(eta, gamma)[1]
    return int(np.searchsorted(cdf, gen.random(), side="right")) + 1


def _reference_max_laplace(m, gen):
    e = gen.standard_exponential()
    while e == 0.0:
        e = gen.standard_exponential()
    t = e / m
    if t > LOG2:
        return LOG2 - t
    w = 0.25 * t * t
    acc = LOG_SINHC[-1]
    for c in LOG_SINHC[-2::-1]:
        acc = c + w * acc
    return (0.5 * t - LOG2) - math.log(t) - w * acc


def _reference_split(n, k, gen):
    counts = np.zeros(k, dtype=np.int64)
    if k == 2 and n <= 64 * 16 * 2:
        ones, left = 0, n
        while left > 64:
            ones += int(gen.bit_generator.random_raw()).bit_count()
            left -= 64
        ones += (int(gen.bit_generator.random_raw()) >> (64 - left)).bit_count()
        counts[:] = n - ones, ones
    elif n <= 16 * k:
        for _ in range(n):
            counts[gen.integers(0, k)] += 1
    else:
        left, remaining = n, 1.0
        for j in range(k - 1):
            x = int(gen.binomial(left, (1.0 / k) / remaining))
            counts[j] = x
            left -= x
            if left <= 0:
                break
            remaining -= 1.0 / k
        if left > 0:
            counts[k - 1] = left
    return counts


def _reference_rs(q, d, eps, gamma, eta, gen):
    """Random stopping row by row: N, its split, the noise of each drawn candidate."""
    r, k = q.shape
    out = np.empty(r, dtype=np.int64)
    for i in range(r):
        counts = _reference_split(_reference_tnb(eta, gamma, gen), k, gen)
        noisy = np.full(k, -np.inf)
        for a in range(k):
            if counts[a] > 0:
                x = _reference_max_laplace(float(counts[a]), gen)
                with np.errstate(over="ignore"):
                    noisy[a] = x * ((2.0 + eta) * d[i, a] / eps) + (q[i, a] - q[i].max())
        out[i] = int(np.argmax(noisy))
    return out


@pytest.mark.parametrize(
    "eta,gamma",
    [(1.0, 0.05), (1.0, 0.3), (1.0, 3e-4), (0.0, 0.05), (0.1, 0.3), (0.5, 0.05), (-0.5, 0.05)],
)
@pytest.mark.parametrize("k", [2, 3, 10])
def test_compiled_rs_draws_as_the_reference(eta, gamma, k):
    # Same numbers for the same seed, bit for bit, and the generator left in the same state.
    # gamma = 3e-4 gives rows with more than 2048 rounds (K = 2: the binomial split) and many
    # rows above 16 K rounds (K = 3, 10); the others mostly take the drawn rounds. Ties and a
    # huge range of scores included.
    data = np.random.default_rng([k, int(1e4 * gamma)])
    sel = selectors.make("rs_tnb", epsilon=0.7, gamma=gamma, eta=eta)
    for r in (1, 7, 60):
        q = np.round(data.normal(size=(r, k)), 1)
        q[0, 0], q[0, -1] = -1e308, 1e308  # q[0, 0] - max q overflows to -inf
        d = data.uniform(0.5, 2.0, size=(r, k))
        a, b = np.random.default_rng(r), np.random.default_rng(r)
        for _ in range(3):
            np.testing.assert_array_equal(  # read-only rows, as select hands them
                sel.select_batch(read_only(q), read_only(d), a),
                _reference_rs(q, d, 0.7, gamma, eta, b),
            )
        assert a.random() == b.random()


def test_reference_split_takes_every_path():
    # the parameters above reach each branch of the split (a guard on the test itself)
    gen = np.random.default_rng(0)
    n = [_reference_tnb(1.0, 3e-4, gen) for _ in range(200)]
    assert max(n) > 2048 and min(n) <= 32


@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.1, 0.5, 1.0, 3.0])
def test_compiled_samplers_draw_as_the_reference(eta):
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(
        sample_tnb(eta, 0.05, (40, 5), a),
        np.array([_reference_tnb(eta, 0.05, b) for _ in range(200)]).reshape(40, 5),
    )
    m = np.concatenate([np.arange(1.0, 100.0), [1e15, 2.0**60]])
    np.testing.assert_array_equal(
        max_laplace(m, a), np.array([_reference_max_laplace(v, b) for v in m])
    )
    assert a.random() == b.random()


def test_log_sinhc_coefficients_are_the_bernoulli_series():
    # log(sinh u / u) = sum_n 2^(2n) B_2n / (2n (2n)!) u^(2n); B_2n from the recurrence
    from fractions import Fraction

    a = [Fraction(0)] * 20
    bern = []
    for m in range(19):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        bern.append(a[0])
    for n, c in enumerate(LOG_SINHC, start=1):
        exact = Fraction(2 ** (2 * n)) * bern[2 * n] / (2 * n * math.factorial(2 * n))
        assert c == float(exact)


def _series_form(t):
    """``t/2 - log 2 - log t - log(sinh(t/2)/(t/2))`` by the series, in numpy, for ``t`` in
    ``(0, log 2]``: the maximum Laplace value's formula there (``max_laplace_value``)."""
    w = 0.25 * t * t
    acc = np.full_like(t, LOG_SINHC[-1])
    for c in LOG_SINHC[-2::-1]:
        acc = c + w * acc
    return (0.5 * t - LOG2) - np.log(t) - w * acc


def test_max_laplace_transform_accuracy():
    # the series form of -log(2 (1 - exp(-t))) against the expm1 form, in double-double-free
    # float arithmetic: both within a few units of 1e-16 of each other over t in (0, log 2]
    t = np.concatenate([np.geomspace(1e-300, LOG2, 20_000), [LOG2]])
    series = _series_form(t)
    direct = -LOG2 - np.log(-np.expm1(-t))
    assert np.max(np.abs(series - direct) / np.maximum(1.0, np.abs(direct))) < 1e-14
    # and the two branches meet at t = log 2 (x = 0: V = 1/2)
    assert abs(series[-1]) < 1e-15


def test_geometric_gamma_too_small_is_refused():
    from dpbandits.selectors.random_stopping import MIN_GAMMA_GEOMETRIC

    for name, params in [("rs", {}), ("rs_tnb", {"eta": 1.0})]:
        with pytest.raises(ValueError, match="gamma .* too small"):
            selectors.make(name, epsilon=1.0, gamma=MIN_GAMMA_GEOMETRIC / 2, **params)
    with pytest.raises(ValueError, match="gamma .* too small"):
        sample_tnb(1.0, MIN_GAMMA_GEOMETRIC / 2, 3, rng=0)
    ok = selectors.make("rs", epsilon=1.0, gamma=0.5)
    assert ok.select(np.zeros((2, 3)), 1.0, rng=0).shape == (2,)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_split_draws_as_the_reference(k):
    # every path: one word, several words (K = 2: n <= 2048), one draw per round (n <= 16 K),
    # the binomial chain; counts and the generator state bit for bit
    from dpbandits.selectors.random_stopping import split_uniformly

    a, b = np.random.default_rng(k), np.random.default_rng(k)
    for n in [1, 2, 17, 40, 63, 64, 65, 128, 129, 700, 2048, 2049, 5000, 16 * k, 16 * k + 1]:
        counts = np.zeros(k, dtype=np.int64)
        split_uniformly(n, k, a, counts)
        np.testing.assert_array_equal(counts, _reference_split(n, k, b), err_msg=f"n={n}")
    assert a.random() == b.random()


@pytest.mark.parametrize("k,n", slow_except(
    [(2, 40), (2, 100), (2, 3000), (3, 20), (3, 100), (5, 7)],
    fast=[(2, 3000), (3, 20), (5, 7)]))  # fmt: skip
def test_split_law_is_multinomial(k, n):
    # a candidate's count is Binomial(n, 1/K) on every path of the split
    from dpbandits.selectors.random_stopping import split_uniformly

    gen = np.random.default_rng([k, n])
    first = np.empty(20_000, dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)
    for i in range(first.size):
        counts[:] = 0
        split_uniformly(n, k, gen, counts)
        assert counts.sum() == n and counts.min() >= 0
        first[i] = counts[-1]
    pmf = stats.binom.pmf(np.arange(n + 1), n, 1 / k)
    assert_counts_match_pmf(np.bincount(first, minlength=n + 1), pmf)


def test_max_laplace_bounds_enclose_the_exact_value():
    """The logarithm-free interval of rs_select_rows holds the exact value (the series form,
    whose accuracy is tested above) for every t from BOUNDS_MIN_T to log 2, is about 0.06 wide,
    and is tight where log2(1 + f) - f peaks (f = 1/ln 2 - 1): a smaller constant fails here.
    Above log 2 it is the exact value itself; below BOUNDS_MIN_T it gives up."""
    f_peak = 1.0 / math.log(2.0) - 1.0
    t = np.concatenate([
        np.geomspace(BOUNDS_MIN_T, LOG2, 20_000),
        2.0 ** np.arange(-99, 0) * (1.0 + f_peak),  # the worst mantissa at every exponent
        2.0 ** np.arange(-99, 0),  # f = 0: log t exact in the bound
        [BOUNDS_MIN_T, LOG2, np.nextafter(LOG2, 0.0)],
    ])  # fmt: skip
    t = t[(t >= BOUNDS_MIN_T) & (t <= LOG2)]
    exact = _series_form(t)
    lo, hi = np.array([max_laplace_bounds(float(v), 1.0) for v in t]).T
    slack = 1e-13  # rounding of either side; the algorithm's margin is far larger
    assert np.all(lo <= exact + slack) and np.all(exact <= hi + slack)
    width = hi - lo
    assert np.all(width <= math.log(2.0) * 0.0860714 + t * t / 24 + 1e-12)
    # tight where the series term is negligible: the constant cannot be smaller
    peak = np.isin(t, 2.0 ** np.arange(-99, 0) * (1.0 + f_peak)) & (t < 1e-3)
    assert np.max(exact[peak] - lo[peak]) < 1e-6
    # the other two ranges, through (e, m) as the caller passes them
    for e, m in [(np.nextafter(LOG2, 1.0), 1.0), (5.0, 3.0), (40.0, 1.0)]:
        x = max_laplace_value(e, m)
        assert max_laplace_bounds(e, m) == (x, x)
    assert max_laplace_bounds(1e-20, 2.0**62) == (-math.inf, math.inf)


@pytest.mark.parametrize("k", [2, 4])
def test_rows_decided_by_bounds_match_the_exact_values(k):
    """rs_select_rows decides most rows from bounds and the rest from the exact values; both
    must give the reference's output on every row, bit for bit, with the generator in the same
    state: rows tied exactly, tied within the bounds' width or the margin, and far apart."""
    data = np.random.default_rng(k)
    r = 20_000
    gaps = data.choice([0.0, 1e-15, 1e-11, 1e-3, 0.02, 0.05, 0.3, 3.0], size=(r, k))
    q = 0.5 + gaps * data.choice([-1.0, 1.0], size=(r, k))
    d = np.where(data.random((r, k)) < 0.5, 0.25, data.uniform(0.05, 1.0, (r, k)))
    q, d = read_only(q), read_only(d)  # as select hands them to select_batch
    sel = selectors.make("rs", epsilon=1.0, gamma=0.05)
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(sel.select_batch(q, d, a), _reference_rs(q, d, 1.0, 0.05, 1.0, b))
    assert a.random() == b.random()
    # gaps beyond the float range (q - max q = -inf) with one round most of the time: the
    # margin overflows, no bound decides, and the exact values decide as the reference does
    q = read_only(np.tile([1e308] + [-1e308] * (k - 1), (200, 1)))
    sel = selectors.make("rs", epsilon=1.0, gamma=0.9)
    np.testing.assert_array_equal(
        sel.select_batch(q, d[:200], a), _reference_rs(q, d[:200], 1.0, 0.9, 1.0, b)
    )
    assert a.random() == b.random()


@pytest.mark.parametrize("k", [2, 3])
def test_the_geometric_only_kernel_draws_as_the_general_one(k):
    """RS's loop compiles rs_geometric_kernel, which leaves out the other methods' samplers:
    on Alg. 1's rounds it draws what rs_kernel draws, bit for bit, and leaves the generator in
    the same state (rows with many rounds included: gamma 0.001, up to the binomial split)."""
    from dpbandits.selectors.compiled import CompiledKernel, call_kernel
    from dpbandits.selectors.random_stopping import GEOMETRIC, rs_geometric_kernel, rs_kernel

    data = np.random.default_rng(k)
    q, d = data.random((3000, k)), data.uniform(0.05, 1.0, (3000, k))
    for gamma in (0.05, 0.001):
        spec = selectors.make("rs", epsilon=1.0, gamma=gamma).compiled_kernel(k)
        assert spec.kernel is rs_geometric_kernel and spec.params[3] == GEOMETRIC
        results = []
        for fn in (rs_kernel, rs_geometric_kernel):
            rng = np.random.default_rng(5)
            out = call_kernel(CompiledKernel(fn, spec.params), q, d, rng)
            assert out is not None
            results.append((out, rng.random()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        assert results[0][1] == results[1][1]

"""The grid quantile mechanism (the default ``method="grid"``; docs/quantiles.md).

Its exact output pmf is computed here by a plain loop over every grid point, independently of
the implementation (which groups the grid points into blocks of equal utility).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import agents
from dpbandits.audit.selector import clopper_pearson
from dpbandits.quantiles import (
    DEFAULT_ENDPOINT_MASS,
    DEFAULT_GRID_SIZE,
    WindowedSensitivity,
    dp_quantile,
    dp_quantiles,
)
from tests.stats import assert_counts_match_pmf, assert_mean_close, assert_same_distribution


def exact_grid_pmf(x, q, eps, lo, hi, m, w):
    """P(output = lo + j (hi - lo) / m), j = 0..m, by the definition, one grid point at a time."""
    n = len(x)
    snapped = [min(max(round((min(max(v, lo), hi) - lo) / (hi - lo) * m), 0), m) for v in x]
    logs = []
    for j in range(m + 1):
        below = sum(1 for k in snapped if k < j)
        at_or_below = sum(1 for k in snapped if k <= j)
        dist = max(below - q * n, q * n - at_or_below, 0.0)
        mass = 1.0 + (w * (m + 1) if j in (0, m) else 0.0)
        logs.append(math.log(mass) - eps * dist / 2)
    top = max(logs)
    p = np.array([math.exp(v - top) for v in logs])
    return p / p.sum()


def grid_index(values, lo, hi, m):
    j = np.rint((np.asarray(values) - lo) / (hi - lo) * m).astype(np.int64)
    # every output is exactly a grid point: the output set does not depend on the data
    np.testing.assert_array_equal(
        np.where(j == m, hi, lo + (hi - lo) * (j / m)), np.asarray(values)
    )
    return j


#: (x, q, eps, grid_size, endpoint_mass) on [0, 1]: the data sets whose pmf the draws must match
#: (also used by the exact sampler's tests).
PMF_CASES = [
    ([0.05, 0.21, 0.22, 0.4, 0.55, 0.61, 0.9, 1.7, -0.3], 0.3, 2.0, 10, 0.1),
    ([0.3, 0.3, 0.3, 0.0, 0.7, 0.7, 1.0], 0.5, 1.5, 8, 0.5),  # ties, both end points
    ([0.0] * 4 + [1.0] * 6, 0.1, 3.0, 5, 0.0),  # Bernoulli, no end-point mass
    ([0.5] * 6, 0.9, 0.7, 4, 2.0),  # all equal, on the grid
    ([0.26] * 5, 0.5, 1.0, 8, 0.1),  # all equal between grid points (snapped to 0.25)
    ([], 0.5, 1.0, 6, 0.25),  # no data: the base measure itself
]


@pytest.mark.parametrize("x, q, eps, m, w", PMF_CASES)
def test_grid_pmf_matches_definition(x, q, eps, m, w) -> None:
    probs = exact_grid_pmf(x, q, eps, 0.0, 1.0, m, w)
    draws = dp_quantile(
        np.broadcast_to(np.asarray(x, dtype=float), (60_000, len(x))), q, eps, 0.0, 1.0,
        rng=1, grid_size=m, endpoint_mass=w,
    )  # fmt: skip
    j = grid_index(draws, 0.0, 1.0, m)
    assert_counts_match_pmf(np.bincount(j, minlength=m + 1), probs)


def test_grid_pmf_on_other_bounds_and_levels_split() -> None:
    x = [-2.0, -1.2, -1.2, 0.4, 3.0, 3.0, 2.2]
    lo, hi, m, w, eps = -2.0, 3.0, 10, 0.2, 4.0
    out = dp_quantiles(
        np.broadcast_to(x, (60_000, len(x))), [0.2, 0.7], eps, lo, hi, rng=2,
        grid_size=m, endpoint_mass=w,
    )  # fmt: skip
    for col, q in enumerate([0.2, 0.7]):
        probs = exact_grid_pmf(x, q, eps / 2, lo, hi, m, w)  # eps split equally
        j = grid_index(out[:, col], lo, hi, m)
        assert_counts_match_pmf(np.bincount(j, minlength=m + 1), probs)


def test_exact_privacy_loss_is_at_most_eps_and_nearly_attained() -> None:
    """Exact pmfs on many neighbouring pairs (one value replaced): the largest log ratio over
    outputs is <= eps; over the pairs it comes close to eps (the bound is not loose)."""
    rng = np.random.default_rng(3)
    m, eps = 8, 1.0
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(1, 7))
        x = list(rng.choice([0.0, 0.125, 0.5, 0.875, 1.0, rng.random()], size=n))
        xp = list(x)
        xp[int(rng.integers(n))] = float(rng.choice([0.0, 1.0, rng.random()]))
        q = float(rng.choice([0.0, 0.1, 0.5, 0.9, 1.0]))
        w = float(rng.choice([0.0, DEFAULT_ENDPOINT_MASS, 3.0]))
        p = exact_grid_pmf(x, q, eps, 0.0, 1.0, m, w)
        pp = exact_grid_pmf(xp, q, eps, 0.0, 1.0, m, w)
        loss = float(np.max(np.abs(np.log(p) - np.log(pp))))
        assert loss <= eps + 1e-9, (x, xp, q, w, loss)
        worst = max(worst, loss)
    assert worst > 0.8 * eps


LARGEST_LOSS_PAIR = ([0.875, 0.125, 0.0, 0.875, 1.0, 0.0], [0.875, 0.125, 1.0, 0.875, 1.0, 0.0])


@pytest.mark.parametrize(
    "x, xp, q, sampler",
    [
        ([0.0] * 2 + [1.0] * 18, [0.0] * 3 + [1.0] * 17, 0.1, "float"),  # Bernoulli, 10% level
        ([0.5] * 10, [0.0] + [0.5] * 9, 0.5, "float"),  # all equal, one moved to an end point
        # the pair of largest exact loss in the search above (0.85 eps, endpoint_mass 0)
        (*LARGEST_LOSS_PAIR, 0.5, "float"),
        (*LARGEST_LOSS_PAIR, 0.5, "exact"),
    ],
)
def test_empirical_privacy_loss_on_neighbouring_data(x, xp, q, sampler) -> None:
    """Histogram audit as in dpbandits.audit: the Clopper-Pearson lower bound on the loss is
    <= eps (fails with probability <= 1e-6 for a correct mechanism), and the histograms match
    the exact pmfs, whose loss is <= eps; with both samplers."""
    m, eps, draws = 8, 1.0, 100_000
    kw = {"grid_size": m, "sampler": sampler}
    o = dp_quantile(np.broadcast_to(x, (draws, len(x))), q, eps, 0, 1, rng=5, **kw)
    op = dp_quantile(np.broadcast_to(xp, (draws, len(xp))), q, eps, 0, 1, rng=6, **kw)
    c = np.bincount(grid_index(o, 0, 1, m), minlength=m + 1)
    cp = np.bincount(grid_index(op, 0, 1, m), minlength=m + 1)
    alpha = 1e-6 / (4 * (m + 1))
    lo, hi = clopper_pearson(c, draws, alpha)
    lo_p, hi_p = clopper_pearson(cp, draws, alpha)
    with np.errstate(divide="ignore"):
        lower = np.maximum(np.log(lo) - np.log(hi_p), np.log(lo_p) - np.log(hi)).max()
    assert lower <= eps
    p = exact_grid_pmf(x, q, eps, 0, 1, m, DEFAULT_ENDPOINT_MASS)
    pp = exact_grid_pmf(xp, q, eps, 0, 1, m, DEFAULT_ENDPOINT_MASS)
    assert np.max(np.abs(np.log(p) - np.log(pp))) <= eps + 1e-9
    assert_counts_match_pmf(c, p)
    assert_counts_match_pmf(cp, pp)


def exact_bernoulli_range(p_one, n, eps_p, w, m=DEFAULT_GRID_SIZE):
    """Mean and standard deviation of p_0.9 - p_0.1 of the grid mechanism on n Bernoulli(p_one)
    values, exactly: the candidates are lo (mass 1 + w(m+1)), the m - 1 interior points j/m
    (mean 1/2, second moment (2m - 1)/(6m)) and hi; the two levels are independent."""
    eps = eps_p / 2
    first = second = 0.0
    for zeros in range(n + 1):
        pz = stats.binom.pmf(zeros, n, 1 - p_one)
        if pz < 1e-15:
            continue
        moments = []
        for q in (0.1, 0.9):
            qn = q * n
            u = np.array([max(qn - zeros, 0.0), abs(zeros - qn), max(zeros - qn, 0.0)])
            mass = np.array([1 + w * (m + 1), m - 1, 1 + w * (m + 1)])
            wt = mass * np.exp(-eps * (u - u.min()) / 2)
            wt /= wt.sum()
            moments.append((wt[1] * 0.5 + wt[2], wt[1] * (2 * m - 1) / (6 * m) + wt[2]))
        (m1_lo, m2_lo), (m1_hi, m2_hi) = moments
        first += pz * (m1_hi - m1_lo)
        second += pz * (m2_hi - 2 * m1_hi * m1_lo + m2_lo)
    return first, math.sqrt(max(second - first**2, 0.0))


@pytest.mark.parametrize("p_one", [0.2, 0.5, 0.8])
def test_bernoulli_range_is_close_to_one(p_one) -> None:
    """The issue's check: 200 Bernoulli rewards, eps_p = 1 for the pair: mean range >= 0.9
    (exactly computable; the simulation matches it)."""
    expected, sd = exact_bernoulli_range(p_one, 200, 1.0, DEFAULT_ENDPOINT_MASS)
    assert expected >= 0.9
    rng = np.random.default_rng(7)
    x = (rng.random((8_000, 200)) < p_one).astype(float)
    out = dp_quantiles(x, (0.1, 0.9), 1.0, 0.0, 1.0, rng=8)
    assert_mean_close(out[:, 1] - out[:, 0], expected, scale=sd)


def test_all_equal_median_is_the_tied_value() -> None:
    """200 equal values at eps = 1: the median is the value's grid point; any other output has
    probability < 2 * 2**16 * exp(-50) < 1e-16."""
    for v in (0.3, 0.0, 1.0, 0.123456):
        out = dp_quantile(np.full((5_000, 200), v), 0.5, 1.0, 0.0, 1.0, rng=9)
        assert np.all(np.abs(out - v) <= 0.5 / DEFAULT_GRID_SIZE)


def test_continuous_accuracy_within_smith() -> None:
    """Beta(2, 5), n = 1000: the median absolute error (vs the sample median, where the
    difference between the mechanisms shows most) is within 1.5x of Smith's, at each eps."""
    rng = np.random.default_rng(10)
    x = rng.beta(2.0, 5.0, size=(600, 1000))
    sample = np.median(x, axis=1)
    for eps in (0.1, 1.0, 10.0):
        err = {
            m: np.median(np.abs(dp_quantile(x, 0.5, eps, 0, 1, rng=11, method=m) - sample))
            for m in ("smith", "grid")
        }
        assert err["grid"] <= 1.5 * err["smith"], (eps, err)


def test_windowed_grid_matches_dp_quantiles() -> None:
    rng = np.random.default_rng(12)
    window, eps_p, n_runs = 6, 2.0, 30_000
    data = np.array([0.0, 1.0, 1.0, 0.5, 0.0, 1.0])
    ws = WindowedSensitivity(n_runs, 2, eps_p, window=window, rng=13, grid_size=64)
    for t in range(window):
        ws.update(np.ones(n_runs, dtype=np.int64), np.full(n_runs, data[t]))
    got = ws.values[:, 1]
    x = np.broadcast_to(data, (n_runs, window))
    p = dp_quantiles(x, (0.1, 0.9), eps_p, 0.0, 1.0, rng=rng, grid_size=64)
    assert_same_distribution(got, np.maximum(np.abs(p[:, 1] - p[:, 0]), 1e-6))
    assert "method='grid'" in repr(ws)


def test_private_agent_default_is_right_on_bernoulli_rewards() -> None:
    """A PrivateAgent with default arguments on Bernoulli(0.3)/(0.7) arms: its sensitivity
    estimates are close to the true 10%-90% range, 1 (Smith's: about 1/3 apart). eps_S is tiny
    so that both arms get >= 200 of the 1000 pulls (a window) in every run."""
    rng = np.random.default_rng(14)
    means = np.array([0.3, 0.7])
    found = {}
    for method in ("grid", "smith"):
        kw = {} if method == "grid" else {"quantile_method": method}
        agent = agents.PrivateAgent("rnm", epsilon_select=1e-3, **kw)
        agent.reset(n_runs=300, n_arms=2, horizon=1000, rng=15)
        pulls = np.zeros((300, 2), dtype=np.int64)
        for _ in range(1000):
            a = agent.act()
            pulls[np.arange(300), a] += 1
            agent.update(a, (rng.random(300) < means[a]).astype(float))
        assert pulls.min() >= 200  # every arm has been estimated at least once
        found[method] = agent.sensitivities().mean()
    assert found["grid"] > 0.9
    assert found["smith"] < 0.8
    assert agents.PrivateAgent("rnm").quantile_method == "grid"


def test_grid_bad_input() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, method="exact")
    for bad in (0, 2**53, -3):
        with pytest.raises(ValueError, match="grid_size"):
            dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, grid_size=bad)
    for bad in (True, 2.0, "16"):
        with pytest.raises(TypeError, match="grid_size"):
            dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, grid_size=bad)
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="endpoint_mass"):
            dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, endpoint_mass=bad)
    for bad in (True, "0.1", 1j):
        with pytest.raises(TypeError, match="endpoint_mass"):
            dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, endpoint_mass=bad)
    with pytest.raises(ValueError, match="method"):
        WindowedSensitivity(2, 2, 1.0, method="Smith")
    with pytest.raises(ValueError, match="quantile_method"):
        agents.PrivateAgent("rnm", quantile_method="grids").reset(2, 2, horizon=10)


def test_grid_extreme_epsilon_and_no_nan() -> None:
    """Huge eps: the mode (log-space weights, no overflow); tiny eps: the base measure."""
    x = np.array([0.1, 0.2, 0.2, 0.9])
    out = dp_quantile(np.broadcast_to(x, (1000, 4)), 0.5, 1e300, 0.0, 1.0, rng=16, grid_size=10)
    assert np.all(out == 0.2)
    out = dp_quantile(np.broadcast_to(x, (60_000, 4)), 0.5, 1e-300, 0.0, 1.0, rng=17,
                      grid_size=10, endpoint_mass=0.5)  # fmt: skip
    base = np.array([6.5] + [1.0] * 9 + [6.5])
    assert_counts_match_pmf(np.bincount(grid_index(out, 0, 1, 10), minlength=11), base / base.sum())


def test_windowed_default_grid_resolves_interior_ties() -> None:
    """Rewards uniform on {0.2, 0.4, 0.6, 0.8} (true 10%-90% range 0.6), windows of 200,
    eps_p = 1: the window's default coarse grid errs far less than Smith's mechanism (paired
    over the same windows, z < -5), which cannot return a tied value."""
    n_runs = 3000
    rng = np.random.default_rng(18)
    x = rng.choice([0.2, 0.4, 0.6, 0.8], size=(n_runs, 200))
    err = {}
    for method in ("grid", "smith"):
        ws = WindowedSensitivity(n_runs, 1, 1.0, rng=19, method=method)
        for t in range(200):
            ws.update(np.zeros(n_runs, dtype=np.int64), x[:, t])
        err[method] = np.abs(ws.values[:, 0] - 0.6)
    assert "grid_size=64" in repr(ws.__class__(2, 2, 1.0))
    diff = err["grid"] - err["smith"]
    assert diff.mean() / (diff.std(ddof=1) / np.sqrt(n_runs)) < -5


# ------------------------------------------------------------- same bits as the numpy code


def numpy_grid_quantile(k, levels, epsilon, grid_size, endpoint_mass, uu):
    """The vectorised numpy code that the compiled ``grid_quantile_rows`` replaced (grid
    indices (M, L) of sorted snapped ``k`` (M, n), each level with ``epsilon``, uniforms ``uu``
    (M, L, 2)): the reference of its numbers, bit for bit."""
    m_rows, n = k.shape
    n_lev = len(levels)
    half_eps = 0.5 * epsilon
    qn = np.asarray(levels, dtype=np.float64)[:, None] * n
    ranks = np.arange(n + 1, dtype=np.float64)
    gap_util = -half_eps * np.abs(ranks - qn)
    below_util = -half_eps * np.maximum(ranks[:-1] - qn, 0.0)
    logits = np.empty((m_rows, n_lev, 2 * n + 3))
    kk = np.empty((m_rows, n + 2), dtype=np.int64)
    kk[:, 0] = -1
    kk[:, -1] = grid_size + 1
    kk[:, 1:-1] = k
    gap_count = np.maximum(kk[:, 1:] - kk[:, :-1] - 1, 0)
    with np.errstate(divide="ignore"):
        log_gap = np.log(gap_count)
    np.add(log_gap[:, None, :], gap_util, out=logits[:, :, : n + 1])
    if n:
        repeat = np.zeros((m_rows, n + 1), dtype=bool)
        np.equal(k[:, 1:], k[:, :-1], out=repeat[:, 1:-1])
        last_pos = np.where(repeat[:, 1:], n, ranks[1:])
        upper = np.minimum.accumulate(last_pos[:, ::-1], axis=1)[:, ::-1]
        above = np.maximum(qn[None] - upper[:, None, :], 0.0)
        above *= -half_eps
        above += below_util
        above += np.where(repeat[:, :-1], -np.inf, 0.0)[:, None, :]
        logits[:, :, n + 1 : 2 * n + 1] = above
        n_lo = np.where(k[:, 0] == 0, upper[:, 0], 0)
        n_hi = n - (k < grid_size).sum(axis=1)
    else:
        n_lo = n_hi = np.zeros(m_rows, dtype=np.int64)
    log_end = math.log(endpoint_mass * (grid_size + 1)) if endpoint_mass > 0 else -math.inf
    logits[:, :, -2] = log_end - half_eps * np.maximum(qn.T - n_lo[:, None], 0.0)
    logits[:, :, -1] = log_end - half_eps * np.maximum((n - n_hi)[:, None] - qn.T, 0.0)
    logits -= logits.max(axis=-1, keepdims=True)
    np.exp(logits, out=logits)
    cum = np.cumsum(logits, axis=-1)
    b = (cum < (1.0 - uu[..., :1]) * cum[..., -1:]).sum(axis=-1)
    np.minimum(b, 2 * n + 2, out=b)
    rows = np.arange(m_rows)[:, None]
    gi = np.minimum(b, n)
    count = gap_count[rows, gi]
    in_gap = kk[rows, gi] + 1 + np.minimum((uu[..., 1] * count).astype(np.int64), count - 1)
    at_value = k[rows, np.clip(b - (n + 1), 0, max(n - 1, 0))] if n else in_gap
    j = np.where(b <= n, in_gap, at_value)
    j[b == 2 * n + 1] = 0
    j[b == 2 * n + 2] = grid_size
    return j


def numpy_snap_values(x, lo, hi, grid_size):
    """The numpy snap (sorted) of the values in ``[lo, hi]`` and the numpy grid values map."""
    k = np.sort(np.clip(np.rint((x - lo) * (grid_size / (hi - lo))), 0, grid_size).astype(
        np.int64), axis=1)  # fmt: skip

    def values(j):
        v = lo + (hi - lo) * (j / grid_size)
        return np.where(j >= grid_size, hi, np.minimum(v, hi))

    return k, values


def test_compiled_grid_mechanism_has_the_bits_of_the_numpy_code() -> None:
    """dp_quantiles (compiled kernels) == the numpy code it replaced, to the last bit, with the
    same Generator state afterwards: ties, end points, values half-way between grid points
    (rint rounds half to even), no data, extreme eps, grids from 1 to 2**40 (both sorts of
    snap_sorted), one to three levels."""
    rng = np.random.default_rng(20)
    for trial in range(150):
        n, rows = int(rng.integers(0, 25)), int(rng.integers(1, 5))
        x = [
            rng.random((rows, n)),
            (rng.random((rows, n)) < 0.7) * 1.0,
            rng.choice([0.0, 0.2, 0.4, 1.0], size=(rows, n)),
            rng.normal(0.5, 0.6, (rows, n)),
            rng.integers(0, 129, (rows, n)) / 128,  # half-way between points of a 64-grid
        ][trial % 5]
        lo, hi = (0.0, 1.0) if trial % 3 else (-0.3, 2.5)
        eps = float(rng.choice([1e-300, 1e-3, 1.0, 50.0, 1e300]))
        m = 64 if trial % 5 == 4 else int(rng.choice([1, 5, 64, 2**16, 2**40]))
        w = float(rng.choice([0.0, 0.1, 2.0]))
        qs = [0.0, 1.0, 0.5] if trial % 7 == 0 else list(rng.random(int(rng.integers(1, 4))))
        seed = int(rng.integers(2**31))
        got_rng = np.random.default_rng(seed)
        got = dp_quantiles(x, qs, eps, lo, hi, rng=got_rng, grid_size=m, endpoint_mass=w)
        ref_rng = np.random.default_rng(seed)
        k, values = numpy_snap_values(np.clip(x, lo, hi), lo, hi, m)
        uu = ref_rng.random((rows, len(qs), 2))
        ref = values(numpy_grid_quantile(k, qs, eps / len(qs), m, w, uu))
        np.testing.assert_array_equal(got.view(np.uint64), ref.view(np.uint64))
        assert got_rng.random() == ref_rng.random()


@pytest.mark.parametrize(
    "n_runs, n_arms, window, eps",
    [(7, 3, 20, 1.0), (40, 2, 200, 1.0), (5, 4, 13, 1e6), (3, 2, 1, 0.3)],
)
def test_windowed_grid_has_the_bits_of_the_numpy_code(n_runs, n_arms, window, eps) -> None:
    """WindowedSensitivity (grid, float sampler) == the numpy code it replaced (windows filled
    in one step estimated in the order of the replications, one rng.random((full, 2, 2)) per
    step), and the fused kernel window_update_grid, which draws from the Generator itself,
    == both."""
    from dpbandits.quantiles.kernels import window_update_grid

    ws = WindowedSensitivity(n_runs, n_arms, eps, window=window, rng=21)
    s = n_runs * n_arms
    buf, fill = np.zeros((s, window)), np.zeros(s, dtype=np.int64)
    values, n_est = np.full(s, 1.0), np.zeros(s, dtype=np.int64)
    ref_rng = np.random.default_rng(21)
    f_buf, f_fill = np.zeros((s, window)), np.zeros(s, dtype=np.int64)
    f_values, f_n_est = np.full(s, 1.0), np.zeros(s, dtype=np.int64)
    f_rng, scratch = np.random.default_rng(21), np.empty(n_runs, dtype=np.intp)
    levels = np.array([0.1, 0.9])
    rng = np.random.default_rng(22)
    for t in range(4 * window * n_arms):
        a = rng.integers(0, n_arms, size=n_runs)
        x = np.clip(rng.normal(0.5, 0.4, n_runs) if t % 2 else rng.choice([0.0, 0.3, 1.0], n_runs),
                    0.0, 1.0)  # fmt: skip
        flat = np.arange(n_runs) * n_arms + a
        ws.update_flat(flat, x)
        window_update_grid(f_buf, f_fill, f_values, f_n_est, flat, x, levels, eps / 2, 0.0,
                           1.0, 64, DEFAULT_ENDPOINT_MASS, 1e-6, f_rng, scratch)  # fmt: skip
        # the numpy code
        pos = fill[flat]
        buf[flat, pos] = x
        fill[flat] = pos + 1
        full = flat[pos + 1 == window]
        if full.size:
            k, grid_values = numpy_snap_values(buf[full], 0.0, 1.0, 64)
            uu = ref_rng.random((full.size, 2, 2))
            p = grid_values(numpy_grid_quantile(k, (0.1, 0.9), eps / 2, 64, 0.1, uu))
            values[full] = np.maximum(np.abs(p[:, 1] - p[:, 0]), 1e-6)
            n_est[full] += 1
            fill[full] = 0
    assert n_est.sum() > 0
    for v, n_e, f in ((ws.values.ravel(), ws.n_estimates.ravel(), ws.fill.ravel()),
                      (f_values, f_n_est, f_fill)):  # fmt: skip
        np.testing.assert_array_equal(v.view(np.uint64), values.view(np.uint64))
        np.testing.assert_array_equal(n_e, n_est)
        np.testing.assert_array_equal(f, fill)
    assert ws._rng.random() == ref_rng.random() == f_rng.random()

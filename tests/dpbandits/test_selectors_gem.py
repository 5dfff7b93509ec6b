"""GEM, mGEM and combined GEM (§IV-C, §IV-D, §VII Alg. 2) against independently computed laws."""

import math
import tracemalloc

import numpy as np
import pytest
from scipy.stats import spearmanr

from dpbandits import selectors
from dpbandits.selectors.gem import gem_scores
from tests.dpbandits.test_selectors_noisy_max import rnm_exponential_pmf
from tests.stats import assert_counts_match_pmf

N = 150_000


def naive_gem_scores(q, d, t):
    """eq. (6) with two Python loops."""
    k = len(q)
    return np.array(
        [
            min(((q[a] - t * d[a]) - (q[b] - t * d[b])) / (d[a] + d[b]) for b in range(k))
            for a in range(k)
        ]
    )


def gem_pmf(q, d, eps, beta, sign, noise="exponential"):
    """Exact selection law of (m)GEM: RNM with D = 1 on q' (naive), eps/2 scaling."""
    t = sign * 2 * math.log(len(q) / beta) / eps
    qp = naive_gem_scores(q, d, t)
    u = eps * qp / 2
    if noise == "gumbel":
        w = np.exp(u - u.max())
        return w / w.sum()
    return rnm_exponential_pmf(u)


def test_gem_scores_match_naive_loops_and_chunking():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(7, 9)) * 3
    d = rng.uniform(0.1, 2.0, size=(7, 9))
    for t in (0.0, 1.7, -2.3):
        full = gem_scores(q, d, t, method="pairwise")
        expected = np.array([naive_gem_scores(q[r], d[r], t) for r in range(7)])
        np.testing.assert_allclose(full, expected, rtol=1e-12, atol=1e-12)
        assert np.all(full <= 0) and np.all(full.max(axis=1) == 0)
        # chunking, and the Pareto-front shortcut, give bit-identical results
        for method in ("pairwise", "front", "hull", "auto"):
            for budget in (1, 5, 40, 81, 2**21):
                out = gem_scores(q, d, t, max_elements=budget, method=method)
                np.testing.assert_array_equal(out, full)


@pytest.mark.parametrize("kind", ["random", "ties", "concave", "shared_d", "collinear"])
def test_gem_shortcuts_match_brute_force(kind):
    rng = np.random.default_rng(1)
    r, k = 300, 40
    if kind == "random":
        q, d = rng.normal(size=(r, k)), rng.uniform(0.5, 2, size=(r, k))
    elif kind == "ties":
        q, d = rng.integers(0, 3, (r, k)) * 1.0, rng.integers(1, 4, (r, k)) * 1.0
    elif kind == "concave":  # every point on the front: falls back to the brute force
        d = np.sort(rng.uniform(0.5, 2, size=(r, k)), axis=1)
        q = -5 * (d - 1.2) ** 2
    elif kind == "collinear":
        d = rng.uniform(0.5, 2, size=(r, k))
        q = 3 * d
    else:
        q, d = rng.normal(size=(r, k)), np.broadcast_to(rng.uniform(0.5, 2, size=k), (r, k))
    for t in (0.0, 2.0, -3.0, -15.0, -300.0):
        brute = gem_scores(q, d, t, method="pairwise")
        # the Pareto front is exact bit for bit; the hull up to rounding in near-ties
        np.testing.assert_array_equal(gem_scores(q, d, t, method="front"), brute)
        np.testing.assert_allclose(
            gem_scores(q, d, t, method="hull"), brute, rtol=1e-12, atol=1e-12
        )
    with pytest.raises(ValueError, match="method"):
        gem_scores(q, d, 1.0, method="nope")


# positively correlated scores/sensitivities (mGEM's setting) and negatively correlated (GEM's)
CASES = {
    "positive": (np.array([0.0, 1.0, 2.0, 2.5]), np.array([0.3, 0.6, 1.2, 2.0])),
    "negative": (np.array([0.0, 1.0, 2.0, 2.5]), np.array([2.0, 1.2, 0.6, 0.3])),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name,sign", [("gem", 1.0), ("mgem", -1.0)])
def test_gem_law_matches_exact_pmf(name, sign, case):
    q, d = CASES[case]
    eps, beta = 3.0, 0.05
    sel = selectors.make(name, epsilon=eps, beta=beta)
    idx = sel.select(np.broadcast_to(q, (N, 4)), d, rng=[int(sign > 0), len(case)])
    assert_counts_match_pmf(np.bincount(idx, minlength=4), gem_pmf(q, d, eps, beta, sign))


@pytest.mark.parametrize("name,sign", [("gem", 1.0), ("mgem", -1.0)])
def test_gem_gumbel_is_exponential_mechanism_on_normalised_scores(name, sign):
    q, d = CASES["positive"]
    eps, beta = 2.0, 0.2
    sel = selectors.make(name, epsilon=eps, beta=beta, noise="gumbel")
    idx = sel.select(np.broadcast_to(q, (N, 4)), d, rng=3)
    assert_counts_match_pmf(
        np.bincount(idx, minlength=4), gem_pmf(q, d, eps, beta, sign, noise="gumbel")
    )


def test_gem_and_mgem_differ_as_the_paper_says():
    # §IV-C/D: GEM penalises high sensitivity, mGEM low sensitivity (positive correlation case)
    q, d = CASES["positive"]
    p_gem = gem_pmf(q, d, 3.0, 0.05, 1.0)
    p_mgem = gem_pmf(q, d, 3.0, 0.05, -1.0)
    assert p_mgem[3] > p_gem[3]


def combined_pmf(q, d, eps, c, beta):
    rho = np.nan if np.ptp(d) == 0 or np.ptp(q) == 0 else spearmanr(q, d).statistic
    bit = 1 if (np.isnan(rho) or rho >= 0) else 0
    keep = math.exp(c * eps) / (math.exp(c * eps) + 1)
    p1 = keep if bit == 1 else 1 - keep
    eg = eps - c * eps
    return p1 * gem_pmf(q, d, eg, beta, -1.0) + (1 - p1) * gem_pmf(q, d, eg, beta, 1.0)


@pytest.mark.parametrize("case", ["positive", "negative", "constant_d"])
def test_combined_gem_law(case):
    if case == "constant_d":  # Spearman is NaN -> counts as 0 -> bit 1 (mGEM favoured)
        q, d = CASES["positive"][0], np.full(4, 0.7)
    else:
        q, d = CASES[case]
    eps, c, beta = 4.0, 0.6, 0.05
    sel = selectors.make("combined_gem", epsilon=eps, c=c, beta=beta)
    assert sel.epsilon_c == pytest.approx(c * eps) and sel.epsilon_g == pytest.approx(eps - c * eps)
    idx = sel.select(np.broadcast_to(q, (N, 4)), d, rng=7)
    assert_counts_match_pmf(np.bincount(idx, minlength=4), combined_pmf(q, d, eps, c, beta))


def test_combined_gem_bit_matters():
    # the mixture weights differ enough that using the wrong branch would be detected above
    q, d = CASES["negative"]
    wrong = combined_pmf(q, -d + 3, 4.0, 0.6, 0.05)
    right = combined_pmf(q, d, 4.0, 0.6, 0.05)
    assert np.max(np.abs(wrong - right)) > 0.02


def test_gem_memory_bounded_for_large_k():
    k = 4000  # one (K, K) float64 matrix would be 128 MB
    rng = np.random.default_rng(1)
    q = rng.normal(size=(1, k))
    d = rng.uniform(0.5, 1.5, size=(1, k))
    sel = selectors.make("mgem", epsilon=1.0)
    tracemalloc.start()
    try:
        idx = sel.select(q, d, rng=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 <= idx[0] < k
    assert peak < 64 * 2**20, f"peak traced memory {peak / 2**20:.1f} MB"

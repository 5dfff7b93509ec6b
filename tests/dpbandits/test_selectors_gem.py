"""GEM, mGEM and combined GEM (§IV-C, §IV-D, §VII Alg. 2) against independently computed laws."""

import math
import tracemalloc

import numpy as np
import pytest
from scipy.stats import spearmanr

from dpbandits import selectors
from dpbandits.core.arms import read_only
from dpbandits.selectors import gem, noisy_max
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
    else:  # one row of sensitivities for every row (a copy: the layout is not what is tested
        # here, and a broadcast view would compile the kernels once more for strided arrays)
        q, d = rng.normal(size=(r, k)), np.tile(rng.uniform(0.5, 2, size=k), (r, 1))
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


# -- the compiled kernels draw numpy's numbers: numpy reference loops give the same indices ----
@pytest.mark.parametrize("name,sign", [("gem", 1.0), ("mgem", -1.0)])
@pytest.mark.parametrize("k", [2, 12])
def test_gem_kernel_matches_numpy_reference_loop(name, sign, k):
    rng = np.random.default_rng(30)
    q, d = rng.normal(size=(200, k)), rng.uniform(0.1, 2.0, size=(200, k))
    eps, beta = 1.5, 0.05
    got = selectors.make(name, epsilon=eps, beta=beta).select(q, d, rng=31)
    t = sign * 2 * math.log(k / beta) / eps
    g = np.random.default_rng(31)
    ref = [int(np.argmax(g.standard_exponential(k) + naive_gem_scores(q[r], d[r], t) * (eps / 2)))
           for r in range(200)]  # fmt: skip
    np.testing.assert_array_equal(got, ref)


def test_combined_gem_kernel_matches_numpy_reference():
    # the bit from heuristics.spearman, one uniform per row first, then GEM/mGEM row by row
    rng = np.random.default_rng(32)
    q = rng.integers(0, 4, size=(300, 5)) * 1.0  # ties and constant rows
    d = rng.integers(1, 3, size=(300, 5)) * 0.5
    eps, c, beta = 2.0, 0.6, 0.05
    got = selectors.make("combined_gem", epsilon=eps, c=c, beta=beta).select(q, d, rng=33)
    g = np.random.default_rng(33)
    bit = ~(selectors.spearman(q, d) < 0)
    flip = g.random(300) >= 1 / (1 + math.exp(-c * eps))
    eg = eps - c * eps
    tg = 2 * math.log(5 / beta) / eg
    ref = []
    for r in range(300):
        t = -tg if bit[r] ^ flip[r] else tg
        ref.append(
            int(np.argmax(g.standard_exponential(5) + naive_gem_scores(q[r], d[r], t) * (eg / 2)))
        )
    np.testing.assert_array_equal(got, ref)


def test_spearman_bit_kernel_matches_heuristics():
    rng = np.random.default_rng(34)
    rq, rd = np.empty(40, dtype=np.int64), np.empty(40, dtype=np.int64)
    for k in (2, 3, 7, 32, 33, 40):
        q = rng.integers(0, 3, size=(400, k)) * 1.0
        d = rng.integers(0, 3, size=(400, k)) * 1.0 + rng.normal(size=(400, 1)) * (k == 40)
        expected = ~(selectors.spearman(q, d) < 0)
        got = [gem.spearman_nonnegative_row(q[r], d[r], rq[:k], rd[:k]) for r in range(400)]
        np.testing.assert_array_equal(got, expected)


def test_gem_row_kernel_is_the_batch_row():
    rng = np.random.default_rng(35)
    # read-only rows, as select hands them to select_batch (the row kernels' one type)
    q, d = read_only(rng.normal(size=(40, 3))), read_only(rng.uniform(0.5, 2.0, size=(40, 3)))
    sel = selectors.make("mgem", epsilon=1.0, noise="laplace")
    batch = sel.select_batch(q, d, np.random.default_rng(36))
    g, s, u = np.random.default_rng(36), np.empty(3), np.empty(3)
    code = noisy_max.noise_code("laplace")
    rows = [gem.gem_row(q[r], d[r], sel.t(3), 0.5, code, 0, s, u, g) for r in range(40)]
    np.testing.assert_array_equal(batch, rows)
    # a non-finite q - t d: -1 and nothing drawn
    state = g.bit_generator.state
    assert gem.gem_row(read_only(np.array([1e308, 0.0])), read_only(np.array([1.0, 1e308])),
                       -10.0, 0.5, 0, 0, s, u, g) == -1  # fmt: skip
    assert g.bit_generator.state == state


def test_gem_overflow_raises_before_drawing():
    g = np.random.default_rng(37)
    state = g.bit_generator.state
    with pytest.raises(
        ValueError, match="epsilon is too small for GEM/mGEM with these sensitivities"
    ):
        selectors.make("gem", epsilon=1.0).select_batch(  # read-only, as select hands them
            read_only(np.array([[0.0, 1.0], [-1.7e308, 0.0]])),
            read_only(np.array([[1.0, 1.0], [1e307, 1.0]])),
            g,
        )
    assert g.bit_generator.state == state

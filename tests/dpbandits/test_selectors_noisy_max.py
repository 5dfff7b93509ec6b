"""RNM, exponential mechanism, permute-and-flip and RNMH against closed forms (closed form)."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from dpbandits import selectors
from dpbandits.core.arms import read_only
from dpbandits.core.jit import generator_address, generator_at, kernel
from dpbandits.selectors import noisy_max
from tests.stats import (
    assert_counts_match_pmf,
    assert_proportion_close,
    assert_same_distribution,
)

N = 200_000


def rnm_exponential_pmf(u):
    """P[argmax(u + E)] for i.i.d. standard exponential E, by numerical integration.

    P[a] = int_0^inf e^{-z} prod_{b != a} P(E_b < u_a + z - u_b) dz. Independent of the
    implementation (no permute-and-flip, no shifting tricks).
    """
    u = np.asarray(u, float)
    k = u.size
    out = np.empty(k)
    for a in range(k):
        others = np.delete(u, a)

        def f(z, a=a, others=others):
            lim = u[a] + z - others
            return math.exp(-z) * np.prod(np.where(lim > 0, -np.expm1(-np.maximum(lim, 0)), 0.0))

        # the integrand has kinks where u_a + z = u_b
        edges = [0.0, *sorted({float(x) for x in others - u[a] if x > 0}), np.inf]
        out[a] = sum(
            integrate.quad(f, lo, hi, limit=200)[0] for lo, hi in itertools.pairwise(edges)
        )
    return out / out.sum()


def rnm_laplace_pmf(u):
    """P[argmax(u + L)] for i.i.d. standard Laplace L, by numerical integration."""
    u = np.asarray(u, float)
    k = u.size

    def cdf(x):
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.maximum(x, 0)))

    out = np.empty(k)
    for a in range(k):

        def f(z, a=a):
            return 0.5 * math.exp(-abs(z)) * np.prod(cdf(u[a] + z - np.delete(u, a)))

        pts = sorted({0.0, *[float(x) for x in np.delete(u, a) - u[a]]})
        edges = [-np.inf, *pts, np.inf]
        out[a] = sum(
            integrate.quad(f, lo, hi, limit=200)[0] for lo, hi in itertools.pairwise(edges)
        )
    return out / out.sum()


def permute_and_flip_pmf(u):
    """Exact permute-and-flip pmf by enumerating the K! visiting orders (p_a = exp(u_a))."""
    p = np.exp(np.asarray(u, float) - np.max(u))
    k = p.size
    out = np.zeros(k)
    perms = list(itertools.permutations(range(k)))
    for perm in perms:
        reach = 1.0
        for a in perm:
            out[a] += reach * p[a]
            reach *= 1 - p[a]
    return out / len(perms)


@pytest.mark.parametrize("eps,gap,d", [(1.0, 0.7, (1.0, 1.0)), (0.3, 2.0, (0.5, 2.0))])
def test_rnm_two_candidates_closed_form(eps, gap, d):
    # closed form: P[pick 1] = 1/2 exp(-eps (q2 - q1)/(2D)), D = max d (so d = (0.5, 2) uses D = 2).
    q = np.array([0.0, gap])
    idx = selectors.make("rnm", epsilon=eps).select(np.broadcast_to(q, (N, 2)), d, rng=1)
    p = 0.5 * math.exp(-eps * gap / (2 * max(d)))
    assert_proportion_close(int((idx == 0).sum()), N, p)


def test_rnm_exponential_matches_integral_pmf():
    q = np.array([0.0, 0.4, 1.0, 1.1, -0.5])
    d = np.array([0.3, 1.5, 1.0, 0.2, 0.7])
    eps = 2.0
    idx = selectors.make("rnm", epsilon=eps).select(np.broadcast_to(q, (N, 5)), d, rng=2)
    pmf = rnm_exponential_pmf(q * eps / (2 * d.max()))
    assert_counts_match_pmf(np.bincount(idx, minlength=5), pmf)


def test_rnm_laplace_matches_integral_pmf():
    q = np.array([0.0, 0.4, 1.0])
    eps = 1.5
    idx = selectors.make("rnm", epsilon=eps, noise="laplace").select(
        np.broadcast_to(q, (N, 3)), 2.0, rng=3
    )
    pmf = rnm_laplace_pmf(q * eps / (2 * 2.0))
    assert_counts_match_pmf(np.bincount(idx, minlength=3), pmf)


@pytest.mark.parametrize(
    "name,params", [("exponential_mechanism", {}), ("rnm", {"noise": "gumbel"})]
)
def test_exponential_mechanism_is_softmax(name, params):
    q = np.array([0.0, 0.5, 1.0, 3.0])
    d = np.array([1.0, 0.5, 2.0, 1.0])
    eps = 1.2
    idx = selectors.make(name, epsilon=eps, **params).select(np.broadcast_to(q, (N, 4)), d, rng=4)
    w = np.exp(eps * q / (2 * d.max()))
    assert_counts_match_pmf(np.bincount(idx, minlength=4), w / w.sum())


def test_permute_and_flip_matches_enumeration_and_exponential_rnm():
    q = np.array([0.0, 1.0, 1.0, 2.5, 0.3])
    eps = 1.0
    qb = np.broadcast_to(q, (N, 5))
    pf = selectors.make("permute_and_flip", epsilon=eps).select(qb, 1.0, rng=5)
    rnm = selectors.make("rnm", epsilon=eps).select(qb, 1.0, rng=6)
    u = q * eps / 2
    exact = permute_and_flip_pmf(u)
    # Ding et al. (2021): the two laws coincide; check the oracles agree too.
    np.testing.assert_allclose(exact, rnm_exponential_pmf(u), rtol=1e-7)
    assert_counts_match_pmf(np.bincount(pf, minlength=5), exact)
    assert_same_distribution(pf, rnm)


def test_rnmh_two_candidates_closed_form():
    # closed form: P[pick 1] = exp(-eps (q2-q1)/(2 d1)) / (1 + d2/d1)
    eps, q, d = 1.0, np.array([0.0, 0.6]), np.array([2.0, 0.5])
    idx = selectors.make("rnmh", epsilon=eps).select(np.broadcast_to(q, (N, 2)), d, rng=7)
    p = math.exp(-eps * 0.6 / (2 * d[0])) / (1 + d[1] / d[0])
    assert_proportion_close(int((idx == 0).sum()), N, p)


def test_rnmh_sec4a_construction_probabilities():
    # §IV-A: under q candidate 0 (tiny d) is (essentially) never chosen, under q' w.p. 1-e^{-eps/4}.
    eps = 1.0
    sel = selectors.make("rnmh", epsilon=eps)
    a = sel.select(np.broadcast_to([0.0, 0.5], (N, 2)), [1e-3, 1.0], rng=8)
    b = sel.select(np.broadcast_to([0.0, -0.5], (N, 2)), [1e-3, 1.0], rng=9)
    assert (a == 0).sum() == 0
    # two-candidate form with the lower-scoring candidate (index 1, d = 1) in the role of "1"
    p_pick_1 = math.exp(-eps * 0.5 / (2 * 1.0)) / (1 + 1e-3 / 1.0)
    assert_proportion_close(int((b == 1).sum()), N, p_pick_1)


def test_noisy_max_exact_shift_with_large_scores():
    # eps = 1e3 and scores ~1e6 differing by 1e-3 in units of D: still the right law.
    eps = 1e3
    q = 1e6 + np.array([0.0, 2e-3])
    idx = selectors.make("rnm", epsilon=eps).select(np.broadcast_to(q, (N, 2)), 1.0, rng=10)
    assert_proportion_close(int((idx == 0).sum()), N, 0.5 * math.exp(-eps * 2e-3 / 2))


# -- the compiled kernels draw numpy's numbers: a numpy reference loop gives the same indices --
def _reference_noise(noise, rng, k):
    """Standard noise as the former numpy code drew it, for one row of ``k`` candidates."""
    if noise == "exponential":
        return rng.standard_exponential(k)
    u = rng.random(k)
    if noise == "gumbel":
        return -np.log(-np.log(u))
    t = u - 0.5
    return np.copysign(np.log1p(np.abs(t) * -2.0), t)


@pytest.mark.parametrize("noise", ["exponential", "gumbel", "laplace"])
@pytest.mark.parametrize("k", [2, 10])
def test_rnm_kernel_matches_numpy_reference_loop(noise, k):
    rng = np.random.default_rng(20)
    q = rng.normal(size=(300, k))
    d = rng.uniform(0.1, 2.0, size=(300, k))
    eps = 0.8
    got = selectors.make("rnm", epsilon=eps, noise=noise).select(q, d, rng=21)
    ref_rng = np.random.default_rng(21)
    ref = []
    for r in range(300):
        u = (q[r] - q[r].max()) * (eps / (2.0 * d[r].max()))
        ref.append(int(np.argmax(_reference_noise(noise, ref_rng, k) + u)))
    np.testing.assert_array_equal(got, ref)


def test_permute_and_flip_and_rnmh_kernels_match_numpy_reference_loops():
    rng = np.random.default_rng(22)
    q, d, eps = rng.normal(size=(300, 5)), rng.uniform(0.1, 2.0, size=(300, 5)), 1.3
    pf = selectors.make("permute_and_flip", epsilon=eps).select(q, d, rng=23)
    rh = selectors.make("rnmh", epsilon=eps).select(q, d, rng=24)
    g_pf, g_rh = np.random.default_rng(23), np.random.default_rng(24)
    ref_pf, ref_rh = [], []
    for r in range(300):
        x = g_pf.standard_exponential(5) + (q[r] - q[r].max()) * (eps / (2.0 * d[r].max()))
        ref_pf.append(int(np.argmin(np.where(x < 0.0, np.inf, x))))
        z = g_rh.standard_exponential(5) * (d[r] * 2.0 / eps) + (q[r] - q[r].max())
        ref_rh.append(int(np.argmax(z)))
    np.testing.assert_array_equal(pf, ref_pf)
    np.testing.assert_array_equal(rh, ref_rh)


def test_row_kernels_are_the_batch_rows():
    # the public one-row kernels, called row by row with one Generator, give select_batch
    rng = np.random.default_rng(25)
    # read-only rows, as select hands them to select_batch (the row kernels' one type)
    q, d, eps = read_only(rng.normal(size=(50, 4))), read_only(rng.uniform(0.1, 2.0, (50, 4))), 0.9
    for noise in noisy_max.NOISES:
        batch = selectors.make("rnm", epsilon=eps, noise=noise).select_batch(
            q, d, np.random.default_rng(26)
        )
        g, code = np.random.default_rng(26), noisy_max.noise_code(noise)
        rows = [noisy_max.rnm_row(q[r], noisy_max.rnm_inverse_scale(d[r], eps), code, g)
                for r in range(50)]  # fmt: skip
        np.testing.assert_array_equal(batch, rows)
    batch = selectors.make("permute_and_flip", epsilon=eps).select_batch(
        q, d, np.random.default_rng(27)
    )
    g = np.random.default_rng(27)
    rows = [noisy_max.permute_and_flip_row(q[r], noisy_max.rnm_inverse_scale(d[r], eps), g)
            for r in range(50)]  # fmt: skip
    np.testing.assert_array_equal(batch, rows)
    batch = selectors.make("rnmh", epsilon=eps).select_batch(q, d, np.random.default_rng(28))
    g = np.random.default_rng(28)
    np.testing.assert_array_equal(
        batch, [noisy_max.rnmh_row(q[r], d[r], eps, g) for r in range(50)]
    )


@kernel
def _normalised_gaps(q, lam, out):
    # the selectors' row loops' u = (q - max q) * lam, entry by entry
    for r in range(q.shape[0]):
        m = noisy_max.row_maximum(q, r)
        for a in range(q.shape[1]):
            out[r, a] = noisy_max.scaled_gap(q[r, a], m, lam[r])


@kernel
def _add_standard_noise(code, u, out, rng):
    for r in range(u.shape[0]):
        for a in range(u.shape[1]):
            out[r, a] = u[r, a] + noisy_max.standard_noise(code, rng)


def test_extreme_inverse_scale_keeps_maximisers_and_no_nan():
    # eps / (2D) overflows (tiny D): every non-maximal gap is -inf, so the maximiser always wins
    q = np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 2.0]])
    d = np.array([[1e-308, 1e-308, 1e-308], [1.0, 1.0, 1.0]])
    idx = selectors.make("rnm", epsilon=1e3).select(np.repeat(q, 500, axis=0),
                                                     np.repeat(d, 500, axis=0), rng=29)  # fmt: skip
    assert np.all(idx[:500] == 1) and set(idx[500:]) == {0, 2}
    u = np.empty_like(q)
    with np.errstate(divide="ignore"):
        _normalised_gaps(q, 1.0 / np.array([0.0, 1.0]), u)  # scales 0 and 1
    np.testing.assert_array_equal(u, [[-np.inf, 0.0, -np.inf], [0.0, -3.0, 0.0]])
    for noise in noisy_max.NOISES:
        noisy = np.empty_like(u)
        _add_standard_noise(noisy_max.noise_code(noise), u, noisy, np.random.default_rng(1))
        assert not np.isnan(noisy).any() and np.all(noisy[u == -np.inf] == -np.inf)
    with pytest.raises(ValueError, match="noise must be one of"):
        noisy_max.rnm_select(q, np.ones((2, 1)), "cauchy", np.random.default_rng(1))


@kernel
def _draw_by_address(address, out):
    rng = generator_at(address)
    for i in range(out.shape[0]):
        out[i] = rng.standard_exponential() + rng.random() + rng.standard_normal()


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_generator_by_address_draws_the_generators_numbers(bit_generator):
    # select_batch hands its Generator to the kernel by address: the same numbers, and the
    # caller's Generator moves on as if it had drawn them itself
    g, ref = np.random.Generator(bit_generator(5)), np.random.Generator(bit_generator(5))
    out = np.empty(500)
    _draw_by_address(generator_address(g), out)
    expected = [ref.standard_exponential() + ref.random() + ref.standard_normal() for _ in out]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(g.integers(2**62, size=8), ref.integers(2**62, size=8))


def test_row_maxima_is_a_left_to_right_numpy_maximum():
    """row_maxima (what random stopping reads its row maxima from) takes each row's maximum as
    ``numpy.maximum`` folded left to right: NaN propagates, a tie keeps the later value (which
    decides the sign of a zero), infinities are ordinary values."""
    g = np.random.default_rng(3)
    specials = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 5e-324])
    x = g.choice(specials, size=(4000, 5))
    x[:1000] = g.normal(size=(1000, 5))
    out = np.empty(x.shape[0])
    noisy_max.row_maxima(x, out)
    for r in range(x.shape[0]):
        ref = x[r, 0]
        for v in x[r, 1:]:
            ref = np.maximum(ref, v)
        assert (math.isnan(ref) and math.isnan(out[r])) or (
            out[r] == ref and math.copysign(1.0, out[r]) == math.copysign(1.0, ref)
        ), (x[r], out[r], ref)

"""RNM, exponential mechanism, permute-and-flip and RNMH against closed forms (closed form)."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from dpbandits import selectors
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

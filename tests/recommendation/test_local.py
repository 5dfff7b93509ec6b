"""Local-DP selection of paper 001: closed forms (Eqs. 2-5), clipping bounds, the cut-off of
Algorithm 2, masked selection and privacy audits of every local selector."""

import math

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.audit.selector import NeighbouringPair, estimate_privacy_loss
from dpbandits.recommendation.local import (
    Clipped,
    Scaled,
    clip_scores,
    cutoff_mask,
    rr_pmf,
    scale_scores,
    select_among,
    softmax_pmf,
)
from tests.stats import assert_counts_match_pmf

N = 200_000


def _counts(sel, q, n=N, rng=0, **kw):
    idx = sel.select(np.broadcast_to(q, (n, q.size)), rng=rng, **kw)
    return np.bincount(idx, minlength=q.size)


# -- Eq. 2: randomised response --------------------------------------------------------------


def test_rr_pmf_matches_eq2():
    s = np.array([0.2, 0.9, 0.1, 0.4])
    eps, a = 1.3, 4
    p = rr_pmf(s, eps)
    top = math.exp(eps) / (a - 1 + math.exp(eps))
    assert p[1] == pytest.approx(top, rel=1e-12)
    assert np.allclose(p[[0, 2, 3]], 1 / (a - 1 + math.exp(eps)), rtol=1e-12)
    assert p.sum() == pytest.approx(1.0)


def test_rr_pmf_with_ties_sums_to_one_and_splits_the_argmax():
    p = rr_pmf(np.array([[0.5, 0.5, 0.1]]), 2.0)
    assert p.sum() == pytest.approx(1.0)
    assert p[0, 0] == pytest.approx(p[0, 1])
    assert p[0, 0] > p[0, 2]


@pytest.mark.parametrize("s", [[0.3, 0.8, 0.1, 0.5, 0.2], [0.7, 0.7, 0.1]])
def test_krr_draws_follow_eq2(s):
    s = np.array(s)
    sel = selectors.make("krr", epsilon=1.0)
    assert_counts_match_pmf(_counts(sel, s), rr_pmf(s, 1.0))


def test_rr_after_cutoff_sees_only_the_kept_candidates():
    # 6 candidates, the cut-off keeps 3: Eq. 2 with a = 3, zero elsewhere
    private = np.array([0.9, 0.1, 0.5, 0.3, 0.8, 0.2])
    public = np.array([1.0, 0.1, 0.9, 0.2, 0.95, 0.3])
    keep = cutoff_mask(public, 0.2)
    assert keep.tolist() == [True, False, True, False, True, False]
    sel = selectors.make("krr", epsilon=0.7)
    idx = select_among(sel, np.tile(private, (N, 1)), np.tile(keep, (N, 1)), rng=3)
    counts = np.bincount(idx, minlength=6)
    expected = np.zeros(6)
    expected[keep] = rr_pmf(private[keep], 0.7)
    assert_counts_match_pmf(counts, expected)


# -- Eqs. 3 and 5: scaled SNM, Gumbel noise = softmax -------------------------------------------


def test_scale_scores_eq3():
    s = np.array([[2.0, 5.0, 3.5], [1.0, 1.0, 1.0]])
    out = scale_scores(s)
    assert np.allclose(out[0], [0.0, 1.0, 0.5])
    assert np.all(out[1] == 0.0)  # all-equal scores: no information, all tied


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_scaled_snm_with_gumbel_noise_is_the_softmax_of_eq5(eps):
    s = np.array([0.05, 0.4, 0.2, 0.9, 0.6])
    sel = Scaled(selectors.make("rnm", epsilon=eps, noise="gumbel"))
    assert_counts_match_pmf(_counts(sel, s, rng=1), softmax_pmf(scale_scores(s), eps, 1.0))


def test_softmax_pmf_is_eq5():
    s = np.array([0.1, 0.7, 0.3])
    eps, delta = 2.0, 0.5
    w = np.exp(s * eps / (2 * delta))
    assert np.allclose(softmax_pmf(s, eps, delta), w / w.sum(), rtol=1e-12)


# -- Eq. 4: clipped SNM ---------------------------------------------------------------------


def test_clip_scores_eq4_bounds():
    rng = np.random.default_rng(0)
    s = rng.uniform(-2, 3, size=(1000, 7))
    pub = rng.uniform(0, 1, size=(1000, 7))
    bound = 0.3
    c = clip_scores(s, pub, bound)
    assert np.all(np.abs(c - pub) <= bound + 1e-15)
    inside = np.abs(s - pub) <= bound
    assert np.array_equal(c[inside], s[inside])  # untouched inside the band
    assert np.allclose(c[~inside], pub[~inside] + np.sign(s - pub)[~inside] * bound)


def test_clipped_snm_runs_with_sensitivity_two_bounds():
    # Gumbel noise of scale 2Δ/eps with Δ = 2 * bound: the softmax of Eq. 5 with Δ = 2 bound;
    # the same draws are far from the softmax with Δ = bound (a halved sensitivity).
    private = np.array([0.9, 0.1, 0.55, 0.3])
    public = np.array([0.5, 0.5, 0.4, 0.2])
    bound, eps = 0.25, 4.0
    sel = Clipped(selectors.make("rnm", epsilon=eps, noise="gumbel"), bound, public)
    counts = _counts(sel, private, rng=2)
    clipped = clip_scores(private, public, bound)
    assert_counts_match_pmf(counts, softmax_pmf(clipped, eps, 2 * bound))
    with pytest.raises(AssertionError):
        assert_counts_match_pmf(counts, softmax_pmf(clipped, eps, bound))


def test_clipped_does_not_converge_to_greedy_on_private_scores():
    # eps -> inf selects the argmax of the *clipped* scores: a plateau below the greedy limit
    private = np.array([0.2, 0.9])
    public = np.array([0.6, 0.1])
    sel = Clipped("rnm", bound=0.1, public=public, epsilon=1e6)
    idx = sel.select(np.tile(private, (1000, 1)), rng=0)
    assert np.all(idx == 0)  # clipped scores (0.5, 0.2): the private best (1) is never chosen


def test_clipped_accepts_batched_public_scores():
    rng = np.random.default_rng(5)
    private = rng.uniform(size=(50, 4))
    public = private.copy()
    sel = Clipped("rnm", bound=1e-3, public=public, epsilon=1e6)
    assert np.array_equal(sel.select(private, rng=1), private.argmax(axis=1))


# -- parameters and errors ------------------------------------------------------------------


def test_wrappers_rebuild_with_epsilon_and_keep_the_inner_selector():
    sel = Scaled(selectors.make("rnm", epsilon=1.0, noise="laplace"))
    other = sel.with_epsilon(2.5)
    assert other.epsilon == 2.5 and other.inner.noise == "laplace"
    c = Clipped("permute_and_flip", bound=0.2, public=[0.1, 0.2], epsilon=0.5)
    c2 = c.with_epsilon(3.0)
    assert c2.epsilon == 3.0 and c2.bound == 0.2 and np.array_equal(c2.public, c.public)
    assert c.private and Clipped("greedy", bound=0.1, public=[0, 0]).private is False
    assert "local-DP" in c.guarantee


def test_same_seed_same_choices():
    q = np.random.default_rng(0).uniform(size=(100, 6))
    sel = Clipped("rnm", bound=0.2, public=q[0], epsilon=1.0)
    assert np.array_equal(sel.select(q, rng=7), sel.select(q, rng=7))
    s = Scaled("exponential_mechanism", epsilon=1.0)
    assert np.array_equal(s.select(q, rng=7), s.select(q, rng=7))


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda: Clipped("rnm", bound=0.0, public=[0.0]), ValueError, "bound"),
        (lambda: Clipped("rnm", bound=True, public=[0.0]), TypeError, "bound"),
        (lambda: Clipped("rnm", bound=0.1, public=[np.nan]), ValueError, "public"),
        (lambda: Scaled("rnm", epsilon=-1.0), ValueError, "epsilon"),
        (lambda: Scaled("no_such_selector"), ValueError, "unknown selector"),
    ],
)
def test_bad_parameters_are_rejected(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="public scores"):
        Clipped("rnm", bound=0.1, public=[0.1, 0.2, 0.3]).select([0.1, 0.2], rng=0)
    with pytest.raises(ValueError, match="needs the public"):
        Clipped("rnm", bound=0.1).select([0.1, 0.2], rng=0)
    with pytest.raises(ValueError, match="finite"):
        Scaled("rnm").select([0.1, np.inf], rng=0)
    with pytest.raises(ValueError, match="gamma"):
        cutoff_mask([0.1, 0.2], 1.5)
    with pytest.raises(TypeError, match="gamma"):
        cutoff_mask([0.1, 0.2], "0.5")
    with pytest.raises(ValueError, match=">= 0"):
        cutoff_mask([-0.1, 0.2], 0.5)
    with pytest.raises(ValueError, match="keeps no candidate"):
        select_among(Scaled("rnm"), [[0.1, 0.2]], [[False, False]], rng=0)


def test_cutoff_mask_rule_of_algorithm_2():
    pub = np.array([[0.5, 1.0, 0.79, 0.8], [0.2, 0.1, 0.0, 0.05]])
    assert cutoff_mask(pub, 0.2).tolist() == [
        [False, True, False, True],
        [True, False, False, False],
    ]
    assert cutoff_mask(pub, 0.0).sum(axis=1).tolist() == [1, 1]
    assert cutoff_mask(pub, 1.0).all()
    elig = np.array([[True, False, True, True], [True] * 4])
    m = cutoff_mask(pub, 0.1, elig)  # the maximum is over the eligible candidates only
    assert m[0].tolist() == [False, False, True, True]


# -- privacy audits (dpbandits.audit.selector) on hard local pairs
# --------------------------------------

EPS = 1.0
DRAWS = 100_000
K = 10
# Local DP: any two private vectors are neighbours. The hardest for a softmax-like selector on
# scores in a box: one candidate at the top and the others at the bottom, and the reverse.
ONE_TOP = NeighbouringPair(
    "local_one_top", np.array([1.0] + [0.0] * (K - 1)), np.array([0.0] + [1.0] * (K - 1)), 1.0
)
SWAP = NeighbouringPair("local_swap", np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5]), 1.0)
PUBLIC = np.full(K, 0.5)

LOCAL = [
    ("rr", lambda: selectors.make("krr", epsilon=EPS)),
    ("scaled_rnm_exp", lambda: Scaled(selectors.make("rnm", epsilon=EPS))),
    ("scaled_rnm_gumbel", lambda: Scaled(selectors.make("rnm", epsilon=EPS, noise="gumbel"))),
    ("scaled_rnm_laplace", lambda: Scaled(selectors.make("rnm", epsilon=EPS, noise="laplace"))),
    ("scaled_pf", lambda: Scaled("permute_and_flip", epsilon=EPS)),
    ("clipped_rnm_exp", lambda: Clipped("rnm", bound=0.25, public=PUBLIC, epsilon=EPS)),
    (
        "clipped_rnm_gumbel",
        lambda: Clipped(selectors.make("rnm", epsilon=EPS, noise="gumbel"), 0.25, PUBLIC),
    ),
]


@pytest.mark.parametrize("name,build", LOCAL, ids=[n for n, _ in LOCAL])
def test_local_selectors_pass_the_privacy_audit(name, build):
    sel = build()
    assert sel.private
    r = estimate_privacy_loss(sel, ONE_TOP, draws=DRAWS, rng=11)
    assert r.passed, str(r)
    # the pair is hard: the plug-in loss is a sizeable part of eps
    assert r.loss > 0.5 * EPS, str(r)
    if not isinstance(sel, Clipped):
        r3 = estimate_privacy_loss(sel, SWAP, draws=DRAWS, rng=12)
        assert r3.passed, str(r3)


def test_audit_catches_clipping_with_half_the_sensitivity():
    # a broken clipped SNM that runs the inner selector with Δ = bound instead of 2 bound
    def broken(q, d, epsilon, rng):
        z = clip_scores(q, 0.5, 0.25)
        return selectors.make("rnm", epsilon=epsilon, noise="gumbel").select(z, 0.25, rng)

    sel = selectors.from_function(broken, name="broken_clipped", epsilon=EPS)
    r = estimate_privacy_loss(sel, ONE_TOP, draws=DRAWS, rng=13)
    assert not r.passed and r.loss_lower > 1.3 * EPS, str(r)


def test_audit_catches_scaling_that_ignores_the_range():
    # SNM on raw private scores with sensitivity 1 is not local DP for scores that span 3
    wide = NeighbouringPair(
        "wide", np.array([3.0] + [0.0] * (K - 1)), np.array([0.0] + [3.0] * (K - 1)), 3.0
    )
    raw = selectors.from_function(
        lambda q, d, e, rng: selectors.make("rnm", epsilon=e, noise="gumbel").select(q, 1.0, rng),
        name="raw_snm",
        epsilon=EPS,
    )
    assert not estimate_privacy_loss(raw, wide, draws=DRAWS, rng=14).passed
    assert estimate_privacy_loss(
        Scaled(selectors.make("rnm", epsilon=EPS, noise="gumbel")), wide, draws=DRAWS, rng=15
    ).passed


def test_transforms_are_registered_selector_names():
    import dpbandits.recommendation  # noqa: F401  (registers the names)

    assert {"scaled", "clipped"} <= set(selectors.available())
    sel = selectors.make("scaled", inner="krr", epsilon=2.0)
    assert isinstance(sel, Scaled) and sel.inner.name == "krr" and sel.epsilon == 2.0
    c = selectors.make("clipped", inner="rnm", bound=0.1, public=[0.2, 0.4], epsilon=1.0)
    assert isinstance(c, Clipped) and c.select([0.9, 0.1], rng=0) in (0, 1)


def test_sweeps_validate_before_work():
    from dpbandits.recommendation.local_experiments import epsilon_sweep, gamma_sweep
    from dpbandits.recommendation.synthetic import generate_requests

    req = generate_requests(20, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        epsilon_sweep(req, [1.0, -1.0])
    with pytest.raises(ValueError, match="mechanism"):
        epsilon_sweep(req, [1.0], mechanisms=["magic"])
    with pytest.raises(ValueError, match="gamma"):
        gamma_sweep(req, [0.5, 2.0])
    rows = epsilon_sweep(req, [1.0], rng=1)
    assert {"lift", "lift_vs_greedy", "gap_closed"} <= set(rows[0])

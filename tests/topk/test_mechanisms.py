"""Top-k mechanisms against their exact laws (enumeration of all k-sets / k-sequences)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbandits import selectors, topk
from dpbandits.topk import exact
from dpbandits.topk.lipschitz import expected_class_noise, max_exponential_noise
from tests.stats import assert_counts_match_pmf, assert_mean_close, assert_same_distribution

N = 60_000


def _counts(out: np.ndarray, outcomes: list[tuple[int, ...]]) -> np.ndarray:
    index = {o: i for i, o in enumerate(outcomes)}
    codes = np.array([index[tuple(r)] for r in out.tolist()])
    return np.bincount(codes, minlength=len(outcomes))


@pytest.mark.parametrize(
    "q, k, eps, gamma",
    [
        ([3.0, 1.0, 2.5, 0.0, 1.2], 2, 2.0, 0.5),
        ([1.0, 1.0, 0.0, 2.0, 1.0, 0.0], 3, 1.5, 0.5),  # ties
        ([0.3, -1.0, 2.0, 1.7, 0.0], 3, 4.0, 0.25),
        ([0.5, 0.1, 0.9, 0.2], 1, 3.0, 0.5),
    ],
)
def test_canonical_lipschitz_matches_definition(q, k, eps, gamma):
    outcomes, probs = exact.lipschitz_pmf(q, k, eps, gamma, sensitivity=0.5)
    sel = topk.make("canonical_lipschitz", epsilon=eps, gamma=gamma)
    out = sel.select(np.broadcast_to(np.array(q), (N, len(q))), k, 0.5, rng=1)
    assert np.all(np.diff(out, axis=1) > 0)  # a set, in index order
    assert_counts_match_pmf(_counts(out, outcomes), probs)


def test_algorithm2_as_printed_matches_its_own_law():
    q = [2.0, 0.5, 1.5, 0.0, 1.0]
    outcomes, probs = exact.lipschitz_pmf(q, 2, 1.0, classes="paper")
    sel = topk.make("canonical_lipschitz", epsilon=1.0, classes="paper")
    out = sel.select(np.broadcast_to(np.array(q), (N, 5)), 2, rng=2)
    assert_counts_match_pmf(_counts(out, outcomes), probs)
    _, p_partition = exact.lipschitz_pmf(q, 2, 1.0)
    assert np.max(np.abs(probs - p_partition)) > 0.02  # the two laws really differ


def test_partition_class_sizes_sum_to_all_k_sets():
    for d, k in [(5, 2), (9, 4), (30, 7)]:
        total = 1 + sum(
            math.comb(t - h - 2, k - h - 1) for h in range(k) for t in range(k + 1, d + 1)
        )
        assert total == math.comb(d, k)


def test_k1_is_permute_and_flip_at_gamma_eps():
    """k = 1: canonical Lipschitz is exponential-noise RNM (permute-and-flip) at gamma * eps."""
    q = np.array([0.0, 1.0, 2.5, 2.0, -1.0])
    eps, gamma = 2.0, 0.5
    out = topk.make("canonical_lipschitz", epsilon=eps, gamma=gamma).select(
        np.broadcast_to(q, (N, 5)), 1, rng=3
    )[:, 0]
    probs = exact.exponential_noise_argmax_pmf(gamma * eps * q / 2.0)
    assert_counts_match_pmf(np.bincount(out, minlength=5), probs)
    pf = selectors.make("permute_and_flip", epsilon=gamma * eps).select(
        np.broadcast_to(q, (N, 5)), 1.0, rng=4
    )
    assert_same_distribution(out, pf)


@pytest.mark.parametrize("name", ["gumbel", "peeling"])
@pytest.mark.parametrize(
    "q, k, eps", [([3.0, 1.0, 2.5, 0.0, 1.2], 2, 3.0), ([1.0, 1.0, 0.0, 2.0], 3, 6.0)]
)
def test_gumbel_and_peeling_are_plackett_luce(name, q, k, eps):
    outcomes, probs = exact.plackett_luce_pmf(q, k, eps, sensitivity=1.0)
    out = topk.make(name, epsilon=eps).select(np.broadcast_to(np.array(q), (N, len(q))), k, rng=5)
    assert_counts_match_pmf(_counts(out, outcomes), probs)


def test_gumbel_k1_is_the_exponential_mechanism():
    q = np.array([0.0, 1.0, 2.5, 2.0])
    out = topk.make("gumbel", epsilon=2.0).select(np.broadcast_to(q, (N, 4)), 1, rng=6)[:, 0]
    w = np.exp(2.0 * q / 2.0)
    assert_counts_match_pmf(np.bincount(out, minlength=4), w / w.sum())


@pytest.mark.parametrize(
    "q, k", [([3.0, 1.0, 2.5, 0.0, 1.2], 3), ([1.0, 1.0, 0.0, 2.0, 1.0, 0.0], 2)]
)
def test_joint_matches_definition(q, k):
    outcomes, probs = exact.joint_pmf(q, k, 2.0, sensitivity=0.5)
    out = topk.make("joint", epsilon=2.0).select(
        np.broadcast_to(np.array(q), (N, len(q))), k, 0.5, rng=7
    )
    assert_counts_match_pmf(_counts(out, outcomes), probs)


def test_joint_distinct_rows_batch():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(50, 30))
    out = topk.make("joint", epsilon=1.0).select(q, 6, rng=1)
    assert out.shape == (50, 6)
    assert all(len(set(r)) == 6 for r in out.tolist())


@pytest.mark.parametrize("m", [1, 2, 7, 1000])
def test_class_noise_mean_is_harmonic_number(m):
    """Theorem A.3 of paper 002: E[-log(1 - U^{1/m})] = H_m."""
    e = np.random.default_rng(m).standard_exponential(200_000)
    x = max_exponential_noise(e, math.log(m))
    assert_mean_close(x, expected_class_noise(m))


@pytest.mark.parametrize("log_m", [50.0, 700.0, 2000.0])
def test_class_noise_beyond_float_range_is_gumbel(log_m):
    """For huge m, max of m Exp(1) - log m -> standard Gumbel (mean Euler's gamma, sd pi/sqrt6)."""
    e = np.random.default_rng(int(log_m)).standard_exponential(200_000)
    x = max_exponential_noise(e, log_m) - log_m
    assert np.all(np.isfinite(x))
    assert_mean_close(x, 0.5772156649015329, scale=math.pi / math.sqrt(6))


def test_theorem_4_1_lower_bound():
    """P(exact top-k) >= 1 - exp(k log(d/k) + log c_{d,k} - xi gamma eps / 2) (Theorem 4.1)."""
    d, k, gamma, eps = 200, 5, 0.5, 4.0
    c = math.comb(d, k) / (d**k / k**k)
    xi = 2.0 / (gamma * eps) * (k * math.log(d / k) + math.log(c) - math.log(0.5))  # bound 0.5
    q = np.zeros(d)
    q[:k] = xi
    out = topk.make("canonical_lipschitz", epsilon=eps, gamma=gamma).select(
        np.broadcast_to(q, (2000, d)), k, rng=8
    )
    hit = np.all(out == np.arange(k), axis=1).mean()
    # the bound holds for the mean; allow 5 binomial standard errors below it
    assert hit >= 0.5 - 5 * math.sqrt(0.25 / 2000)


@pytest.mark.parametrize("name", ["canonical_lipschitz", "joint", "gumbel", "peeling", "exact"])
def test_shapes_determinism_and_distinct(name):
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, 3, 40))
    sel = topk.make(name, epsilon=3.0)
    a = sel.select(q, 7, rng=11)
    b = sel.select(q, 7, rng=11)
    assert a.shape == (2, 3, 7) and a.dtype == np.int64
    np.testing.assert_array_equal(a, b)
    flat = a.reshape(-1, 7)
    assert all(len(set(r)) == 7 for r in flat.tolist())
    assert flat.min() >= 0 and flat.max() < 40
    full = sel.select(q, 40, rng=1)
    assert all(sorted(r) == list(range(40)) for r in full.reshape(-1, 40).tolist())


def test_huge_eps_returns_true_top_k_at_scale():
    rng = np.random.default_rng(1)
    q = rng.normal(size=(2, 20_000)) * 100
    truth = np.sort(np.argsort(-q, axis=1)[:, :50], axis=1)
    for name in ("canonical_lipschitz", "gumbel"):
        out = np.sort(topk.make(name, epsilon=1e9).select(q, 50, rng=2), axis=1)
        np.testing.assert_array_equal(out, truth)


def test_extreme_inputs_never_nan():
    q = np.array([[1e300, -1e300, 0.0, 5.0, 5.0]])
    for name in ("canonical_lipschitz", "joint", "gumbel", "peeling"):
        for eps in (1e-300, 1e300):
            out = topk.make(name, epsilon=eps).select(q, 2, 1e-300, rng=0)
            assert len(set(out[0].tolist())) == 2


@pytest.mark.parametrize(
    "kwargs, exc, text",
    [
        ({"k": 0}, ValueError, "k must satisfy"),
        ({"k": 6}, ValueError, "k must satisfy"),
        ({"k": True}, TypeError, "k must be an int"),
        ({"k": 2.0}, TypeError, "k must be an int"),
        ({"k": 2, "sensitivity": 0.0}, ValueError, "sensitivities"),
        ({"k": 2, "q": [1.0, np.nan, 0, 0, 0]}, ValueError, "finite"),
    ],
)
def test_bad_input(kwargs, exc, text):
    q = kwargs.pop("q", [1.0, 2.0, 3.0, 0.0, 0.5])
    with pytest.raises(exc, match=text):
        topk.make("canonical_lipschitz").select(q, **kwargs)


def test_bad_parameters_and_registry():
    with pytest.raises(ValueError, match="gamma must lie"):
        topk.make("canonical_lipschitz", gamma=1.0)
    with pytest.raises(TypeError, match="gamma must be a real"):
        topk.make("canonical_lipschitz", gamma="1/2")
    with pytest.raises(ValueError, match="classes must be"):
        topk.make("canonical_lipschitz", classes="other")
    with pytest.raises(ValueError, match="epsilon"):
        topk.make("gumbel", epsilon=-1.0)
    with pytest.raises(ValueError, match="unknown top-k mechanism"):
        topk.make("nope")
    with pytest.raises(TypeError, match="unknown parameter"):
        topk.make("gumbel", gamma=0.5)
    topk.register("test_gumbel", topk.OneShotGumbel)
    try:
        assert "test_gumbel" in topk.available()
        assert topk.make("test_gumbel", epsilon=2.0).epsilon == 2.0
        with pytest.raises(ValueError, match="already registered"):
            topk.register("test_gumbel", topk.OneShotGumbel)
    finally:
        topk.unregister("test_gumbel")
    with pytest.raises(ValueError, match="built-in"):
        topk.register("gumbel", topk.OneShotGumbel)
    sel = topk.make("canonical_lipschitz", epsilon=1.0, gamma=0.3)
    assert sel.with_epsilon(2.0).get_params() == {
        "epsilon": 2.0,
        "gamma": 0.3,
        "classes": "partition",
    }

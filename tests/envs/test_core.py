"""The clipped-Gaussian closed form (App. H-1) and the reward tape of ``envs.core``."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import integrate, stats

from envs.core import _tail_excess, block_length, check_int, expected_clipped_normal
from envs.piecewise import PiecewiseStationaryBanditVectorEnv
from tests.stats import assert_mean_close, assert_proportion_close

# (m, s) pairs: inside, near the edges, and heavy clipping on either side.
PAIRS = [(0.2, 0.1), (0.8, 0.3), (-0.5, 0.3), (0.95, 1.0), (0.5, 2.0), (1.2, 0.5)]


def _spec_formula(m: float, s: float, lo: float, hi: float) -> float:
    """App. H-1 as written: lo Phi(a) + m (Phi(b)-Phi(a)) + s (phi(a)-phi(b)) + hi (1-Phi(b))."""
    a, b = (lo - m) / s, (hi - m) / s
    n = stats.norm
    return float(
        lo * n.cdf(a) + m * (n.cdf(b) - n.cdf(a)) + s * (n.pdf(a) - n.pdf(b)) + hi * n.sf(b)
    )


def _quadrature(m: float, s: float, lo: float, hi: float) -> float:
    """E clip(X) by numerical integration over the unclipped part (standardised)."""
    a, b = (lo - m) / s, (hi - m) / s
    aa, bb = max(a, -40.0), min(b, 40.0)
    inner = 0.0
    if aa < bb:
        inner = integrate.quad(
            lambda z: (m + s * z) * stats.norm.pdf(z), aa, bb, epsabs=1e-13, epsrel=1e-12
        )[0]
    return float(lo * stats.norm.cdf(a) + inner + hi * stats.norm.sf(b))


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-1.0, 2.0)])
def test_closed_form_matches_spec_and_quadrature(lo: float, hi: float) -> None:
    rng = np.random.default_rng(7)
    m = rng.uniform(lo - 2.0, hi + 2.0, size=100)
    s = 10.0 ** rng.uniform(-3, 1.5, size=100)
    got = expected_clipped_normal(m, s, lo, hi)
    assert got.shape == (100,)
    quad = np.array([_quadrature(mi, si, lo, hi) for mi, si in zip(m, s, strict=True)])
    np.testing.assert_allclose(got, quad, rtol=0, atol=1e-11)
    spec = np.array([_spec_formula(mi, si, lo, hi) for mi, si in zip(m, s, strict=True)])
    np.testing.assert_allclose(got, spec, rtol=0, atol=1e-11)


@pytest.mark.parametrize("m, s", PAIRS)
def test_closed_form_against_monte_carlo(m: float, s: float) -> None:
    """10^6 direct draws of clip(N(m, s^2), 0, 1), independent of the environment code."""
    x = np.clip(np.random.default_rng(11).normal(m, s, size=1_000_000), 0.0, 1.0)
    assert_mean_close(x, float(expected_clipped_normal(m, s)))


def test_environment_rewards_match_closed_form() -> None:
    """Rewards drawn by the environment: 10^6 per (m, s) pair, mean and clipping masses.

    One arm per pair; copy i pulls arm (i + t) mod K at step t, so each arm gets 10^6 draws.
    """
    K = len(PAIRS)
    means = [m for m, _ in PAIRS]
    sds = [s for _, s in PAIRS]
    R, T = 200_000, 5 * K  # R * T / K = 10^6 draws per arm
    env = PiecewiseStationaryBanditVectorEnv(num_envs=R, segments=[(0, means, sds)], horizon=T)
    env.reset(seed=3)
    arms = np.arange(R) % K
    draws: list[list[np.ndarray]] = [[] for _ in range(K)]
    for t in range(T):
        actions = (arms + t) % K
        _, rewards, _, _, _ = env.step(actions)
        for a in range(K):
            draws[a].append(rewards[actions == a])
    for a, (m, s) in enumerate(PAIRS):
        x = np.concatenate(draws[a])
        assert x.size == 1_000_000
        assert x.min() >= 0.0 and x.max() <= 1.0
        assert_mean_close(x, float(expected_clipped_normal(m, s)))
        n = stats.norm
        assert_proportion_close(int((x == 0.0).sum()), x.size, float(n.cdf((0.0 - m) / s)))
        assert_proportion_close(int((x == 1.0).sum()), x.size, float(n.sf((1.0 - m) / s)))


def test_bernoulli_rewards_match_means() -> None:
    p = [0.0, 0.1, 0.5, 0.97, 1.0]
    K, R = len(p), 100_000
    env = PiecewiseStationaryBanditVectorEnv(
        num_envs=R, segments=[(0, p)], horizon=2 * K, arm="bernoulli"
    )
    env.reset(seed=5)
    arms = np.arange(R) % K
    hits = np.zeros(K)
    pulls = np.zeros(K)
    for t in range(2 * K):
        actions = (arms + t) % K
        _, rewards, _, _, info = env.step(actions)
        assert set(np.unique(rewards)) <= {0.0, 1.0}
        np.testing.assert_array_equal(info["expected_rewards"][0], p)
        hits += np.bincount(actions, weights=rewards, minlength=K)
        pulls += np.bincount(actions, minlength=K)
    for a in range(K):
        assert_proportion_close(int(hits[a]), int(pulls[a]), p[a])


def test_closed_form_extremes_are_finite_and_exact() -> None:
    # Far outside [lo, hi], tiny and huge s: no warnings (pytest turns them into errors).
    m = np.array([-1e300, 1e300, 0.5, 0.5, 0.5, -100.0, 101.0])
    s = np.array([1.0, 1.0, 1e-320, 1e-300, 1e300, 0.01, 0.01])
    got = expected_clipped_normal(m, s)
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.5, 0.5, 0.5, 0.0, 1.0])
    # Symmetry: clip(X, 0, 1) for N(m, s) mirrors 1 - clip(X', 0, 1) for N(1 - m, s).
    mm = np.linspace(-1, 2, 31)
    np.testing.assert_allclose(
        expected_clipped_normal(mm, 0.3), 1.0 - expected_clipped_normal(1.0 - mm, 0.3), atol=1e-15
    )


def _tail_excess_reference(a: float) -> Decimal:
    """``H(a) = phi(a) - a Phi(-a)`` in 120-digit decimal arithmetic, independently of the code:
    the Taylor series of erf for ``a <= 12`` (its terms reach ~e^36, far inside 120 digits), the
    asymptotic series ``phi(a)/a^2 sum_n (-1)^n (2n+1)!!/a^(2n)`` above (truncated at its
    smallest term, relative error below e^(-a^2/2) < 1e-31)."""
    with localcontext() as ctx:
        ctx.prec = 120
        x = Decimal(a)
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781")
        phi = (-(x * x) / 2).exp() / (2 * pi).sqrt()
        if a > 12.0:
            total, term, n = Decimal(0), Decimal(1), 0
            while True:
                total += term
                n += 1
                nxt = -term * (2 * n + 1) / (x * x)
                if abs(nxt) >= abs(term):
                    break
                term = nxt
            return phi / (x * x) * total
        z = x / Decimal(2).sqrt()
        erf, term, n = Decimal(0), z, 0
        while abs(term) > Decimal(10) ** -118 or n < 2:
            erf += term / (2 * n + 1)
            n += 1
            term = -term * z * z / n
        return phi - x * (1 - 2 / pi.sqrt() * erf) / 2


def test_tail_excess_to_a_few_ulps() -> None:
    """``H`` of the closed form against the 120-digit reference: every branch (erfc below 1.5,
    the continued fraction with 250/120/60 terms) and both sides of each switch, and the far
    tail down to the subnormals. The bound, 2e-15 (9 ulps), is the documented "few ulps"; the
    former ``erfcx`` form erred by up to 3.4e-14 on [0, 12], a truncated fraction by far more."""
    eps = np.finfo(float).eps
    points = list(np.linspace(0.0, 12.0, 97)) + [20.0, 25.0, 30.0, 35.0, 37.0]
    for edge in (1.5, 2.5, 4.0):
        points += [edge * (1 - eps), edge]
    got = _tail_excess(np.array(points))
    np.testing.assert_array_equal(_tail_excess(-np.array(points)), got)  # H(x) = H(|x|)
    for a, h in zip(points, got, strict=True):
        ref = _tail_excess_reference(a)
        assert abs(Decimal(float(h)) - ref) <= Decimal(2e-15) * ref, a
    assert _tail_excess(np.array([38.7, 40.0, 1e300, np.inf])).tolist() == [0.0] * 4


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"m": 0.5, "s": 0.0}, "s must be finite and > 0"),
        ({"m": 0.5, "s": -1.0}, "s must be finite and > 0"),
        ({"m": np.nan, "s": 1.0}, "m must be finite"),
        ({"m": 0.5, "s": 1.0, "lo": 1.0, "hi": 1.0}, "lo must be < hi"),
        ({"m": 0.5, "s": 1.0, "lo": 0.0, "hi": np.inf}, "hi must be finite"),
    ],
)
def test_closed_form_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        expected_clipped_normal(**kwargs)


def test_reward_tape_is_the_documented_stream() -> None:
    """Episode rewards are clip(m_a(t) + s_a(t) z[t, i]) with z = standard_normal((T, R)).

    T spans several blocks, and the last block is cut at the horizon, so this also checks that
    the stream does not depend on the block size.
    """
    R, T = 3, 3 * block_length(3, 2) + 17
    segs = [(0, [0.2, 0.8], [0.1, 0.3]), (T // 2, [0.8, 0.2], [0.3, 0.1])]
    env = PiecewiseStationaryBanditVectorEnv(num_envs=R, segments=segs, horizon=T)
    env.reset(seed=42)
    actions = np.random.default_rng(0).integers(0, 2, size=(T, R))
    rewards = np.array([env.step(a)[1] for a in actions])
    z = np.random.default_rng(42).standard_normal((T, R))
    m, s = env.means_table(), env.sds_table()
    assert s is not None
    t = np.arange(T)[:, None]
    np.testing.assert_array_equal(rewards, np.clip(m[t, actions] + s[t, actions] * z, 0.0, 1.0))


def test_check_int() -> None:
    assert check_int("horizon", 3e4) == 30_000
    assert check_int("horizon", np.int32(5)) == 5
    with pytest.raises(ValueError, match="horizon must be an integer"):
        check_int("horizon", 2.5)
    with pytest.raises(TypeError, match="horizon must be an integer"):
        check_int("horizon", "10")
    with pytest.raises(TypeError, match="horizon must be an integer"):
        check_int("horizon", True)


@pytest.mark.parametrize("vector", [False, True])
def test_an_environment_is_freed_without_the_garbage_collector(vector):
    """No reference cycle keeps an environment (and its ``(T, K)`` tables) alive once its last
    reference is dropped: a sweep of many-armed cells would otherwise hold gigabytes until the
    collector runs. The core still draws from the env's current ``np_random``."""
    import gc
    import weakref

    import gymnasium as gym

    import envs  # noqa: F401  (registers the environments)

    kw = {"means": [0.2, 0.5, 0.7], "horizon": 50}
    gc.collect()
    gc.disable()
    try:
        if vector:
            env = gym.make_vec("dpbandits/KArmedBernoulli-v0", num_envs=3,
                               vectorization_mode="vector_entry_point", **kw).unwrapped  # fmt: skip
            env.reset(seed=1)
            env.pull(np.array([0, 1, 2]))
        else:
            env = gym.make("dpbandits/KArmedBernoulli-v0", **kw).unwrapped
            env.reset(seed=1)
            env.step(1)
        # Gymnasium lets users replace np_random: the core follows it
        env.np_random = np.random.default_rng(5)
        assert env._core._rng() is env.np_random
        ref = weakref.ref(env)
        core_ref = weakref.ref(env._core)
        del env
        assert ref() is None and core_ref() is None
    finally:
        gc.enable()

"""Discrete Laplace noise on a power-of-two grid (the floating-point-safe option)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpbandits.continual.grid_noise import discrete_laplace, discrete_laplace_pmf, grid_step, snap


@pytest.mark.parametrize("scale", [0.3, 1.0, 7.5])
def test_discrete_laplace_matches_its_pmf(scale):
    n = 200_000
    k = discrete_laplace(np.random.default_rng(0), scale, n)
    lo, hi = -int(6 * scale) - 2, int(6 * scale) + 2
    support = np.arange(lo, hi + 1)
    observed = np.array([np.sum(k <= lo)] + [np.sum(k == v) for v in support[1:-1]]
                        + [np.sum(k >= hi)])  # fmt: skip
    pmf = discrete_laplace_pmf(support, scale)
    tail = (1.0 - pmf[1:-1].sum()) / 2.0
    expected = n * np.concatenate([[tail], pmf[1:-1], [tail]])
    assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_discrete_laplace_variance_at_a_large_scale():
    scale = 4096.0
    k = discrete_laplace(np.random.default_rng(1), scale, 400_000)
    p = math.exp(-1.0 / scale)
    var = 2 * p / (1 - p) ** 2  # variance of G1 - G2
    se = var * math.sqrt(2.0 / k.size) * 1.5  # generous for the heavier-than-normal tails
    assert abs(k.var() - var) < 5 * se


def test_wrong_scale_is_detected():
    """The test above has power: a 10% wrong scale fails it."""
    n = 200_000
    k = discrete_laplace(np.random.default_rng(0), 1.1, n)
    support = np.arange(-8, 9)
    pmf = discrete_laplace_pmf(support, 1.0)
    inside = (k >= -8) & (k <= 8)
    observed = np.array([np.sum(k == v) for v in support])
    expected = inside.sum() * pmf / pmf.sum()
    assert stats.chisquare(observed, expected).pvalue < 1e-6


def test_grid_is_a_power_of_two_far_below_the_scale():
    for scale in (1e-3, 0.7, 2.0, 1e6):
        g = grid_step(scale)
        assert math.log2(g).is_integer() and scale / 8192 < g <= scale / 4096


def test_snapped_values_and_their_sums_are_exact_multiples():
    g = grid_step(2.0)
    x = snap(np.random.default_rng(2).normal(size=1000) * 100, g)
    noise = discrete_laplace(np.random.default_rng(3), 2.0 / g, 1000) * g
    total = np.cumsum(x + noise)
    assert np.all(np.mod(total, g) == 0)


def test_one_scale_per_column_matches_each_pmf():
    """An array of scales broadcasts against size: column j follows the pmf of scale j."""
    scales = np.array([0.5, 2.0, 6.0])
    k = discrete_laplace(np.random.default_rng(4), scales, (100_000, 3))
    assert k.shape == (100_000, 3) and k.dtype == np.int64
    for j, scale in enumerate(scales):
        support = np.arange(-int(8 * scale) - 2, int(8 * scale) + 3)
        pmf = discrete_laplace_pmf(support, scale)
        tail = (1.0 - pmf[1:-1].sum()) / 2.0
        col = k[:, j]
        observed = np.array([np.sum(col <= support[0])]
                            + [np.sum(col == v) for v in support[1:-1]]
                            + [np.sum(col >= support[-1])])  # fmt: skip
        expected = col.size * np.concatenate([[tail], pmf[1:-1], [tail]])
        assert stats.chisquare(observed, expected).pvalue > 1e-6


@pytest.mark.parametrize(
    "bad", [0.0, -1.0, np.inf, np.nan, [1.0, 0.0], [1.0, np.nan], 1e300, [1.0, 2.0**48]]
)
def test_bad_scale_is_refused(bad):
    with pytest.raises(ValueError, match="scale_units"):
        discrete_laplace(np.random.default_rng(0), bad, 2)


def test_tiny_scale_gives_zero_noise_without_warnings():
    k = discrete_laplace(np.random.default_rng(0), np.array([1e-320, 1e-300]), (10, 2))
    np.testing.assert_array_equal(k, 0)

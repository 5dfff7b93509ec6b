"""The exact sampler of the grid quantile mechanism (``sampler="exact"``) and its coins.

The mechanism's pmf is computed here grid point by grid point, with ``gamma`` as a Fraction and
``exp(-gamma)`` in 50-digit decimal arithmetic, independently of the implementation (which
never computes a probability).
"""

from __future__ import annotations

import decimal
import hashlib
import math
from fractions import Fraction

import numpy as np
import pytest

from dpbandits.core.exact_sampling import (
    bernoulli,
    bernoulli_array,
    bernoulli_exp,
    bernoulli_exp_fractions,
    bernoulli_exp_int,
    exp_minus_one,
)
from dpbandits.quantiles import WindowedSensitivity, dp_quantile, dp_quantiles
from tests.dpbandits.test_quantiles_grid import PMF_CASES, grid_index
from tests.stats import assert_counts_match_pmf, assert_proportion_close, assert_same_distribution

DRAWS = 30_000


def high_precision_pmf(x, q, eps, lo, hi, m, w):
    """P(j) ∝ mu_j exp(-(eps/2) dist(q n, [L_j, U_j])), j = 0..m, eps and q read exactly."""
    n = len(x)
    snapped = [min(max(round((min(max(v, lo), hi) - lo) / (hi - lo) * m), 0), m) for v in x]
    qn, half = Fraction(q) * n, Fraction(eps) / 2
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        weights = []
        for j in range(m + 1):
            below = sum(1 for k in snapped if k < j)
            upto = sum(1 for k in snapped if k <= j)
            gamma = half * max(below - qn, qn - upto, Fraction(0))
            mass = 1 + (Fraction(w) * (m + 1) if j in (0, m) else 0)
            g = decimal.Decimal(gamma.numerator) / decimal.Decimal(gamma.denominator)
            mu = decimal.Decimal(mass.numerator) / decimal.Decimal(mass.denominator)
            weights.append(mu * (-g).exp())
        total = sum(weights)
        return np.array([float(v / total) for v in weights])


@pytest.mark.parametrize(
    "x, q, eps, m, w",
    [
        *PMF_CASES,
        ([0.2, 0.4, 0.4, 0.6, 0.9], 0.0, 1.0, 6, 0.1),  # extreme level 0
        ([0.2, 0.4, 0.4, 0.6, 0.9], 1.0, 1.0, 6, 0.1),  # extreme level 1
        ([0.2, 0.4, 0.6, 0.6, 0.9], 1e-300, 0.4, 6, 1e-3),  # tiny level: q n not a float
        ([0.1, 0.35, 0.35, 0.8] * 3, 0.1, 0.1, 7, 0.1),  # eps, q with 2^-55 denominators
    ],
)
def test_exact_sampler_law_is_the_grid_mechanism(x, q, eps, m, w) -> None:
    probs = high_precision_pmf(x, q, eps, 0.0, 1.0, m, w)
    data = np.broadcast_to(np.asarray(x, dtype=float), (DRAWS, len(x)))
    out = dp_quantile(data, q, eps, 0.0, 1.0, rng=1, grid_size=m, endpoint_mass=w, sampler="exact")
    assert_counts_match_pmf(np.bincount(grid_index(out, 0, 1, m), minlength=m + 1), probs)


def test_exact_levels_split_epsilon_exactly_and_other_bounds() -> None:
    x = [-2.0, -1.2, -1.2, 0.4, 3.0, 3.0, 2.2]
    lo, hi, m, w, eps = -2.0, 3.0, 10, 0.2, 1.0  # eps / 3 is not a float: split as a Fraction
    levels = [0.2, 0.5, 0.7]
    out = dp_quantiles(
        np.broadcast_to(x, (DRAWS, len(x))), levels, eps, lo, hi, rng=2,
        grid_size=m, endpoint_mass=w, sampler="exact",
    )  # fmt: skip
    for col, q in enumerate(levels):
        probs = high_precision_pmf(x, q, Fraction(eps) / 3, lo, hi, m, w)
        counts = np.bincount(grid_index(out[:, col], lo, hi, m), minlength=m + 1)
        assert_counts_match_pmf(counts, probs)


def test_exact_sampler_extreme_epsilon() -> None:
    """eps = 1e15 on all-equal data: always the tied value's grid point; eps = 5e-324: the
    base measure (every exp(-gamma) is 1 to 300 digits)."""
    out = dp_quantile(np.full((500, 200), 0.3), 0.5, 1e15, 0.0, 1.0, rng=3, grid_size=64,
                      sampler="exact")  # fmt: skip
    assert np.all(out == round(0.3 * 64) / 64)
    data = np.broadcast_to([0.1, 0.2, 0.2, 0.9], (DRAWS, 4))
    out = dp_quantile(data, 0.5, 5e-324, 0.0, 1.0, rng=5, grid_size=10, endpoint_mass=0.5,
                      sampler="exact")  # fmt: skip
    base = np.array([6.5] + [1.0] * 9 + [6.5])
    assert_counts_match_pmf(np.bincount(grid_index(out, 0, 1, 10), minlength=11), base / base.sum())


def test_windowed_exact_matches_dp_quantiles_exact() -> None:
    """The windows' estimates have the law of dp_quantiles(window, levels, eps_p, exact)."""
    n_runs, window, m = 4000, 12, 8
    rng = np.random.default_rng(6)
    x = rng.choice([0.0, 0.25, 0.3, 0.9, 1.0], size=(n_runs, window))
    ws = WindowedSensitivity(
        n_runs, 1, 1.0, window=window, rng=7, grid_size=m, sampler="exact", floor=1e-9
    )
    for t in range(window):
        ws.update(np.zeros(n_runs, dtype=np.int64), x[:, t])
    assert ws.sampler == "exact" and "sampler='exact'" in repr(ws)
    p = dp_quantiles(x, (0.1, 0.9), 1.0, 0.0, 1.0, rng=8, grid_size=m, sampler="exact")
    ranges = np.rint(np.abs(p[:, 1] - p[:, 0]) * m).astype(np.int64)
    assert_same_distribution(np.rint(ws.values[:, 0] * m).astype(np.int64), ranges)


def test_exact_same_seed_same_result() -> None:
    x = np.random.default_rng(9).random((50, 40))
    kw = {"grid_size": 32, "sampler": "exact"}
    a = dp_quantiles(x, (0.1, 0.9), 1.0, 0.0, 1.0, rng=10, **kw)
    np.testing.assert_array_equal(a, dp_quantiles(x, (0.1, 0.9), 1.0, 0.0, 1.0, rng=10, **kw))
    assert not np.array_equal(a, dp_quantiles(x, (0.1, 0.9), 1.0, 0.0, 1.0, rng=11, **kw))
    runs = []
    for _ in range(2):
        ws = WindowedSensitivity(20, 2, 1.0, window=5, rng=12, sampler="exact")
        r = np.random.default_rng(13)
        for _ in range(30):
            ws.update(r.integers(0, 2, 20), r.random(20))
        runs.append(ws.values)
    np.testing.assert_array_equal(*runs)


def _digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()[:16]


def test_default_sampler_is_unchanged() -> None:
    """The default ("float") gives the numbers it gave before the option existed (digests taken
    at that commit), and passing sampler="float" changes nothing."""
    rng = np.random.default_rng(123)
    x = np.concatenate([rng.random((50, 150)), (rng.random((50, 150)) < 0.3).astype(float)])
    pinned = {
        "grid": ("bd2d9bbbb92278b7", "df80a50755a8d6a5", "23256229418c1fe1"),
        "smith": ("d7d002992e401d3e", "115ea609b1c59213", "4a1a5c83312e7ae4"),
    }
    for method, (d_q, d_qs, d_ws) in pinned.items():
        for extra in ({}, {"sampler": "float"}):
            kw = {"method": method, **extra}
            assert _digest(dp_quantile(x, 0.5, 1.0, 0.0, 1.0, rng=4, **kw)) == d_q
            qs = dp_quantiles(x, (0.1, 0.5, 0.9), 2.0, 0.0, 1.0, rng=5, grid_size=100, **kw)
            assert _digest(qs) == d_qs
            ws = WindowedSensitivity(30, 2, 1.0, window=20, rng=6, **kw)
            r = np.random.default_rng(7)
            for _ in range(100):
                ws.update(r.integers(0, 2, 30), r.random(30))
            assert _digest(ws.values) == d_ws
    assert WindowedSensitivity(2, 2, 1.0).sampler == "float"


def test_sampler_bad_values() -> None:
    for bad in ("Exact", "", None, 1, "grid"):
        with pytest.raises(ValueError, match="sampler must be one of"):
            dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, sampler=bad)
        with pytest.raises(ValueError, match="sampler must be one of"):
            dp_quantiles([0.5], [0.5], 1.0, 0.0, 1.0, sampler=bad)
        with pytest.raises(ValueError, match="sampler must be one of"):
            WindowedSensitivity(2, 2, 1.0, sampler=bad)
    with pytest.raises(ValueError, match="sampler='exact' needs method='grid'"):
        dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, method="smith", sampler="exact")
    with pytest.raises(ValueError, match="sampler='exact' needs method='grid'"):
        WindowedSensitivity(2, 2, 1.0, method="smith", sampler="exact")
    with pytest.raises(TypeError, match="'samplr'"):
        dp_quantile([0.5], 0.5, 1.0, 0.0, 1.0, samplr="exact")  # type: ignore[call-arg]


# ---------------------------------------------------------------------------------------------
# The coins
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gamma",
    [
        Fraction(0),
        Fraction(1, 1024),  # tiny
        Fraction(1, 3),
        Fraction(0.1),  # a float's exact value, denominator 2^55
        Fraction(1),
        Fraction(5, 2),
        Fraction(4),  # an integer > 1
        Fraction(7, 3**40),  # a huge denominator
    ],
)
def test_bernoulli_exp_rate(gamma) -> None:
    n = 20_000
    rng = np.random.default_rng(14)
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(n))
    p = math.exp(-float(gamma))
    if gamma == 0:
        assert hits == n
    else:
        assert_proportion_close(hits, n, p)


def test_vectorised_exp_coins_rates() -> None:
    n = 200_000
    rng = np.random.default_rng(15)
    assert_proportion_close(int(exp_minus_one(n, rng).sum()), n, math.exp(-1))
    for t in (0, 1, 2, 3, 6):
        hits = int(bernoulli_exp_int(np.full(n, t), rng).sum())
        if t == 0:
            assert hits == n
        else:
            assert_proportion_close(hits, n, math.exp(-t))
    gammas = [Fraction(1, 1024), Fraction(1, 3), Fraction(0.7), Fraction(3**50 - 1, 3**50)]
    num = [g.numerator for g in gammas for _ in range(n // 4)]
    den = [g.denominator for g in gammas for _ in range(n // 4)]
    coins = bernoulli_exp_fractions(num, den, rng).reshape(len(gammas), -1)
    for g, row in zip(gammas, coins, strict=True):
        assert_proportion_close(int(row.sum()), row.size, math.exp(-float(g)))
    with pytest.raises(ValueError):
        bernoulli_exp_fractions([3], [3], rng)
    with pytest.raises(ValueError):
        bernoulli_exp_int(np.array([-1]), rng)
    with pytest.raises(ValueError):
        bernoulli_exp(Fraction(-1, 2), rng)


def test_bernoulli_rational_rates() -> None:
    n = 200_000
    rng = np.random.default_rng(16)
    for p in (Fraction(1, 3), Fraction(0.1), Fraction(2, 3**45), Fraction(999, 1000)):
        assert_proportion_close(int(bernoulli_array(p, n, rng).sum()), n, float(p))
    assert_proportion_close(sum(bernoulli(Fraction(2, 7), rng) for _ in range(20_000)), 20_000,
                            2 / 7)  # fmt: skip
    assert bernoulli_array(Fraction(0), 5, rng).sum() == 0
    assert bernoulli_array(Fraction(1), 5, rng).all()


class _Scripted:
    """A stand-in Generator whose 64-bit words are scripted (to reach the 2**-64 tie path)."""

    def __init__(self, words):
        self.words = list(words)

    def integers(self, low, high, size=None, dtype=None):
        assert high == 2**64
        if size is None:
            return np.uint64(self.words.pop(0))
        return np.array([self.words.pop(0) for _ in range(size)], dtype=np.uint64)


def test_bernoulli_tie_looks_at_the_next_bits() -> None:
    """p = 1/3: 2**64 p = d + 1/3; a first word equal to d defers to the next word."""
    p = Fraction(1, 3)
    d = 2**64 // 3
    assert bernoulli(p, _Scripted([d - 1]))
    assert not bernoulli(p, _Scripted([d + 1]))
    assert bernoulli(p, _Scripted([d, d - 1]))
    assert not bernoulli(p, _Scripted([d, d + 1]))
    np.testing.assert_array_equal(
        bernoulli_array(p, 3, _Scripted([d, d - 1, d + 1, d + 1])), [False, True, False]
    )
    # a dyadic p: 2**64 p = d exactly, so a tie means "not below": False
    assert not bernoulli(Fraction(1, 4), _Scripted([2**62]))

"""Statistical tests of the course checker: p-values, and wording for students.

Every check of a random algorithm compares what the student's code produced with the exact law
of a correct solution and fails when the p-value of the test is below :data:`ALPHA` (1e-8).
An exercise runs fewer than 100 such tests, so a correct solution fails a whole exercise with
probability below 100 * 1e-8 = 1e-6 (Bonferroni). The sample sizes are chosen so that plainly
wrong solutions (wrong probability, wrong noise scale, ...) give p-values far below 1e-8.
The test suite's assertions (``tests/stats.py``) use the same pooled chi-square.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpbandits.core.arrays import FloatArray

__all__ = [
    "ALPHA",
    "argmax_pmf",
    "binomial_pvalue",
    "chisquare_pvalue",
    "fmt_p",
    "ks_pvalue",
    "laplace_square_moments",
    "pooled_chisquare",
    "z_pvalue",
]


#: Significance level of one test (see the module docstring for the per-exercise budget).
ALPHA = 1e-8


def fmt_p(p: float) -> str:
    """``p = 3.2e-09`` style, with ``p < 1e-300`` for an underflow."""
    if p < 1e-300:
        return "p < 1e-300"
    return f"p = {p:.2g}"


def pooled_chisquare(
    counts: ArrayLike, probs: ArrayLike, min_expected: float = 5.0
) -> tuple[float, FloatArray, FloatArray]:
    """Chi-square goodness of fit of ``counts`` against the pmf ``probs``: ``(p, observed,
    expected)``, the cells of probability zero left out.

    Cells with an expected count below ``min_expected`` are pooled into one (the validity
    condition of the chi-square approximation); ``p = 1`` when fewer than two cells remain.
    """
    c = np.asarray(counts, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    expected = c.sum() * p
    small = (expected < min_expected) & (p > 0)
    big = ~small & (p > 0)
    obs = list(c[big])
    exp = list(expected[big])
    if small.any():
        obs.append(c[small].sum())
        exp.append(expected[small].sum())
    pvalue = 1.0 if len(obs) < 2 else float(stats.chisquare(obs, exp).pvalue)
    return pvalue, np.array(obs), np.array(exp)


def chisquare_pvalue(counts: ArrayLike, probs: ArrayLike, min_expected: float = 5.0) -> float:
    """:func:`pooled_chisquare`'s p-value; a draw in a cell of probability zero gives ``p = 0``."""
    c = np.asarray(counts, dtype=float).ravel()
    p = np.asarray(probs, dtype=float).ravel()
    if np.any(c[p == 0] > 0):
        return 0.0
    return pooled_chisquare(c, p, min_expected)[0]


def binomial_pvalue(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial test of ``k`` successes in ``n`` trials."""
    return float(stats.binomtest(int(k), int(n), float(p)).pvalue)


def z_pvalue(mean: float, expected: float, se: float) -> float:
    """Two-sided normal p-value of ``(mean - expected) / se``."""
    if se <= 0:
        return 1.0 if mean == expected else 0.0
    z = (mean - expected) / se
    return float(2.0 * stats.norm.sf(abs(z)))


def ks_pvalue(samples: ArrayLike, cdf: Callable[[np.ndarray], np.ndarray]) -> float:
    """Kolmogorov-Smirnov test of ``samples`` against a continuous ``cdf``."""
    x = np.asarray(samples, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        return 0.0
    return float(stats.kstest(x, cdf).pvalue)


def laplace_square_moments(m: int, b: float) -> tuple[float, float]:
    """Mean and variance of ``Z**2`` for ``Z`` the sum of ``m`` i.i.d. ``Laplace(0, b)``.

    ``E X^2 = 2 b^2``, ``E X^4 = 24 b^4``, so ``E Z^2 = 2 m b^2`` and
    ``E Z^4 = 24 m b^4 + 3 m (m - 1) (2 b^2)^2``.
    """
    ez2 = 2.0 * m * b * b
    ez4 = 24.0 * m * b**4 + 3.0 * m * (m - 1) * 4.0 * b**4
    return ez2, ez4 - ez2 * ez2


def argmax_pmf(loc: ArrayLike, scale: ArrayLike, noise: stats.rv_continuous) -> FloatArray:
    """Law of ``argmax_a (loc_a + scale_a Z_a)`` for independent ``Z_a`` of the continuous law
    ``noise`` (e.g. ``scipy.stats.gumbel_r``): ``P(a) = int f_a(x) prod_{b != a} F_b(x) dx``,
    by the trapezoid rule on 40 001 points spanning the laws' quantiles 1e-12 .. 1 - 1e-12
    (absolute error well below 1e-6, plenty to name a likely cause)."""
    m = np.asarray(loc, dtype=float).ravel()
    s = np.broadcast_to(np.asarray(scale, dtype=float), m.shape)
    lo = float(np.min(m + s * noise.ppf(1e-12)))
    hi = float(np.max(m + s * noise.ppf(1 - 1e-12)))
    x = np.linspace(lo, hi, 40_001)
    z = (x[None, :] - m[:, None]) / s[:, None]
    pdf = noise.pdf(z) / s[:, None]
    cdf = noise.cdf(z)
    out = np.empty(m.size)
    for a in range(m.size):
        others = np.prod(np.delete(cdf, a, axis=0), axis=0)
        out[a] = np.trapezoid(pdf[a] * others, x)
    return out / out.sum()

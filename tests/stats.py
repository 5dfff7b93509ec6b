"""Statistical assertions shared by the test suite.

Thresholds come from the statistics, never from tuning to a seed: a goodness-of-fit test fails
when its p-value is below ``P_MIN`` (1e-6), a mean when it is more than ``Z_MAX`` (5) standard
errors from its closed form. With a correct implementation a test therefore fails about once in
a million runs; with a real bug and the sample sizes used, it fails essentially always.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from dpbandits.course.stats import pooled_chisquare

P_MIN = 1e-6
Z_MAX = 5.0


def assert_counts_match_pmf(
    counts: ArrayLike, probs: ArrayLike, *, p_min: float = P_MIN, min_expected: float = 5.0
) -> float:
    """Chi-square goodness of fit of observed ``counts`` against ``probs``.

    Cells whose expected count is below ``min_expected`` are pooled into one cell (the usual
    validity condition of the chi-square approximation). Returns the p-value.
    """
    counts = np.asarray(counts, dtype=float).ravel()
    probs = np.asarray(probs, dtype=float).ravel()
    assert counts.shape == probs.shape, (counts.shape, probs.shape)
    assert np.all(probs >= 0) and abs(probs.sum() - 1.0) < 1e-9, "probs must be a pmf"
    # A draw in a cell of probability zero is a bug, not a fluctuation.
    impossible = probs == 0
    assert not np.any(counts[impossible] > 0), (
        f"draws in zero-probability cells: {counts[impossible]}"
    )
    p, obs, exp = pooled_chisquare(counts, probs, min_expected)
    assert p > p_min, (
        f"chi-square p = {p:.3g} < {p_min}: observed {np.round(obs)}, expected {np.round(exp, 1)}"
    )
    return p


def assert_mean_close(
    samples: ArrayLike, expected: float, *, z_max: float = Z_MAX, scale: float | None = None
) -> float:
    """Assert the sample mean is within ``z_max`` standard errors of ``expected``; returns z."""
    x = np.asarray(samples, dtype=float).ravel()
    se = (scale if scale is not None else x.std(ddof=1)) / np.sqrt(x.size)
    z = (x.mean() - expected) / se if se > 0 else (0.0 if x.mean() == expected else np.inf)
    assert abs(z) < z_max, f"mean {x.mean():.6g} vs expected {expected:.6g}: z = {z:.2f}"
    return float(z)


def assert_proportion_close(successes: int, n: int, p: float, *, z_max: float = Z_MAX) -> float:
    """Binomial proportion against a known probability ``p``; returns z."""
    se = np.sqrt(p * (1 - p) / n)
    z = (successes / n - p) / se if se > 0 else (0.0 if successes / n == p else np.inf)
    assert abs(z) < z_max, f"proportion {successes / n:.6g} vs {p:.6g}: z = {z:.2f}"
    return float(z)


def assert_same_distribution(a: ArrayLike, b: ArrayLike, *, p_min: float = P_MIN) -> float:
    """Two-sample test. Integer samples: chi-square on the contingency table; else KS."""
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    if np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer):
        values = np.union1d(a, b)
        ca = np.array([(a == v).sum() for v in values], dtype=float)
        cb = np.array([(b == v).sum() for v in values], dtype=float)
        keep = (ca + cb) > 0
        table = np.vstack([ca[keep], cb[keep]])
        if table.shape[1] < 2:
            return 1.0
        p = float(stats.chi2_contingency(table)[1])
    else:
        p = float(stats.ks_2samp(a, b).pvalue)
    assert p > p_min, f"two-sample test p = {p:.3g} < {p_min}"
    return p

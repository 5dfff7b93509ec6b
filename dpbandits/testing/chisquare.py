"""Chi-square tests of the kit: two samples, independence, and a sample against a pmf."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = ["goodness_of_fit_p", "independence_p", "two_sample_p"]


def _pool_rare_columns(table: NDArray[np.float64]) -> NDArray[np.float64]:
    """Merge the columns with an expected count below 5 into one (the chi-square condition);
    drop that column if it is still below 5 (the test then compares the other columns)."""

    def rare(t: NDArray[np.float64]) -> NDArray[np.bool_]:
        n = t.sum()
        return t.sum(axis=1).min() * t.sum(axis=0) / max(n, 1.0) < 5.0

    if table.size == 0:
        return table
    small = rare(table)
    if not small.any():
        return table
    pooled = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)])
    return pooled if not rare(pooled)[-1] else pooled[:, :-1]


def _contingency_p(table: NDArray[np.float64]) -> float:
    """p-value of the chi-square test of independence of a contingency table's rows and columns.

    Rare columns and rows are pooled first; a table left with one row or column gives 1.
    """
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    table = _pool_rare_columns(table)
    table = _pool_rare_columns(table[table.sum(axis=1) > 0].T).T
    if min(table.shape) < 2:
        return 1.0
    return float(stats.chi2_contingency(table)[1])


def two_sample_p(a: NDArray[np.int64], b: NDArray[np.int64], k: int) -> float:
    """Chi-square test that two samples of indices in ``[0, K)`` have one law (p-value)."""
    return _contingency_p(np.vstack([np.bincount(a, minlength=k), np.bincount(b, minlength=k)]))


def independence_p(x: NDArray[np.int64], y: NDArray[np.int64], k: int) -> float:
    """Chi-square test of independence of paired indices ``(x[i], y[i])`` (p-value)."""
    table = np.zeros((k, k))
    np.add.at(table, (x, y), 1)
    return _contingency_p(table)


def goodness_of_fit_p(sample: NDArray[np.int64], pmf: NDArray[np.float64]) -> float:
    """Chi-square goodness-of-fit test of indices ``sample`` against ``pmf`` (p-value).

    Meant for pmfs whose expected counts are all well above 5 (the kit uses the uniform law).
    """
    counts = np.bincount(sample, minlength=pmf.size)
    return float(stats.chisquare(counts, sample.size * pmf).pvalue)

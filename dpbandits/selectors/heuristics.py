"""Correlation heuristics between scores and sensitivities (§VII, App. I).

Plain functions (not selectors, not private): they tell which mechanism is expected to do well.
Both work along the last axis of a batch and return NaN (without a warning) when a correlation
is undefined, e.g. for constant scores or constant sensitivities.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from dpbandits.selectors.base import FloatArray

__all__ = ["spearman", "weighted_correlation"]


def _as_pair(q: ArrayLike, d: ArrayLike) -> tuple[FloatArray, FloatArray]:
    qa = np.asarray(q, dtype=np.float64)
    da = np.asarray(d, dtype=np.float64)
    if qa.ndim == 0:
        raise ValueError("q must have shape (..., K) with at least one axis, got a scalar")
    try:
        shape = np.broadcast_shapes(qa.shape, da.shape)
    except ValueError:
        raise ValueError(
            f"d with shape {da.shape} is not broadcastable to q with shape {qa.shape}"
        ) from None
    if qa.shape[-1] == 0:
        raise ValueError(f"q has zero candidates (shape {qa.shape})")
    if not (np.all(np.isfinite(qa)) and np.all(np.isfinite(da))):
        raise ValueError("q and d must be finite")
    return np.broadcast_to(qa, shape), np.broadcast_to(da, shape)


def _pearson(x: FloatArray, y: FloatArray, w: FloatArray | None = None) -> FloatArray:
    """(Weighted) Pearson correlation along the last axis; NaN where undefined."""
    if w is None:
        w = np.ones_like(x)
    sw = w.sum(axis=-1, keepdims=True)
    mx = (w * x).sum(axis=-1, keepdims=True) / sw
    my = (w * y).sum(axis=-1, keepdims=True) / sw
    dx, dy = x - mx, y - my
    num = (w * dx * dy).sum(axis=-1)
    den = np.sqrt((w * dx * dx).sum(axis=-1) * (w * dy * dy).sum(axis=-1))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return np.clip(out, -1.0, 1.0)  # rounding can give 1 + 1e-16


def spearman(q: ArrayLike, d: ArrayLike) -> FloatArray:
    """Spearman rank correlation of ``q`` and ``d`` along the last axis (§VII, Alg. 2).

    Ties get their average rank (as :func:`scipy.stats.spearmanr`). Returns shape
    ``q.shape[:-1]``; NaN where either argument is constant along the axis.
    """
    qa, da = _as_pair(q, d)
    rq = rankdata(qa, method="average", axis=-1)
    rd = rankdata(da, method="average", axis=-1)
    return _pearson(rq, rd)


def weighted_correlation(q: ArrayLike, d: ArrayLike, buckets: int = 5) -> FloatArray:
    """The weighted correlation of App. I, eq. (17).

    ``[min q, max q]`` is split into ``buckets`` equal intervals, half-open except the last,
    which is closed. Candidate ``a`` in bucket ``b`` gets weight ``w[a] = d[a] / max{d[c] : c in
    b}``; the result is the Pearson correlation of ``q`` and ``d`` with weights ``w`` and
    weighted means. When all scores are equal every candidate is in the first bucket (and the
    correlation is NaN).
    """
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or buckets < 1:
        raise ValueError(f"buckets must be an integer >= 1, got {buckets!r}")
    qa, da = _as_pair(q, d)
    if np.any(da <= 0):
        raise ValueError("sensitivities d must be > 0 for weighted_correlation")
    qmin = qa.min(axis=-1, keepdims=True)
    width = (qa.max(axis=-1, keepdims=True) - qmin) / buckets
    pos = np.zeros(qa.shape)
    np.divide(qa - qmin, width, out=pos, where=np.broadcast_to(width > 0, qa.shape))
    bucket = np.minimum(np.floor(pos), buckets - 1).astype(np.int64)
    w = np.empty(qa.shape)
    for b in range(buckets):  # a loop over the (few) buckets, vectorised over rows
        in_b = bucket == b
        dmax = np.where(in_b, da, 0.0).max(axis=-1, keepdims=True)
        np.divide(da, dmax, out=w, where=in_b)
    return _pearson(qa, da, w)

"""Correlation heuristics between scores and sensitivities (§VII, App. I).

Plain functions (not selectors, not private): they tell which mechanism is expected to do well.
Both work along the last axis of a batch and return NaN (without a warning) when a correlation
is undefined, e.g. for constant scores or constant sensitivities.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks
from dpbandits.selectors.base import FloatArray

__all__ = ["average_ranks", "spearman", "weighted_correlation"]


def _as_pair(q: ArrayLike, d: ArrayLike) -> tuple[FloatArray, FloatArray]:
    qa = checks.real_array(q, "q", finite=False)  # finiteness is checked below, for both
    da = checks.real_array(d, "d", finite=False)
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


def average_ranks(x: FloatArray) -> FloatArray:
    """Ranks ``1..K`` along the last axis, ties given their average rank.

    As :func:`scipy.stats.rankdata` with ``method="average"`` (same values), vectorised: one
    argsort per row (unstable quicksort: ties are averaged anyway, and it is ~3x faster than a
    stable sort), and the tie groups found in sorted order. A batch whose rows all share the
    same values (a broadcast view) is ranked once.
    """
    xa = np.asarray(x, dtype=np.float64)
    k = xa.shape[-1]
    flat = xa.reshape(-1, k) if xa.ndim != 2 else xa
    if flat.shape[0] > 1 and flat.strides[0] == 0:
        return np.broadcast_to(average_ranks(flat[:1]), xa.shape)
    order = np.argsort(flat, axis=1)
    xs = np.take_along_axis(flat, order, axis=1)
    pos = np.arange(1.0, k + 1.0)  # rank of each sorted position when there are no ties
    tied = xs[:, 1:] == xs[:, :-1]  # position j + 1 continues the tie group of position j
    if tied.any():
        n = flat.shape[0]
        # first and last sorted position of each position's tie group: running max / min
        starts = np.ones((n, k), dtype=bool)
        starts[:, 1:] = ~tied
        first = np.maximum.accumulate(np.where(starts, pos, 1.0), axis=1)
        ends = np.ones((n, k), dtype=bool)
        ends[:, :-1] = ~tied
        last = np.minimum.accumulate(np.where(ends, pos, float(k))[:, ::-1], axis=1)[:, ::-1]
        sorted_ranks = 0.5 * (first + last)  # exact: sums of small integers
    else:
        sorted_ranks = np.broadcast_to(pos, flat.shape)
    ranks = np.empty(flat.shape)
    np.put_along_axis(ranks, order, sorted_ranks, axis=1)
    return ranks.reshape(xa.shape)


def _rank_correlation(rq: FloatArray, rd: FloatArray) -> FloatArray:
    """Pearson correlation of two rank arrays along the last axis; NaN where undefined.

    Average ranks of K values always have mean ``(K + 1) / 2``, so the centred ranks are
    multiples of 1/2 and every sum below is exact: the sign of the result (which
    ``combined_gem`` uses) is exact, and a correlation of exactly 0 is found as such.
    """
    mid = 0.5 * (rq.shape[-1] + 1)
    dx = rq - mid
    dy = rd - mid
    num = np.einsum("...k,...k->...", dx, dy)
    den = np.sqrt(np.einsum("...k,...k->...", dx, dx) * np.einsum("...k,...k->...", dy, dy))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return np.clip(out, -1.0, 1.0)  # rounding can give 1 + 1e-16


def spearman_validated(q: FloatArray, d: FloatArray) -> FloatArray:
    """:func:`spearman` for finite ``q`` and ``d`` of the same shape (no checks)."""
    return _rank_correlation(average_ranks(q), average_ranks(d))


def spearman(q: ArrayLike, d: ArrayLike) -> FloatArray:
    """Spearman rank correlation of ``q`` and ``d`` along the last axis (§VII, Alg. 2).

    Ties get their average rank (as :func:`scipy.stats.spearmanr`). Returns shape
    ``q.shape[:-1]``; NaN where either argument is constant along the axis.
    """
    qa, da = _as_pair(q, d)
    return spearman_validated(qa, da)


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

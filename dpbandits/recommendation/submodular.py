"""Greedy k-set selection for a sum of saturated utilities (paper 004, §3.2 and Algorithm 1).

For sampled feature vectors ``F_s`` (rows) and items (columns), ``values[f, b]`` is
``u_M(f, b) 1[b in R_f^r]`` (Eq. 4: only the top ``r`` items of each sample count; ``r = None``
keeps every item). The utility of a set ``B`` for ``f`` is the sum of its ``t`` best values
(Eq. 3; ``t = 1``: the user will pick its best item; ``t = None``: the plain sum of Eq. 5), and
``U(B) = sum_f u^t(f, B)`` is non-decreasing and submodular for non-negative values. Algorithm 1
adds, ``k`` times, the item with the largest marginal gain, which reaches at least ``1 - 1/e``
of the best ``k``-set (Theorem 1, Nemhauser et al. 1978); :func:`brute_force_k_set` finds the
optimum on small instances to check it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core.arrays import FloatArray

__all__ = ["brute_force_k_set", "greedy_k_set", "saturated_values", "set_utility"]


def _check_k(k: object, m: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not (1 <= k <= m):
        raise ValueError(f"k must be an integer in [1, {m}] (the number of items), got {k!r}")
    return int(k)


def _check_t(t: object) -> int | None:
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
        raise ValueError(f"t must be None or an integer >= 1, got {t!r}")
    return int(t)


def _values(values: ArrayLike) -> FloatArray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] == 0:
        raise ValueError(f"values must have shape (samples, items), got {v.shape}")
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("values must be finite and >= 0 (the utility must be monotone)")
    return v


def saturated_values(utilities: ArrayLike, r: int | None = None) -> FloatArray:
    """``u_M(f, b) 1[b in R_f^r]`` (Eq. 4): each row keeps its ``r`` largest entries."""
    u = np.asarray(utilities, dtype=np.float64)
    if r is None or r >= u.shape[-1]:
        return u.copy()
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"r must be None or an integer >= 1, got {r!r}")
    top = np.argpartition(-u, r - 1, axis=-1)[..., :r]
    out = np.zeros_like(u)
    np.put_along_axis(out, top, np.take_along_axis(u, top, axis=-1), axis=-1)
    return out


def set_utility(values: ArrayLike, items: Sequence[int], t: int | None = 1) -> float:
    """``U(B) = sum_f`` (sum of the ``t`` largest ``values[f, b]``, ``b in B``)."""
    v = _values(values)
    tt = _check_t(t)
    b = list(items)
    if not b:
        return 0.0
    sub = v[:, b]
    if tt is None or tt >= sub.shape[1]:
        return float(sub.sum())
    return float(-np.sort(-sub, axis=1)[:, :tt].sum())


def greedy_k_set(values: ArrayLike, k: int, t: int | None = 1) -> list[int]:
    """Algorithm 1: ``k`` items chosen one by one by largest marginal gain of ``U``.

    Returns the items in the order chosen (so the first ``j`` are the greedy ``j``-set). Ties
    go to the lowest item index.
    """
    v = _values(values)
    n, m = v.shape
    kk = _check_k(k, m)
    tt = _check_t(t)
    chosen: list[int] = []
    available = np.ones(m, dtype=bool)
    if tt is None:  # additive utility: the greedy set is the k largest column sums
        gains = v.sum(axis=0)
        return [int(i) for i in np.argsort(-gains, kind="stable")[:kk]]
    best = np.zeros((n, tt))  # the t largest chosen values per sample, descending (0-padded)
    for _ in range(kk):
        # adding b raises u^t(f, .) by max(0, v[f, b] - (t-th largest chosen value))
        gains = np.maximum(v - best[:, -1:], 0.0).sum(axis=0)
        gains[~available] = -math.inf
        b = int(np.argmax(gains))
        chosen.append(b)
        available[b] = False
        merged = np.concatenate([best, v[:, b : b + 1]], axis=1)
        best = -np.sort(-merged, axis=1)[:, :tt]
    return chosen


def brute_force_k_set(values: ArrayLike, k: int, t: int | None = 1) -> tuple[list[int], float]:
    """The best ``k``-set by enumeration (small instances only) and its utility."""
    v = _values(values)
    kk = _check_k(k, v.shape[1])
    if math.comb(v.shape[1], kk) > 2_000_000:
        raise ValueError(f"C({v.shape[1]}, {kk}) subsets is too many to enumerate")
    best_set: tuple[int, ...] = ()
    best_val = -math.inf
    for s in itertools.combinations(range(v.shape[1]), kk):
        val = set_utility(v, s, t)
        if val > best_val:
            best_set, best_val = s, val
    return list(best_set), best_val

"""The terms of GEM's normalised scores, eq. (6), for one row: by brute force, over the Pareto
front, or over the upper convex hull (:mod:`dpbandits.selectors.gem` selects with them).

``q'[a] = min_{a'} (s[a] - s[a']) / (d[a] + d[a'])`` with the shifted scores ``s = q - t d``.
The brute force is O(K^2) per row and the cheapest for a few candidates; the front and the hull
try only the candidates that can attain the minimum (see each kernel).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbandits.core.jit import beats, kernel
from dpbandits.core.sorting import stable_argsort

__all__ = [
    "METHODS",
    "gem_front_row",
    "gem_hull_row",
    "gem_pairwise_row",
    "gem_terms_row",
    "terms_min",
]

#: ``method`` codes of the kernels.
METHODS: tuple[str, ...] = ("pairwise", "front", "hull")


@kernel
def _minimum(o: float, v: float) -> float:
    """``numpy.minimum(o, v)``: NaN propagates, and ``v`` is returned when the two are equal
    (so signed zeros come out as numpy gives them)."""
    return v if (o == o and not (o < v)) else o


@kernel
def terms_min(x: float, q: Any, d: Any, r: int, a: int, t: float, shift: bool) -> float:
    """``min(x, (s[a] - s[b]) / (d[a] + d[b]) for b = 0, 1, ...)`` in that order, on row ``r``
    of the 2-D ``q``, ``d``: eq. (6)'s terms of candidate ``a`` by brute force, with
    ``s = q - d t`` (``shift``) or ``s = q`` (``q`` already shifted). Recomputing ``s[b]`` is
    the same rounding, so no work row is needed."""
    da = d[r, a]
    sa = q[r, a] - da * t if shift else q[r, a]
    for b in range(q.shape[1]):
        db = d[r, b]
        sb = q[r, b] - db * t if shift else q[r, b]
        x = _minimum(x, (sa - sb) / (da + db))
    return x


@kernel
def gem_pairwise_row(s: Any, d: Any, out: Any) -> None:
    """``out[a] = min(out[a], min_{a'} (s[a] - s[a']) / (d[a] + d[a']))`` for one row, eq. (6)
    by brute force, O(K^2): the terms of each ``a'`` in order."""
    s2, d2 = s[None, :], d[None, :]
    for a in range(s.shape[0]):
        out[a] = terms_min(out[a], s2, d2, 0, a, 0.0, False)


@kernel
def gem_front_row(s: Any, d: Any, out: Any) -> None:
    """eq. (6) for one row trying only the Pareto front (bit-identical to the brute force).

    ``-q'[a] = max(0, max_{a'} f_a(a'))`` with ``f_a(a') = (s[a'] - s[a]) / (d[a'] + d[a])``.
    If ``a''`` dominates ``a'`` (``s[a''] >= s[a']``, ``d[a''] <= d[a']``) and ``f_a(a') >= 0``
    then ``f_a(a'') >= f_a(a')`` -- also in floating point, since rounded subtraction, addition
    and division are monotone. The candidates not dominated by one with smaller ``d`` (a stable
    sort on ``d`` and a running maximum of ``s``) therefore give the brute-force minimum bit for
    bit. The brute force when the front holds more than a quarter of the candidates.
    """
    k = s.shape[0]
    order = np.empty(k, dtype=np.int64)
    stable_argsort(d, order)
    members = np.empty(k, dtype=np.int64)
    width = 1
    members[0] = order[0]
    top = s[order[0]]
    for j in range(1, k):
        c = order[j]
        if s[c] > top:
            members[width] = c
            width += 1
        top = max(top, s[c])
    if 4 * width > k:
        gem_pairwise_row(s, d, out)
        return
    for j in range(width):
        b = members[j]
        sb, db = s[b], d[b]
        for a in range(k):
            out[a] = _minimum(out[a], (s[a] - sb) / (d[a] + db))


@kernel
def gem_hull_row(s: Any, d: Any, out: Any, max_steps: int) -> None:
    """eq. (6) for one row trying only the upper convex hull of the points ``(d, s)`` left of
    the apex.

    ``-q'[a] = max(0, max_{a'} (s[a'] - s[a]) / (d[a'] + d[a]))`` is the largest slope from
    ``(-d[a], s[a])`` to a point ``(d[a'], s[a'])``, and ``-d[a] < 0 < d[a']``: the largest
    slope from a point left of all the others is attained at a vertex of their upper convex
    hull, and (being ``>= 0`` where it matters) at one no further right than the apex
    ``argmax s``. Those vertices are found by gift wrapping (Jarvis march) from the apex
    leftwards: the next vertex left of ``v`` is the point with ``d < d[v]`` from which the
    slope up to ``v`` is smallest (the first such point). Each step evaluates one vertex for
    every ``a`` and finds the next, sharing ``s - s[v]``. A chain has ~2 vertices for GEM and
    ~5 for mGEM on random scores (K = 100), so this costs a few brute-force rounds instead of
    K, and needs no sort. Equal to the brute force up to rounding in near-collinear ties. A
    chain longer than ``max_steps`` (e.g. concave scores) finishes with the brute force, which
    bounds the worst case.
    """
    k = s.shape[0]
    v = 0
    for a in range(1, k):
        if beats(s[a], s[v]):
            v = a
    moved = True
    for _ in range(max_steps):
        sv, dv = s[v], d[v]
        nxt = 0
        best = math.inf
        for a in range(k):
            num = s[a] - sv
            out[a] = _minimum(out[a], num / (d[a] + dv))  # the a' = v term of eq. (6)
            left = d[a] - dv
            # slope from a point left of v up to v; +inf elsewhere (a = v would be 0/0)
            key = num / left if left < 0.0 else math.inf
            if a == 0 or key < best or (key != key and best == best):  # numpy.argmin's rule
                nxt, best = a, key
        moved = d[nxt] - dv < 0.0  # False: no point left of v, the chain is complete
        if not moved:
            break
        v = nxt
    if moved:  # a chain longer than max_steps: the brute force (a superset of the terms)
        gem_pairwise_row(s, d, out)


@kernel
def gem_terms_row(s: Any, d: Any, out: Any, method: int) -> None:
    """``out = min(out, eq. (6) terms)`` for one row by ``METHODS[method]``."""
    if method == 0:
        gem_pairwise_row(s, d, out)
    elif method == 1:
        gem_front_row(s, d, out)
    else:
        gem_hull_row(s, d, out, max(2, s.shape[0] // 4))

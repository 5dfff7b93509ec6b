"""The Generalised Exponential Mechanism and its variants (§IV-C, §IV-D, §VII Alg. 2).

GEM (Raskhodnikova & Smith 2015) maps the scores to, eq. (6)/(7),

    q'[a] = min_{a'} ((q[a] - t d[a]) - (q[a'] - t d[a'])) / (d[a] + d[a'])

which has sensitivity at most 1 whatever the ``d`` (each term moves by at most
``(d[a] + d[a']) / (d[a] + d[a']) = 1`` between neighbours, and so does their minimum), and
runs RNM on ``q'`` with ``D = 1`` (footnote 3: exponential noise; ``noise="gumbel"`` gives the
original exponential-mechanism version). ``gem`` uses ``t = 2 ln(K/beta)/eps``; ``mgem`` (§IV-D)
uses ``t = -2 ln(K/beta)/eps``. ``combined_gem`` is Alg. 2.

Computation and memory: the pairwise term is a ``(K, K)`` matrix per row; :func:`gem_scores`
never forms it. The brute force loops over ``a'`` with ``(rows, K)`` temporaries; for larger K
only the candidates on the Pareto front of the points ``(d, s)``, or on their upper convex
hull, can attain the minimum, which makes the cost O(K log K + K h) per row (h = number of
such candidates, typically small). Rows are chunked, so no temporary exceeds
``max(K, max_elements)`` float64 values (``max_elements = 2**21``, 16 MB).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbandits.selectors.base import FloatArray, IntArray, Selector, check_probability
from dpbandits.selectors.heuristics import spearman
from dpbandits.selectors.noisy_max import NOISES, NoiseName, rnm_select

__all__ = ["GEM", "MGEM", "CombinedGEM", "gem_scores", "gem_t"]

#: Largest pairwise temporary, in float64 elements (2**21 * 8 B = 16 MB; a few live at once).
MAX_ELEMENTS = 2**21


def gem_t(k: int, epsilon: float, beta: float) -> float:
    """``t = 2 ln(K/beta) / eps`` (§IV-C)."""
    return 2.0 * math.log(k / beta) / epsilon


def _min_over_candidates(
    s: FloatArray, d: FloatArray, sb: FloatArray, db: FloatArray, out: FloatArray
) -> None:
    """``out = min(out, (s - sb) / (d + db))`` with ``sb``, ``db`` of shape ``(rows, 1)``."""
    num = s - sb
    num /= d + db
    np.minimum(out, num, out=out)


def _gem_chunk_pairwise(s: FloatArray, d: FloatArray, out: FloatArray) -> None:
    """eq. (6) by brute force: a loop over a' with ``(rows, K)`` temporaries, O(K^2) per row."""
    for b in range(s.shape[1]):
        _min_over_candidates(s, d, s[:, b : b + 1], d[:, b : b + 1], out)


def _try_candidates(
    s: FloatArray, d: FloatArray, out: FloatArray, members: NDArray[np.int64]
) -> None:
    """``out = min(out, min_j (s - s[b_j]) / (d + d[b_j]))`` for candidates ``members[:, j]``."""
    rows = np.arange(s.shape[0])
    for j in range(members.shape[1]):
        b = members[:, j]
        _min_over_candidates(s, d, s[rows, b][:, None], d[rows, b][:, None], out)


def _upper_hull(
    x: FloatArray, y: FloatArray, tol: float = 1e-12
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Vertices of the upper convex hull of each row's points ``(x[r, j], y[r, j])``.

    ``x`` must be sorted along each row and both coordinates scaled to ``O(1)``. Andrew's
    monotone chain over the K points, vectorised over rows (flat indexing into per-row
    stacks). A point is popped only when the turn is counter-clockwise by more than ``tol``,
    so near-collinear points stay: the result is a *superset* of the hull's vertices, which
    is all the caller needs. Returns the positions ``H[r, :top[r]]`` and ``top``.
    """
    r, k = x.shape
    hx, hy = np.empty(r * k), np.empty(r * k)
    hp = np.empty(r * k, dtype=np.int64)
    base = np.arange(r) * k
    top = np.zeros(r, dtype=np.int64)
    for j in range(k):
        px, py = x[:, j], y[:, j]
        cand = np.flatnonzero(top >= 2)
        while cand.size:
            f = base[cand] + top[cand]
            ax, ay = hx[f - 2], hy[f - 2]
            cross = (hx[f - 1] - ax) * (py[cand] - ay) - (hy[f - 1] - ay) * (px[cand] - ax)
            cand = cand[cross > tol]
            top[cand] -= 1
            cand = cand[top[cand] >= 2]
        f = base + top
        hx[f], hy[f], hp[f] = px, py, j
        top += 1
    return hp.reshape(r, k), top


def _gem_chunk_fast(s: FloatArray, d: FloatArray, out: FloatArray, use_hull: bool) -> None:
    """eq. (6) trying only candidates that can attain the minimum.

    ``-q'[a] = max(0, max_{a'} f_a(a'))`` with ``f_a(a') = (s[a'] - s[a]) / (d[a'] + d[a])``,
    the slope from ``(-d[a], s[a])`` to ``(d[a'], s[a'])``.

    1. Pareto front: if ``a''`` dominates ``a'`` (``s[a''] >= s[a']``, ``d[a''] <= d[a']``)
       and ``f_a(a') >= 0`` then ``f_a(a'') >= f_a(a')`` -- also in floating point, since
       rounded subtraction, addition and division are monotone. The candidates not dominated
       by one with smaller ``d`` (a sort on ``d`` and a running maximum of ``s``) therefore
       give the brute-force minimum bit for bit.
    2. If the front is large (scores increasing with sensitivity, typical for mGEM) and
       ``use_hull``: since ``-d[a] < 0 < d[a']`` the largest slope is attained at a vertex of
       the upper convex hull of the points ``(d, s)``; try those (equal to the brute force up
       to rounding in near-ties).
    3. Otherwise the brute force.
    """
    r, k = s.shape
    if d.strides[0] == 0:  # sensitivities shared by all rows (broadcast): sort once
        order = np.broadcast_to(np.argsort(d[0], kind="stable"), (r, k))
    else:
        order = np.argsort(d, axis=1, kind="stable")
    ys = np.take_along_axis(s, order, axis=1)
    front = np.empty((r, k), dtype=bool)
    front[:, 0] = True
    front[:, 1:] = ys[:, 1:] > np.maximum.accumulate(ys, axis=1)[:, :-1]
    width = int(front.sum(axis=1).max())
    if 4 * width <= k:
        # positions of the front members of each row, padded with the (always present) first
        ri, ci = np.nonzero(front)
        rank = np.cumsum(front, axis=1)[ri, ci] - 1
        members = np.zeros((r, width), dtype=np.int64)
        members[ri, rank] = order[ri, ci]
        _try_candidates(s, d, out, members)
        return
    if use_hull:
        xs = np.take_along_axis(d, order, axis=1)
        # the hull is invariant under positive scaling of each axis: scale to O(1) so that
        # the cross products can neither overflow nor underflow
        ymax = np.abs(ys).max(axis=1, keepdims=True)
        hull, top = _upper_hull(xs / xs[:, -1:], ys / np.where(ymax > 0, ymax, 1.0))
        width = int(top.max())
        if 2 * width <= k:
            rows = np.arange(r)[:, None]
            pos = hull[rows, np.minimum(np.arange(width), top[:, None] - 1)]
            _try_candidates(s, d, out, np.asarray(order)[rows, pos])
            return
    _gem_chunk_pairwise(s, d, out)


def gem_scores(
    q: FloatArray,
    d: FloatArray,
    t: float,
    *,
    max_elements: int = MAX_ELEMENTS,
    method: str = "auto",
) -> FloatArray:
    """GEM's normalised scores ``q'`` of eq. (6) for a batch ``q``, ``d`` of shape ``(R, K)``.

    ``q'[a] <= 0`` (the ``a' = a`` term is 0) and a maximiser of ``q - t d`` has ``q' = 0``.
    ``method``: ``"pairwise"`` is the O(K^2)-per-row brute force; ``"front"`` tries only the
    Pareto front (bit-identical; brute force when the front is large); ``"hull"`` adds the
    convex-hull candidates (identical up to rounding); ``"auto"`` (default) is ``"pairwise"``
    for K <= 8, ``"front"`` for chunks of fewer than 64 rows and ``"hull"`` otherwise.
    Rows are processed in chunks so that no temporary holds more than ``max(K, max_elements)``
    values.
    """
    if method not in ("auto", "front", "hull", "pairwise"):
        raise ValueError(f"method must be 'auto', 'front', 'hull' or 'pairwise', got {method!r}")
    r, k = q.shape
    with np.errstate(over="ignore"):
        s = q - t * d
    if not np.all(np.isfinite(s)):
        raise ValueError("q - t * d overflows for GEM; rescale q and d")
    out = np.zeros((r, k), dtype=np.float64)  # the a' = a term is exactly 0
    rows = max(1, max_elements // k)
    if method == "auto":
        method = "pairwise" if k <= 8 else ("front" if min(rows, r) < 64 else "hull")
    with np.errstate(over="ignore"):  # a difference of two huge finite s may be +-inf: fine
        for r0 in range(0, r, rows):
            sl = slice(r0, r0 + rows)
            if method == "pairwise":
                _gem_chunk_pairwise(s[sl], d[sl], out[sl])
            else:
                _gem_chunk_fast(s[sl], d[sl], out[sl], use_hull=method == "hull")
    return out


class GEM(Selector):
    """Generalised Exponential Mechanism (§IV-C, eq. (6)), ``t = 2 ln(K/beta)/eps``.

    Output: RNM on ``q'`` with ``D = 1`` and the same eps (exponential noise by default, as in
    the paper's footnote 3). eps-DP because ``q'`` has sensitivity at most 1.
    """

    name = "gem"
    guarantee = "eps-DP"
    summary = "RNM on q'[a] = min_a' (s[a]-s[a'])/(d[a]+d[a']), s = q - t d, t = 2ln(K/beta)/eps"
    _sign = 1.0

    def __init__(
        self, epsilon: float = 1.0, beta: float = 0.05, noise: NoiseName = "exponential"
    ) -> None:
        super().__init__(epsilon)
        self.beta = check_probability(beta, "beta")
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        self.noise = noise

    def t(self, k: int) -> float:
        """The shift ``t`` for ``K = k`` candidates (negative for mGEM)."""
        return self._sign * gem_t(k, self.epsilon, self.beta)

    def scores(self, q: FloatArray, d: FloatArray) -> FloatArray:
        """The normalised scores ``q'`` (eq. (6)) for a validated ``(R, K)`` batch."""
        return gem_scores(q, d, self.t(q.shape[1]))

    def _select(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        qp = self.scores(q, d)
        scale = np.full((q.shape[0], 1), 2.0 / self.epsilon)  # D = 1 for q'
        return rnm_select(qp, scale, self.noise, rng)


class MGEM(GEM):
    """Modified GEM (§IV-D): GEM with ``t = -2 ln(K/beta)/eps`` (favours high sensitivity)."""

    name = "mgem"
    summary = "GEM with t = -2 ln(K/beta)/eps"
    _sign = -1.0


class CombinedGEM(Selector):
    """Combined GEM, Alg. 2 (§VII).

    ``eps_c = c * eps``; the bit ``b = [spearman(q, d) >= 0]`` (a NaN correlation, e.g. constant
    ``d``, counts as 0, so ``b = 1``) is released by binary randomised response with ``eps_c``
    (kept with probability ``e^eps_c / (e^eps_c + 1)``); a reported 1 runs ``mgem``, a 0 runs
    ``gem``, both with ``eps_g = eps - eps_c``. eps-DP by sequential composition.
    """

    name = "combined_gem"
    guarantee = "eps-DP"
    summary = "2RR_{c eps}(spearman(q,d) >= 0) picks mgem (1) or gem (0) with (1-c) eps"

    def __init__(
        self,
        epsilon: float = 1.0,
        c: float = 0.6,
        beta: float = 0.05,
        noise: NoiseName = "exponential",
    ) -> None:
        super().__init__(epsilon)
        self.c = check_probability(c, "c")
        self.beta = check_probability(beta, "beta")
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        self.noise = noise

    @property
    def epsilon_c(self) -> float:
        """Budget of the randomised-response bit, ``c * eps``."""
        return self.c * self.epsilon

    @property
    def epsilon_g(self) -> float:
        """Budget of the GEM / mGEM selection, ``eps - eps_c``."""
        return self.epsilon - self.epsilon_c

    def _select(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        r = q.shape[0]
        rho = spearman(q, d)
        bit = ~(rho < 0)  # NaN counts as 0 -> bit 1
        p_keep = 1.0 / (1.0 + math.exp(-self.epsilon_c))
        flip = rng.random(r) >= p_keep
        reported = bit ^ flip
        out = np.empty(r, dtype=np.int64)
        for mask, cls in ((reported, MGEM), (~reported, GEM)):
            if np.any(mask):
                sel = cls(self.epsilon_g, beta=self.beta, noise=self.noise)
                out[mask] = sel._select(q[mask], d[mask], rng)
        return out

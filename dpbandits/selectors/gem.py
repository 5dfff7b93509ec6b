"""The Generalised Exponential Mechanism and its variants (§IV-C, §IV-D, §VII Alg. 2).

GEM (Raskhodnikova & Smith 2015) maps the scores to, eq. (6)/(7),

    q'[a] = min_{a'} ((q[a] - t d[a]) - (q[a'] - t d[a'])) / (d[a] + d[a'])

which has sensitivity at most 1 whatever the ``d`` (each term moves by at most
``(d[a] + d[a']) / (d[a] + d[a']) = 1`` between neighbours, and so does their minimum), and
runs RNM on ``q'`` with ``D = 1`` (footnote 3: exponential noise; ``noise="gumbel"`` gives the
original exponential-mechanism version). ``gem`` uses ``t = 2 ln(K/beta)/eps``; ``mgem`` (§IV-D)
uses ``t = -2 ln(K/beta)/eps``. ``combined_gem`` is Alg. 2.

Computation and memory: the pairwise term is a ``(K, K)`` matrix per row; :func:`gem_scores`
never forms it. The brute force loops over ``a'`` with ``(rows, K)`` temporaries (cheapest for
K <= 8). For larger K only the vertices of the upper convex hull of the points ``(d, s)`` left
of ``argmax s`` can attain the minimum; gift wrapping finds them one per step, so the cost is
O(K h) per row with h ~ 2 (GEM) to ~5 (mGEM) on random scores, and no sort. (A ``(rows, K, K)``
block brute force was measured too: at K = 100 it is ~10x slower than the hull, and no faster
than the loop for small K.) Rows are processed in blocks of about :data:`BLOCK` values, which
bounds every temporary and keeps the work in cache; :func:`gem_select` computes and noises
``q'`` block by block.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbandits import checks
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    Selector,
)
from dpbandits.selectors.heuristics import spearman_validated
from dpbandits.selectors.noisy_max import (
    BLOCK,
    NOISES,
    NoiseName,
    add_standard_noise,
    rnm_select,
)

__all__ = ["GEM", "MGEM", "CombinedGEM", "gem_scores", "gem_select", "gem_t"]

#: Largest temporary, in float64 elements (2**21 * 8 B = 16 MB); blocks are at most BLOCK.
MAX_ELEMENTS = 2**21
#: ``method="auto"`` uses the brute force up to this many candidates.
PAIRWISE_MAX_K = 8


#: No batch has more candidates than this (an ``(R, K)`` float array with ``2**40`` columns is
#: 8 TiB), so a selector whose threshold is finite for it is finite for every batch.
MAX_CANDIDATES = 2**40


def check_threshold(epsilon: float, beta: float, name: str = "epsilon") -> None:
    """Refuse, when a selector is built, an ``epsilon`` for which ``t = 2 ln(K/beta)/epsilon``
    (§IV-C) overflows for some ``K <= MAX_CANDIDATES`` (``epsilon`` below about ``6e-299`` for
    ``beta = 0.05``): otherwise the error would come at the first selection, mid-run."""
    checks.noise_scale(
        2.0 * math.log(MAX_CANDIDATES / beta), epsilon,
        "the GEM threshold t = 2 ln(K/beta)/epsilon (K up to 2**40)", name,
    )  # fmt: skip


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
    # two work buffers for all a' and positional out= arguments: at K = 2 this loop is on the
    # private agents' per-step path, where the number of numpy calls is the cost
    num, den = np.empty_like(s), np.empty_like(s)
    for b in range(s.shape[1]):
        np.subtract(s, s[:, b, None], num)
        np.add(d, d[:, b, None], den)
        np.divide(num, den, num)
        np.minimum(out, num, out=out)


def _try_candidates(
    s: FloatArray, d: FloatArray, out: FloatArray, members: NDArray[np.int64]
) -> None:
    """``out = min(out, min_j (s - s[b_j]) / (d + d[b_j]))`` for candidates ``members[:, j]``."""
    rows = np.arange(s.shape[0])
    for j in range(members.shape[1]):
        b = members[:, j]
        _min_over_candidates(s, d, s[rows, b][:, None], d[rows, b][:, None], out)


def _gem_chunk_front(s: FloatArray, d: FloatArray, out: FloatArray) -> None:
    """eq. (6) trying only the Pareto front (bit-identical to the brute force).

    ``-q'[a] = max(0, max_{a'} f_a(a'))`` with ``f_a(a') = (s[a'] - s[a]) / (d[a'] + d[a])``.
    If ``a''`` dominates ``a'`` (``s[a''] >= s[a']``, ``d[a''] <= d[a']``) and ``f_a(a') >= 0``
    then ``f_a(a'') >= f_a(a')`` -- also in floating point, since rounded subtraction, addition
    and division are monotone. The candidates not dominated by one with smaller ``d`` (a sort
    on ``d`` and a running maximum of ``s``) therefore give the brute-force minimum bit for
    bit. Falls back to the brute force when the front holds more than a quarter of the rows'
    candidates.
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
    if 4 * width > k:
        _gem_chunk_pairwise(s, d, out)
        return
    # positions of the front members of each row, padded with the (always present) first
    ri, ci = np.nonzero(front)
    rank = np.cumsum(front, axis=1)[ri, ci] - 1
    members = np.zeros((r, width), dtype=np.int64)
    members[ri, rank] = order[ri, ci]
    _try_candidates(s, d, out, members)


def _gem_chunk_hull(s: FloatArray, d: FloatArray, out: FloatArray, max_steps: int) -> None:
    """eq. (6) trying only the upper convex hull of the points ``(d, s)`` left of the apex.

    ``-q'[a] = max(0, max_{a'} (s[a'] - s[a]) / (d[a'] + d[a]))`` is the largest slope from
    ``(-d[a], s[a])`` to a point ``(d[a'], s[a'])``, and ``-d[a] < 0 < d[a']``: the largest
    slope from a point left of all the others is attained at a vertex of their upper convex
    hull, and (being ``>= 0`` where it matters) at one no further right than the apex
    ``argmax s``. Those vertices are found by gift wrapping (Jarvis march) from the apex
    leftwards: the next vertex left of ``v`` is the point with ``d < d[v]`` from which the
    slope up to ``v`` is smallest. Each step evaluates one vertex for every ``a`` and finds
    the next, vectorised over rows; it shares ``s - s[v]`` between the two. A chain has ~2
    vertices for GEM and ~5 for mGEM on random scores (K = 100), so this costs a few
    brute-force rounds instead of K, and needs no sort (the Pareto front's argsort alone costs
    more). Equal to the brute force up to rounding in near-collinear ties. Rows whose chain is
    longer than ``max_steps`` (e.g. concave scores) finish with the brute force,
    which bounds the worst case.
    """
    m, k = s.shape
    num_buf, tmp_buf, key_buf = np.empty((m, k)), np.empty((m, k)), np.empty((m, k))
    # the rows still being wrapped: all of them at first; once at most half are still moving,
    # the finished rows are dropped (chain lengths vary, ~5 +- 2 for mGEM)
    act: NDArray[np.intp] | None = None
    sw, dw, ow = s, d, out
    v = np.argmax(s, axis=1)
    moved = np.ones(m, dtype=bool)
    for _ in range(max_steps):
        n = v.shape[0]
        rows = np.arange(n)
        num, tmp = num_buf[:n], tmp_buf[:n]
        sv, dv = sw[rows, v][:, None], dw[rows, v][:, None]
        np.subtract(sw, sv, out=num)
        np.add(dw, dv, out=tmp)
        np.divide(num, tmp, out=tmp)  # the a' = v term of eq. (6), same rounding as brute force
        np.minimum(ow, tmp, out=ow)
        np.subtract(dw, dv, out=tmp)
        left = tmp < 0.0
        # slope from each point c left of v up to v; +inf elsewhere (c = v would be 0/0).
        # (divide with where= into a prefilled buffer is cheaper than divide + copyto)
        key = key_buf[:n]
        key.fill(np.inf)
        np.divide(num, tmp, out=key, where=left)
        nxt = np.argmin(key, axis=1)
        moved = left[rows, nxt]  # False: no point left of v, the chain is complete
        n_moved = int(np.count_nonzero(moved))
        if n_moved == 0:
            break
        v = np.where(moved, nxt, v)
        if 2 * n_moved <= n:
            if act is not None:
                out[act] = ow
            keep = np.flatnonzero(moved)
            act = keep if act is None else act[keep]
            sw, dw, ow = s[act], d[act], ow[keep]
            v, moved = v[keep], moved[keep]
    else:
        # chains longer than max_steps: the brute force (a superset of the terms taken so far)
        todo = np.flatnonzero(moved)
        part = ow[todo]
        _gem_chunk_pairwise(sw[todo], dw[todo], part)
        ow[todo] = part
    if act is not None:
        out[act] = ow


def _gem_block(s: FloatArray, d: FloatArray, out: FloatArray, method: str) -> None:
    """``out = min(out, eq. (6) terms)`` on one block of rows, by ``method``."""
    if method == "pairwise":
        _gem_chunk_pairwise(s, d, out)
    elif method == "front":
        _gem_chunk_front(s, d, out)
    else:
        _gem_chunk_hull(s, d, out, max_steps=max(2, s.shape[1] // 4))


def _resolve_method(method: str, k: int) -> str:
    if method not in ("auto", "front", "hull", "pairwise"):
        raise ValueError(f"method must be 'auto', 'front', 'hull' or 'pairwise', got {method!r}")
    if method == "auto":
        # the brute force has the least overhead for a few candidates
        return "pairwise" if k <= PAIRWISE_MAX_K else "hull"
    return method


def _shifted_scores(q: FloatArray, d: FloatArray, t: float | FloatArray, out: FloatArray) -> None:
    """``out = q - t * d`` (``t`` a float or per-row ``(rows, 1)``), which must be finite.

    Callers hold ``errstate(over="ignore")``: an overflow is reported by the test below.
    """
    np.multiply(d, t, out)
    np.subtract(q, out, out)
    # One cheap test first: the sum is finite when every entry is (it can overflow for huge
    # entries, and then the exact test decides). Never NaN: q, d, t finite. (Not a BLAS dot
    # product: OpenBLAS threads it for large arrays, which is 1000x slower on a busy machine.)
    if math.isfinite(np.add.reduce(out, axis=None)) or (
        out.max() < np.inf and out.min() > -np.inf
    ):
        return
    t_max = float(np.max(np.abs(t)))
    td = t_max * float(d.max())
    if not td <= checks.MAX_NOISE_SCALE:
        raise ValueError(
            f"epsilon is too small for GEM/mGEM with these sensitivities: the threshold "
            f"t = 2 ln(K/beta)/epsilon = {t_max:.3g} times max d = {float(d.max()):.3g} "
            f"overflows; use an epsilon at least {td / checks.MAX_NOISE_SCALE:.3g} times larger"
            if math.isfinite(t_max)
            else "epsilon is too small for GEM/mGEM: the threshold t = 2 ln(K/beta)/epsilon "
            "is infinite; use a larger epsilon"
        )
    raise ValueError("q - t * d overflows for GEM: the scores are too large; rescale q and d")


def gem_scores(
    q: FloatArray,
    d: FloatArray,
    t: float | FloatArray,
    *,
    max_elements: int = MAX_ELEMENTS,
    method: str = "auto",
) -> FloatArray:
    """GEM's normalised scores ``q'`` of eq. (6) for a batch ``q``, ``d`` of shape ``(R, K)``.

    ``t`` is a float or an array of shape ``(R, 1)`` (one shift per row). ``q'[a] <= 0`` (the
    ``a' = a`` term is 0) and a maximiser of ``q - t d`` has ``q' = 0``. ``method``:
    ``"pairwise"`` is the O(K^2)-per-row brute force; ``"front"`` tries only the Pareto front
    (bit-identical; brute force when the front is large); ``"hull"`` only the upper convex
    hull's vertices left of the apex (identical up to rounding; brute force for rows with long
    hulls); ``"auto"`` (default) is ``"pairwise"`` for ``K <= 8`` and ``"hull"`` otherwise.
    Rows are processed in blocks so that no temporary holds more than
    ``max(K, min(max_elements, BLOCK))`` values.
    """
    r, k = q.shape
    method = _resolve_method(method, k)
    tt = np.asarray(t, dtype=np.float64)
    out = np.zeros((r, k), dtype=np.float64)  # the a' = a term is exactly 0
    rows = max(1, min(max_elements, BLOCK) // k)
    sbuf = np.empty((min(rows, r), k))
    # a difference of two huge finite s may be +-inf: fine; 0/0 only where masked (hull)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for r0 in range(0, r, rows):
            n = min(rows, r - r0)
            s = sbuf[:n]
            _shifted_scores(
                q[r0 : r0 + n], d[r0 : r0 + n], tt if tt.ndim == 0 else tt[r0 : r0 + n], s
            )
            _gem_block(s, d[r0 : r0 + n], out[r0 : r0 + n], method)
    return out


def gem_select(
    q: FloatArray,
    d: FloatArray,
    t: float | FloatArray,
    epsilon: float,
    noise: str,
    rng: np.random.Generator,
) -> IntArray:
    """RNM with ``D = 1`` and budget ``epsilon`` on GEM's ``q'`` (eq. (6)) with shift ``t``.

    Fused per block of rows (:data:`BLOCK`): ``q'`` of a block is computed and noised while
    it is in cache, instead of materialising ``q'`` for the whole batch. ``max q' = 0``
    exactly, so the RNM gaps are ``q' * eps / 2``.
    """
    r, k = q.shape
    lam = epsilon / 2.0  # 1 / (2 D / eps) with D = 1
    if not (0.0 < lam < math.inf):  # eps / 2 underflowed: the careful path of rnm_select
        qp = gem_scores(q, d, t)
        return rnm_select(qp, np.full((r, 1), 2.0 / epsilon), noise, rng)
    method = _resolve_method("auto", k)
    tt = t if type(t) is float else np.asarray(t, dtype=np.float64)
    rows = max(1, BLOCK // k)
    one = r <= rows  # a single block (the bandit agents' case): no index array to fill
    idx = np.empty(0 if one else r, dtype=np.int64)
    m = min(rows, r)
    sbuf, ubuf, zbuf = np.empty((m, k)), np.empty((m, k)), np.empty((m, k))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for r0 in range(0, r, rows):
            n = min(rows, r - r0)
            s, u = sbuf[:n], ubuf[:n]
            tb = tt if isinstance(tt, float) or tt.ndim == 0 else tt[r0 : r0 + n]
            _shifted_scores(q[r0 : r0 + n], d[r0 : r0 + n], tb, s)
            u.fill(0.0)  # the a' = a term is exactly 0
            _gem_block(s, d[r0 : r0 + n], u, method)
            u *= lam  # q' <= 0 with max 0: 0 stays 0, -inf stays -inf
            noisy = add_standard_noise(noise, u, zbuf[:n], rng)
            if one:
                return noisy.argmax(1)
            noisy.argmax(1, out=idx[r0 : r0 + n])
    return idx


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
        self.beta = checks.probability(beta, "beta")
        check_threshold(self.epsilon, self.beta)
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        self.noise = noise

    def t(self, k: int) -> float:
        """The shift ``t`` for ``K = k`` candidates (negative for mGEM)."""
        return self._sign * gem_t(k, self.epsilon, self.beta)

    def scores(self, q: FloatArray, d: FloatArray) -> FloatArray:
        """The normalised scores ``q'`` (eq. (6)) for a validated ``(R, K)`` batch."""
        return gem_scores(q, d, self.t(q.shape[1]))

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        return gem_select(q, d, self.t(q.shape[1]), self.epsilon, self.noise, rng)


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
        self.c = checks.probability(c, "c")
        self.beta = checks.probability(beta, "beta")
        # the GEM / mGEM part runs at eps (1 - c), which can round to 0 for a tiny eps
        check_threshold(self.epsilon_g, self.beta, "epsilon * (1 - c)")
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

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        r = q.shape[0]
        rho = spearman_validated(q, d)  # q, d are validated by select
        bit = ~(rho < 0)  # NaN counts as 0 -> bit 1
        p_keep = 1.0 / (1.0 + math.exp(-self.epsilon_c))
        flip = rng.random(r) >= p_keep
        reported = bit ^ flip
        # one fused GEM pass with a per-row shift: +t_g for rows that run gem, -t_g for mgem
        eps_g = self.epsilon_g  # checked when built (check_threshold): finite t_g, eps_g > 0
        t_g = gem_t(q.shape[1], eps_g, self.beta)
        t = np.where(reported, -t_g, t_g)[:, None]
        return gem_select(q, d, t, eps_g, self.noise, rng)

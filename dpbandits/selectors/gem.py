"""The Generalised Exponential Mechanism and its variants (§IV-C, §IV-D, §VII Alg. 2).

GEM (Raskhodnikova & Smith 2015) maps the scores to, eq. (6)/(7),

    q'[a] = min_{a'} ((q[a] - t d[a]) - (q[a'] - t d[a'])) / (d[a] + d[a'])

which has sensitivity at most 1 whatever the ``d`` (each term moves by at most
``(d[a] + d[a']) / (d[a] + d[a']) = 1`` between neighbours, and so does their minimum), and
runs RNM on ``q'`` with ``D = 1`` (footnote 3: exponential noise; ``noise="gumbel"`` gives the
original exponential-mechanism version). ``gem`` uses ``t = 2 ln(K/beta)/eps``; ``mgem`` (§IV-D)
uses ``t = -2 ln(K/beta)/eps``. ``combined_gem`` is Alg. 2.

Computation and memory: the pairwise term is a ``(K, K)`` matrix per row; it is never formed.
Every computation is a compiled kernel (:mod:`dpbandits.core.jit`, see ``docs/performance.md``)
working one row at a time with ``O(K)`` work memory: the brute force is a double loop (cheapest
for K <= 8). For larger K only the vertices of the upper convex hull of the points ``(d, s)``
left of ``argmax s`` can attain the minimum; gift wrapping finds them one per step, so the cost
is O(K h) per row with h ~ 2 (GEM) to ~5 (mGEM) on random scores, and no sort (these
terms' kernels: :mod:`dpbandits.selectors.gem_terms`). :func:`gem_row` selects for one row
(public, so that a compiled bandit agent can call it); ``select_batch`` loops over the rows in
compiled code, drawing the noise from the caller's ``numpy.random.Generator`` in row-major
order (the numbers of the former numpy code, bit for bit).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbandits.core import checks
from dpbandits.core.jit import generator_address, generator_at, kernel
from dpbandits.core.sorting import stable_argsort
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    Selector,
)
from dpbandits.selectors.compiled import CompiledKernel, KernelBacked
from dpbandits.selectors.gem_terms import (
    METHODS,
    gem_front_row,
    gem_hull_row,
    gem_terms_row,
    terms_min,
)
from dpbandits.selectors.noisy_max import (
    NoiseName,
    first_max_step,
    noise_code,
    rnm_select,
    standard_noise,
    store_first_max,
)

__all__ = [
    "GEM",
    "MGEM",
    "CombinedGEM",
    "auto_method",
    "combined_gem_kernel",
    "combined_gem_rows",
    "gem_kernel",
    "gem_pairwise_kernel",
    "gem_row",
    "gem_rows",
    "gem_scores",
    "gem_scores_rows",
    "gem_select",
    "gem_shift_row",
    "gem_t",
    "spearman_nonnegative_row",
]

#: The former bound of the blocked numpy code's temporaries (``gem_scores(max_elements=)``).
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


# -- the compiled kernels (dpbandits.core.jit): one implementation for every entry point ----------
_EMPTY = np.empty(0)  # "no per-row shifts": the kernels then use their scalar t


@kernel
def gem_shift_row(q: Any, d: Any, t: float, s: Any) -> bool:
    """``s = q - t * d`` for one row; whether every entry is finite (GEM needs it)."""
    finite = True
    for a in range(q.shape[0]):
        s[a] = q[a] - d[a] * t
        finite = finite and math.isfinite(s[a])
    return finite


@kernel
def _row_shift(t: float, ts: Any, r: int) -> float:
    """Row ``r``'s shift: ``ts[r]`` if ``ts`` is given and not empty, else ``t``."""
    if ts is not None:
        if ts.shape[0] != 0:
            return ts[r]
    return t


@kernel
def _shifts_finite(q: Any, d: Any, t: float, ts: Any) -> bool:
    """Whether every ``q[r] - t_r d[r]`` is finite, ``t_r = ts[r]`` if ``ts`` is not empty,
    else ``t`` (GEM needs it; checked for the whole batch before anything is drawn)."""
    for r in range(q.shape[0]):
        tr = _row_shift(t, ts, r)
        for a in range(q.shape[1]):
            if not math.isfinite(q[r, a] - d[r, a] * tr):
                return False
    return True


# -- GEM's selection, written once as loops over the rows of 2-D arrays, called once per batch
# (a call per row passing arrays costs ~10-20 ns per array, more than the selection at small
# K); gem_row calls the same loops on one-row views, with ts=None and out=None (the last row's
# selection is returned): an absent array is None, not an empty view (a view made and passed
# costs more than a row's selection). The row's shift is ts[r] if ts is given and not empty,
# else t; q - t d must be finite.
@kernel
def _gem_pairwise_rows(q: Any, d: Any, t: float, ts: Any, lam: float, code: int, rng: Any,
                       out: Any) -> int:  # fmt: skip
    """GEM by brute force on every row: each candidate's ``q'`` (:func:`terms_min`, from 0:
    the ``a' = a`` term) then its noise, ``argmax(z + q' lam)`` by ``numpy.argmax``'s rule.
    No work memory: the cheapest for a few candidates."""
    k = q.shape[1]
    best_a = 0
    for r in range(q.shape[0]):
        tr = _row_shift(t, ts, r)
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            ua = terms_min(0.0, q, d, r, a, tr, True)
            v = standard_noise(code, rng) + ua * lam  # q' <= 0: 0 stays 0, -inf stays -inf
            best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        best_a = store_first_max(best_a, first_nan, out, r)
    return best_a


@kernel
def _gem_shortcut_rows(q: Any, d: Any, t: float, ts: Any, lam: float, code: int, method: int,
                       s: Any, u: Any, rng: Any, out: Any) -> int:  # fmt: skip
    """GEM on every row with the terms by ``METHODS[method]`` (the Pareto front or the hull:
    for many candidates) in the work rows ``s`` (the shifted scores) and ``u`` (``q'``)."""
    k = q.shape[1]
    best_a = 0
    for r in range(q.shape[0]):
        tr = _row_shift(t, ts, r)
        for a in range(k):
            s[a] = q[r, a] - d[r, a] * tr
            u[a] = 0.0  # the a' = a term is exactly 0
        if method == 1:
            gem_front_row(s, d[r], u)
        else:
            gem_hull_row(s, d[r], u, max(2, k // 4))
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            v = standard_noise(code, rng) + u[a] * lam  # q' <= 0: 0 stays 0, -inf stays -inf
            best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        best_a = store_first_max(best_a, first_nan, out, r)
    return best_a


@kernel
def gem_row(q: Any, d: Any, t: float, lam: float, code: int, method: int, s: Any, u: Any,
            rng: Any) -> int:  # fmt: skip
    """GEM for one row: RNM with gaps ``q' * lam`` (``max q' = 0`` exactly) on the normalised
    scores ``q'`` of eq. (6) with shift ``t``; standard noise of family ``NOISES[code]`` drawn
    for the candidates in order, ``numpy.argmax``'s rule. ``s`` and ``u`` are work rows of
    length ``K``. Returns -1, having drawn nothing, if ``q - t d`` is not finite."""
    q2, d2 = q[None, :], d[None, :]
    if not _shifts_finite(q2, d2, t, None):
        return -1
    if method == 0:
        return _gem_pairwise_rows(q2, d2, t, None, lam, code, rng, None)
    return _gem_shortcut_rows(q2, d2, t, None, lam, code, method, s, u, rng, None)


@kernel
def gem_scores_rows(q: Any, d: Any, t: float, ts: Any, method: int, out: Any) -> bool:
    """``out = q'`` of eq. (6) for a batch, the shift ``t`` or per-row ``ts`` (when not empty).
    Returns False, before computing anything, if some ``q - t d`` is not finite."""
    if not _shifts_finite(q, d, t, ts):
        return False
    s = np.empty(q.shape[1])
    for r in range(q.shape[0]):
        gem_shift_row(q[r], d[r], t if ts.shape[0] == 0 else ts[r], s)
        o = out[r]
        for a in range(o.shape[0]):
            o[a] = 0.0
        gem_terms_row(s, d[r], o, method)
    return True


@kernel
def gem_rows(q: Any, d: Any, t: float, ts: Any, lam: float, code: int, method: int, rng: Any,
             out: Any) -> bool:  # fmt: skip
    """``out[r] = gem_row(q[r], d[r], t or ts[r], ...)`` for a batch. Returns False, having
    drawn nothing, if some ``q - t d`` is not finite."""
    if not _shifts_finite(q, d, t, ts):
        return False
    if method == 0:
        _gem_pairwise_rows(q, d, t, ts, lam, code, rng, out)
    else:
        k = q.shape[1]
        work = np.empty(2 * k)  # one allocation for the two work rows
        _gem_shortcut_rows(q, d, t, ts, lam, code, method, work[:k], work[k:], rng, out)
    return True


#: Up to this many candidates the ranks are counted (O(K^2), no sort, no allocation).
COUNT_RANKS_MAX_K = 32


@kernel
def _double_ranks(x: Any, out: Any) -> None:
    """Twice the average ranks ``1..K`` of one row (ties get their average), as integers, by a
    sort: the tie group at sorted positions ``i+1 .. j`` gets ``i + 1 + j``."""
    k = x.shape[0]
    order = np.empty(k, dtype=np.int64)
    stable_argsort(x, order)
    i = 0
    while i < k:
        j = i + 1
        while j < k and x[order[j]] == x[order[i]]:
            j += 1
        for p in range(i, j):  # sorted positions i+1 .. j share the rank (i + 1 + j) / 2
            out[order[p]] = i + 1 + j
        i = j


@kernel
def _rank_signs(q: Any, d: Any, rq: Any, rd: Any, out: Any) -> bool:
    """Alg. 2's bit ``[spearman(q, d) >= 0]`` for every row of the 2-D ``q``, ``d`` into
    ``out[r]`` (unless None); returns the last row's (see :func:`spearman_nonnegative_row`).

    Up to ``COUNT_RANKS_MAX_K`` candidates the double ranks are counted,
    ``2 rank[a] = 2 #{x < x[a]} + #{x == x[a]} + 1`` (the tie group of ``a`` holds the sorted
    positions ``#{x < x[a]} + 1 .. #{x < x[a]} + #{x == x[a]}``), O(K^2) with no sort and no
    work memory; above, a sort into the int64 work rows ``rq``, ``rd`` (length ``K``)."""
    k = q.shape[1]
    mid = k + 1
    bit = True
    for r in range(q.shape[0]):
        num = 0
        if k <= COUNT_RANKS_MAX_K:
            for a in range(k):
                less_q = equal_q = less_d = equal_d = 0
                for b in range(k):
                    less_q += q[r, b] < q[r, a]
                    equal_q += q[r, b] == q[r, a]
                    less_d += d[r, b] < d[r, a]
                    equal_d += d[r, b] == d[r, a]
                num += (2 * less_q + equal_q + 1 - mid) * (2 * less_d + equal_d + 1 - mid)
        else:
            _double_ranks(q[r], rq)
            _double_ranks(d[r], rd)
            for a in range(k):
                num += (rq[a] - mid) * (rd[a] - mid)
        bit = num >= 0
        if out is not None:
            out[r] = bit
    return bit


@kernel
def spearman_nonnegative_row(q: Any, d: Any, rq: Any, rd: Any) -> bool:
    """Alg. 2's bit ``[spearman(q, d) >= 0]`` for one row, a NaN correlation (constant ``q``
    or ``d``) counting as 0.

    The sign of the rank correlation is that of ``sum_a (rq[a] - m)(rd[a] - m)``, ``m`` the mean
    rank ``(K + 1) / 2``; computed exactly in integers on twice the ranks (``rq``, ``rd`` are
    int64 work rows of length ``K``), and 0 when either row is constant.
    """
    return _rank_signs(q[None, :], d[None, :], rq, rd, None)


@kernel
def combined_gem_rows(q: Any, d: Any, t: float, p_keep: float, lam: float, code: int,
                      method: int, rng: Any, out: Any) -> bool:  # fmt: skip
    """Alg. 2 on a batch: one uniform per row first (the randomised response of each row's
    bit, kept iff ``U < p_keep``), then row by row :func:`gem_row` with shift ``-t`` for a
    reported 1 (mGEM) and ``+t`` for a 0 (GEM). Returns False, having drawn only the
    uniforms, if some ``q -+ t d`` is not finite."""
    r, k = q.shape
    ts = np.empty(r)
    ranks = np.empty(2 * k, dtype=np.int64)
    _rank_signs(q, d, ranks[:k], ranks[k:], ts)  # the bits (no draw) as 1.0 / 0.0
    for i in range(r):
        flip = rng.random() >= p_keep
        ts[i] = -t if (ts[i] != 0.0) != flip else t
    return gem_rows(q, d, t, ts, lam, code, method, rng, out)


# -- the compiled-selector kernels (dpbandits.selectors.compiled): kernel(params, q, d, rng, out)
@kernel
def gem_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`GEM`'s (and :class:`MGEM`'s) compiled kernel, ``params = (t, eps / 2, noise
    code, method)``: :func:`gem_rows`; False (nothing drawn) when some ``q - t d`` is not
    finite."""
    t, lam, code, method = params
    return gem_rows(q, d, t, _EMPTY, lam, code, method, rng, out)


@kernel
def gem_pairwise_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:func:`gem_kernel` for ``method = 0`` (the brute force, ``K <= PAIRWISE_MAX_K``):
    :func:`gem_rows`' steps without the code of the other methods, which a caller compiling
    this kernel then does not compile (about half of GEM's compile time)."""
    t, lam, code, _ = params
    if not _shifts_finite(q, d, t, _EMPTY):
        return False
    _gem_pairwise_rows(q, d, t, _EMPTY, lam, code, rng, out)
    return True


@kernel
def combined_gem_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`CombinedGEM`'s compiled kernel, ``params = (t_g, p_keep, eps_g / 2, noise code,
    method)``: :func:`combined_gem_rows`."""
    t, p_keep, lam, code, method = params
    return combined_gem_rows(q, d, t, p_keep, lam, code, method, rng, out)


# the entry of gem_select: the Generator by address (dpbandits.core.jit.generator_at), which
# saves the ~5 µs of passing a Generator object to a kernel
@kernel
def _gem_rows_at(q: Any, d: Any, t: float, ts: Any, lam: float, code: int, method: int,
                 address: int, out: Any) -> bool:  # fmt: skip
    return gem_rows(q, d, t, ts, lam, code, method, generator_at(address), out)


# -- the numpy-facing functions ----------------------------------------------------------------
def auto_method(k: int) -> int:
    """The kernels' ``method`` code of ``method="auto"``: the brute force (least overhead) for
    a few candidates, else the hull."""
    return 0 if k <= PAIRWISE_MAX_K else 2


def _resolve_method(method: str, k: int) -> int:
    if method not in ("auto", "front", "hull", "pairwise"):
        raise ValueError(f"method must be 'auto', 'front', 'hull' or 'pairwise', got {method!r}")
    return auto_method(k) if method == "auto" else METHODS.index(method)


def _shift_args(t: float | FloatArray, r: int) -> tuple[float, FloatArray]:
    """The kernels' ``(t, ts)``: a scalar shift, or per-row shifts ``ts`` of shape ``(R,)``."""
    if np.ndim(t) == 0:
        return float(t), _EMPTY
    tt = np.asarray(t, dtype=np.float64)
    return 0.0, np.ascontiguousarray(np.broadcast_to(tt, (r, 1))[:, 0])


def _overflow_error(t: float | FloatArray, d: FloatArray) -> ValueError:
    """The error for a non-finite ``q - t * d``."""
    t_max = float(np.max(np.abs(t)))
    td = t_max * float(d.max())
    if not td <= checks.MAX_NOISE_SCALE:
        return ValueError(
            f"epsilon is too small for GEM/mGEM with these sensitivities: the threshold "
            f"t = 2 ln(K/beta)/epsilon = {t_max:.3g} times max d = {float(d.max()):.3g} "
            f"overflows; use an epsilon at least {td / checks.MAX_NOISE_SCALE:.3g} times larger"
            if math.isfinite(t_max)
            else "epsilon is too small for GEM/mGEM: the threshold t = 2 ln(K/beta)/epsilon "
            "is infinite; use a larger epsilon"
        )
    return ValueError("q - t * d overflows for GEM: the scores are too large; rescale q and d")


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
    The kernels work one row at a time with ``O(K)`` work memory, whatever ``max_elements``
    (kept for compatibility: it bounded the temporaries of the former blocked numpy code).
    """
    r, k = q.shape
    code = _resolve_method(method, k)
    t0, ts = _shift_args(t, r)
    out = np.empty((r, k), dtype=np.float64)
    if not gem_scores_rows(q, d, t0, ts, code, out):
        raise _overflow_error(t, d)
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

    Row by row (:func:`gem_row`): ``q'`` of a row is computed and noised at once. ``max q' = 0``
    exactly, so the RNM gaps are ``q' * eps / 2``.
    """
    r, k = q.shape
    code = noise_code(noise)
    lam = epsilon / 2.0  # 1 / (2 D / eps) with D = 1
    if not (0.0 < lam < math.inf):  # eps / 2 underflowed: the careful path of rnm_select
        qp = gem_scores(q, d, t)
        return rnm_select(qp, np.full((r, 1), 2.0 / epsilon), noise, rng)
    t0, ts = _shift_args(t, r)
    out = np.empty(r, dtype=np.int64)
    if not _gem_rows_at(q, d, t0, ts, lam, code, auto_method(k), generator_address(rng), out):
        raise _overflow_error(t, d)
    return out


class GEM(KernelBacked, Selector):
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
        self._code = noise_code(noise)
        self.noise = noise

    def t(self, k: int) -> float:
        """The shift ``t`` for ``K = k`` candidates (negative for mGEM)."""
        return self._sign * gem_t(k, self.epsilon, self.beta)

    def scores(self, q: FloatArray, d: FloatArray) -> FloatArray:
        """The normalised scores ``q'`` (eq. (6)) for a validated ``(R, K)`` batch."""
        return gem_scores(q, d, self.t(q.shape[1]))

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        out = self.run_kernel(q, d, rng)
        if out is None:  # some q - t d is not finite (gem_kernel): nothing was drawn
            raise _overflow_error(self.t(q.shape[1]), d)
        return out

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        # eps / 2 > 0: check_threshold refuses a smaller eps
        k, method = n_candidates, auto_method(n_candidates)
        return CompiledKernel(gem_pairwise_kernel if method == 0 else gem_kernel,
                              (self.t(k), self.epsilon / 2.0, self._code, method))  # fmt: skip


class MGEM(GEM):
    """Modified GEM (§IV-D): GEM with ``t = -2 ln(K/beta)/eps`` (favours high sensitivity)."""

    name = "mgem"
    summary = "GEM with t = -2 ln(K/beta)/eps"
    _sign = -1.0


class CombinedGEM(KernelBacked, Selector):
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
        self._code = noise_code(noise)
        self.noise = noise

    @property
    def epsilon_c(self) -> float:
        """Budget of the randomised-response bit, ``c * eps``."""
        return self.c * self.epsilon

    @property
    def epsilon_g(self) -> float:
        """Budget of the GEM / mGEM selection, ``eps - eps_c``."""
        return self.epsilon - self.epsilon_c

    @property
    def p_keep(self) -> float:
        """Probability that the randomised response keeps the bit, ``e^eps_c / (e^eps_c + 1)``."""
        return 1.0 / (1.0 + math.exp(-self.epsilon_c))

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        # the bit of each row (exact sign of the rank correlation of q and d) in the kernel
        # (combined_gem_rows), then one GEM pass with a per-row shift: -t_g for the rows that
        # run mgem (reported 1), +t_g for gem
        out = self.run_kernel(q, d, rng)
        if out is None:  # some q -+ t_g d is not finite: only the bits' uniforms were drawn
            raise _overflow_error(gem_t(q.shape[1], self.epsilon_g, self.beta), d)
        return out

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        # eps_g checked when built (check_threshold): finite t_g, eps_g > 0
        k, eps_g = n_candidates, self.epsilon_g
        return CompiledKernel(
            combined_gem_kernel,
            (gem_t(k, eps_g, self.beta), self.p_keep, eps_g / 2.0, self._code, auto_method(k)),
        )

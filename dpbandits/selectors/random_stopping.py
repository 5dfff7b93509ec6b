"""RNM with random stopping: ``rs`` (Alg. 1, §IV-B) and ``rs_tnb`` (App. C).

Alg. 1 (Liu & Talwar 2019) repeats: draw ``a`` uniformly from the K candidates, record
``q[a] + Lap(3 d[a]/eps)``, stop with probability ``gamma``; then outputs the best recorded
candidate. Papernot & Steinke (2022) replace the Geometric(gamma) number of rounds by
``N ~ D_{eta,gamma}`` (truncated negative binomial, App. C Definition A.1) and the noise by
``Lap((2+eta) d[a]/eps)``; ``eta = 1`` is Alg. 1 exactly, ``eta = 0`` the paper's "improved RS"
(logarithmic distribution).

Exact vectorised sampling (§IV). Given ``N``, the candidates drawn are a
multinomial split ``m ~ Mult(N, 1/K, ..., 1/K)``; the recorded value of candidate ``a`` that
matters is the maximum of its ``m[a]`` i.i.d. noisy scores, ``q[a] + (2+eta) d[a]/eps * M`` with
``M`` the maximum of ``m[a]`` standard Laplace variables, drawn directly as ``F^{-1}(U^{1/m})``
(:func:`max_laplace`). A candidate with ``m[a] = 0`` is never output. No Python loop per draw.
The literal loop is kept in :func:`rs_loop_reference` for the tests only.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from dpbandits import checks
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    RNGLike,
    Selector,
    prepare_inputs,
    row_max,
)

__all__ = [
    "RS",
    "RandomStoppingTNB",
    "max_laplace",
    "rs_loop_reference",
    "sample_tnb",
    "tnb_log_pmf",
]

_LOG2 = math.log(2.0)
_umin, _umax = np.minimum.reduce, np.maximum.reduce
_NONE = np.zeros(0, dtype=np.intp)
#: Longest inverse-CDF table for D_{eta,gamma} (entries); 2**22 float64 = 32 MB.
MAX_TABLE = 2**22
#: The table stops where the tail mass is below this (far below float resolution 2**-53).
_TAIL = 2.0**-64


def _check_eta(eta: object) -> float:
    e = checks.number(eta, "eta")
    if not e > -1.0:
        raise ValueError(f"eta must be finite and > -1, got {e!r}")
    return e


def tnb_log_pmf(k: ArrayLike, eta: float, gamma: float) -> FloatArray:
    """log P[N = k] for ``N ~ D_{eta,gamma}`` (App. C, Definition A.1), ``k >= 1``.

    ``eta != 0``: ``(1-gamma)^k / (gamma^-eta - 1) * prod_{l<k} (l+eta)/(l+1)``, using
    ``prod = Gamma(k+eta) / (Gamma(eta) Gamma(k+1))`` (for ``-1 < eta < 0`` both ``Gamma(eta)``
    and ``gamma^-eta - 1`` are negative). ``eta = 0``: ``(1-gamma)^k / (k log(1/gamma))``.
    """
    kk = np.asarray(k, dtype=np.float64)
    if eta == 0.0:
        return kk * math.log1p(-gamma) - np.log(kk) - math.log(-math.log(gamma))
    log_norm = math.log(abs(math.expm1(-eta * math.log(gamma))))
    return kk * math.log1p(-gamma) + gammaln(kk + eta) - gammaln(kk + 1.0) - gammaln(eta) - log_norm


@functools.lru_cache(maxsize=64)
def _tnb_cdf_table(eta: float, gamma: float) -> FloatArray:
    """CDF of ``D_{eta,gamma}`` on ``1..n`` with the tail beyond ``n`` below ``2**-64``.

    Tail bound: the ratio ``P(k+1)/P(k) = (1-gamma)(k+eta)/(k+1)`` is at most ``1-gamma`` for
    ``eta <= 1`` and decreasing in ``k`` for ``eta > 1``, so with ``r`` that bound,
    ``P(N > k) <= P(k) r / (1 - r)``. The table is renormalised to end at exactly 1 (a change of
    at most ~1e-16 relative), so a uniform in ``[0, 1)`` always falls inside it.
    """
    chunk = 4096
    parts: list[FloatArray] = []
    start = 1
    while True:
        k = np.arange(start, start + chunk, dtype=np.float64)
        p = np.exp(tnb_log_pmf(k, eta, gamma))
        parts.append(p)
        last = k[-1]
        r = (1.0 - gamma) * max(1.0, (last + eta) / (last + 1.0))
        if r < 1.0 and p[-1] * r / (1.0 - r) < _TAIL:
            break
        start += chunk
        if start > MAX_TABLE:
            raise ValueError(
                f"gamma = {gamma!r} is too small for eta = {eta!r}: sampling D_eta,gamma would "
                f"need an inverse-CDF table of more than {MAX_TABLE} entries"
            )
    cdf = np.cumsum(np.concatenate(parts))
    cdf /= cdf[-1]
    cdf.setflags(write=False)
    return cdf


def sample_tnb(
    eta: float, gamma: float, size: int | tuple[int, ...], rng: RNGLike = None
) -> NDArray[np.int64]:
    """Draw ``N ~ D_{eta,gamma}`` (App. C, Definition A.1), values in ``{1, 2, ...}``.

    - ``eta = 0``: logarithmic distribution, ``Generator.logseries(1 - gamma)``;
    - ``eta = 1``: ``Geometric(gamma)`` on ``{1, 2, ...}`` (Alg. 1's stopping rule);
    - ``eta > 0`` with ``gamma**eta <= 1/2``: negative binomial ``NB(eta, gamma)`` (number of
      failures) conditioned on ``>= 1`` by rejection; each round keeps a draw with probability
      ``1 - gamma**eta >= 1/2``, so ``R`` draws need about ``log2 R`` vectorised rounds;
    - otherwise (``-1 < eta < 0``, or a rejection rate above 1/2): inverse CDF from the pmf,
      with a table cached per ``(eta, gamma)``.
    """
    eta = _check_eta(eta)
    gamma = checks.probability(gamma, "gamma")
    gen = checks.generator(rng)
    if eta == 0.0:
        return gen.logseries(1.0 - gamma, size=size).astype(np.int64)
    if eta == 1.0:
        return gen.geometric(gamma, size=size).astype(np.int64, copy=False)
    if eta > 0.0 and eta * math.log(gamma) <= -_LOG2:
        n = np.asarray(gen.negative_binomial(eta, gamma, size=size), dtype=np.int64)
        flat = n.reshape(-1)
        redo = np.flatnonzero(flat == 0)
        while redo.size:
            flat[redo] = gen.negative_binomial(eta, gamma, size=redo.size)
            redo = redo[flat[redo] == 0]
        return n
    cdf = _tnb_cdf_table(eta, gamma)
    u = gen.random(size)
    return (np.searchsorted(cdf, u, side="right") + 1).astype(np.int64)


def max_laplace(m: ArrayLike, rng: RNGLike = None) -> FloatArray:
    """Maximum of ``m`` i.i.d. standard Laplace variables (``m >= 1``, elementwise).

    Inverse CDF of ``V = U^(1/m)``: with ``L = log V = -E/m``, ``E ~ Exp(1)``,
    ``x = log 2 + L`` if ``V < 1/2`` and ``x = -log(2 (1 - V)) = -log 2 - log(-expm1(L))``
    otherwise. Working with ``L`` and ``expm1`` keeps full relative accuracy when ``V`` is
    within 1e-16 of 1 (large ``m``) and in the far tails; ``V`` is never formed.
    """
    mm = np.asarray(m, dtype=np.float64)
    if np.any(~(mm >= 1)):
        raise ValueError("m must be >= 1")
    return _max_laplace(mm, checks.generator(rng))


def _max_laplace(mm: FloatArray, gen: np.random.Generator) -> FloatArray:
    """:func:`max_laplace` for a float array ``mm >= 1`` (checked by the caller)."""
    e = gen.standard_exponential(mm.shape)
    # one reduction in the common case (no exact zero) instead of a comparison and a search
    zero = np.flatnonzero(e.reshape(-1) == 0.0) if _umin(e, None) == 0.0 else _NONE
    while zero.size:  # E = 0 (U = 1) has probability 0; redraw so that log(0) never happens
        e.reshape(-1)[zero] = gen.standard_exponential(zero.size)
        zero = zero[e.reshape(-1)[zero] == 0.0]
    log_v = np.negative(e, out=e)
    log_v /= mm  # L = -E/m < 0
    # Both branch formulas are finite for every L < 0: evaluate both (cheap, vectorised)
    # rather than scatter through boolean masks, and pick per element.
    high = np.expm1(log_v)  # V - 1 in (-1, 0)
    np.negative(high, out=high)
    np.log(high, out=high)
    np.subtract(-_LOG2, high, out=high)
    low = log_v < -_LOG2
    log_v += _LOG2
    return np.where(low, log_v, high)


@functools.lru_cache(maxsize=32)
def _row_offsets(r: int, k: int) -> NDArray[np.int64]:
    """``[0, K, 2K, ...]`` (read-only, cached: the per-step path asks for it every step)."""
    out = np.arange(r, dtype=np.int64) * k
    out.setflags(write=False)
    return out


def _split_uniformly(n: NDArray[np.int64], k: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Counts ``m ~ Mult(n[r], (1/K, ..., 1/K))`` per row, shape ``(R, K)``.

    When the draws are few compared with ``R * K`` (the usual case: ``E[N] ~ 1/gamma``), the
    draws themselves are generated and counted (one uniform integer per draw, O(sum n));
    otherwise ``Generator.multinomial`` (K binomials per row, O(R K)). Same law either way.
    """
    r = n.shape[0]
    total = int(np.add.reduce(n))
    if total <= min(4 * r * k, 2**24):
        cell = np.repeat(_row_offsets(r, k), n)
        cell += rng.integers(0, k, size=total, dtype=np.int64)
        return np.bincount(cell, minlength=r * k).reshape(r, k)
    return rng.multinomial(n, np.full(k, 1.0 / k))


def _rs_select(
    q: FloatArray,
    d: FloatArray,
    epsilon: float,
    gamma: float,
    eta: float,
    rng: np.random.Generator,
) -> IntArray:
    r, k = q.shape
    # (2 + eta) d / eps is increasing in d: it overflows somewhere iff it does at max d
    if not math.isfinite((2.0 + eta) * float(_umax(d, None)) / epsilon):
        raise ValueError(
            f"epsilon={epsilon!r} is too small for random stopping with max d = "
            f"{float(_umax(d, None)):.3g}: the noise scale (2 + eta) d / epsilon overflows; "
            "use epsilon >= "
            f"{(2.0 + eta) * float(_umax(d, None)) / checks.MAX_NOISE_SCALE:.3g}"
        )
    n_draws = sample_tnb(eta, gamma, r, rng)
    counts = _split_uniformly(n_draws, k, rng).reshape(-1)
    # Noise only the drawn (row, candidate) cells (~min(K, 1/gamma) per row); undrawn cells
    # stay -inf and are never output.
    cells = (counts > 0).nonzero()[0]  # nonzero() on a bool array is ~4x faster than on ints
    row = cells // k
    col = cells - row * k
    m = counts[cells].astype(np.float64)
    value = _max_laplace(m, rng)  # m >= 1 by construction
    value *= (2.0 + eta) * d[row, col] / epsilon
    with np.errstate(over="ignore"):  # exact shift keeps the noise's resolution
        value += q[row, col] - row_max(q)[row, 0]  # a gap beyond the float range: -inf, fine
    noisy = np.full(r * k, -np.inf)
    noisy[cells] = value
    return noisy.reshape(r, k).argmax(1)


class RandomStoppingTNB(Selector):
    """Random stopping whose number of draws is truncated negative binomial (TNB),
    ``N ~ D_{eta,gamma}`` (Papernot & Steinke 2022; App. C).

    Draw ``N ~ D_{eta,gamma}``; ``N`` times draw ``a`` uniformly and record
    ``q[a] + Lap((2+eta) d[a]/eps)``; output the best recorded candidate. Each recorded pair is
    ``eps/(2+eta)``-DP, so by Corollary 3 of Papernot & Steinke the output is eps-DP for any
    ``eta > -1`` and ``0 < gamma < 1``. ``eta = 0`` (default) is the paper's improved RS.
    """

    name = "rs_tnb"
    guarantee = "eps-DP"
    summary = "N ~ D_{eta,gamma} uniform draws, Lap((2+eta) d/eps) noise, best recorded"

    def __init__(self, epsilon: float = 1.0, gamma: float = 0.05, eta: float = 0.0) -> None:
        super().__init__(epsilon)
        self.gamma = checks.probability(gamma, "gamma")
        self.eta = _check_eta(eta)

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        return _rs_select(q, d, self.epsilon, self.gamma, self.eta, rng)


class RS(Selector):
    """RS_gamma, Alg. 1 (Liu & Talwar 2019, §IV-B): Geometric(gamma) rounds, ``Lap(3 d/eps)``.

    Identical in law to ``rs_tnb`` with ``eta = 1``. eps-DP for any ``0 < gamma < 1``.
    """

    name = "rs"
    guarantee = "eps-DP"
    summary = "Alg. 1: uniform draws with Lap(3d/eps) noise, stop w.p. gamma, best recorded"

    def __init__(self, epsilon: float = 1.0, gamma: float = 0.05) -> None:
        super().__init__(epsilon)
        self.gamma = checks.probability(gamma, "gamma")

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        return _rs_select(q, d, self.epsilon, self.gamma, 1.0, rng)


def rs_loop_reference(
    q: ArrayLike,
    d: ArrayLike | None,
    epsilon: float,
    gamma: float = 0.05,
    eta: float = 1.0,
    rng: RNGLike = None,
) -> int:
    """The literal loop of Alg. 1 for ONE score vector ``q`` of shape ``(K,)`` (tests only).

    ``eta = 1``: Alg. 1 verbatim (stop with probability ``gamma`` after each round).
    Otherwise the number of rounds is drawn from ``D_{eta,gamma}`` first (App. C) and the
    rounds are run one by one with ``Lap((2+eta) d[a]/eps)`` noise. Slow by design.
    """
    q2, d2, batch = prepare_inputs(q, d)
    if batch != ():
        raise ValueError(f"rs_loop_reference takes one score vector of shape (K,), got {batch}")
    gen = np.random.default_rng(rng)
    qv, dv = q2[0], d2[0]
    k = qv.size
    factor = 2.0 + float(eta)
    best_a, best_val = -1, -math.inf

    def one_round() -> None:
        nonlocal best_a, best_val
        a = int(gen.integers(k))
        val = float(qv[a] + gen.laplace(scale=factor * dv[a] / epsilon))
        if val > best_val:
            best_a, best_val = a, val

    if eta == 1.0:
        while True:
            one_round()
            if gen.random() < gamma:
                break
    else:
        for _ in range(int(sample_tnb(eta, gamma, 1, gen)[0])):
            one_round()
    return best_a

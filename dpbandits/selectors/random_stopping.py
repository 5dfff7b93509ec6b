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
(:func:`max_laplace`). A candidate with ``m[a] = 0`` is never output. The sampling is compiled
(:mod:`dpbandits.jit`): :func:`rs_select_rows` draws from the caller's generator exactly what
the vectorised numpy formulation drew, in the same order. The literal loop is kept in
:func:`rs_loop_reference` for the tests only.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from dpbandits import checks
from dpbandits.jit import generator_address, generator_at, integers_below, kernel
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    RNGLike,
    Selector,
    prepare_inputs,
)
from dpbandits.selectors.noisy_max import first_max_index, first_max_step

__all__ = [
    "GEOMETRIC",
    "LOGSERIES",
    "NEGATIVE_BINOMIAL",
    "RS",
    "TABLE",
    "RandomStoppingTNB",
    "max_laplace",
    "max_laplace_fill",
    "rs_loop_reference",
    "rs_select_rows",
    "sample_tnb",
    "split_uniformly",
    "tnb_fill",
    "tnb_log_pmf",
    "tnb_method",
]

_LOG2 = math.log(2.0)
_umax = np.maximum.reduce
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


# -- D_{eta,gamma} ------------------------------------------------------------------------
#: How :func:`tnb_fill` draws ``N ~ D_{eta,gamma}`` (chosen by :func:`tnb_method`).
LOGSERIES, GEOMETRIC, NEGATIVE_BINOMIAL, TABLE = 0, 1, 2, 3
_NO_TABLE = np.zeros(0)
_NO_TABLE.setflags(write=False)  # read-only like the tables: one compiled type for both


@functools.lru_cache(maxsize=64)
def tnb_method(eta: float, gamma: float) -> tuple[int, FloatArray]:
    """``(method, cdf)`` for :func:`tnb_fill` at checked ``eta``, ``gamma``: the sampler of
    :func:`sample_tnb`'s list, and the inverse-CDF table (empty unless ``method == TABLE``)."""
    if eta == 0.0:
        return LOGSERIES, _NO_TABLE
    if eta == 1.0:
        return GEOMETRIC, _NO_TABLE
    if eta > 0.0 and eta * math.log(gamma) <= -_LOG2:
        return NEGATIVE_BINOMIAL, _NO_TABLE
    return TABLE, _tnb_cdf_table(eta, gamma)


@kernel
def _count_at_most(cdf: Any, u: float) -> int:
    """The number of entries of the sorted ``cdf`` that are ``<= u``
    (``numpy.searchsorted(cdf, u, side="right")``)."""
    lo, hi = 0, cdf.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[mid] <= u:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def tnb_fill(method: int, eta: float, gamma: float, cdf: Any, rng: Any, out: Any) -> None:
    """Fill the 1-D ``out`` with i.i.d. ``N ~ D_{eta,gamma}`` (App. C, Definition A.1) by
    ``method`` (see :func:`sample_tnb`), drawing what numpy's vectorised call of the same
    sampler on ``out.size`` values draws, in the same order. The conditioned negative binomial
    draws every value once, then redraws the zeros in order, round after round: the rounds
    are global, so this is a batch kernel (a value's draws depend on the other values')."""
    n = out.shape[0]
    if method == NEGATIVE_BINOMIAL:
        zero = False
        for i in range(n):
            out[i] = rng.negative_binomial(eta, gamma)
            zero = zero or out[i] == 0
        while zero:  # each round keeps a draw with probability 1 - gamma**eta >= 1/2
            zero = False
            for i in range(n):
                if out[i] == 0:
                    out[i] = rng.negative_binomial(eta, gamma)
                    zero = zero or out[i] == 0
        return
    for i in range(n):
        if method == LOGSERIES:
            out[i] = rng.logseries(1.0 - gamma)
        elif method == GEOMETRIC:
            out[i] = rng.geometric(gamma)
        else:
            out[i] = _count_at_most(cdf, rng.random()) + 1


def sample_tnb(
    eta: float, gamma: float, size: int | tuple[int, ...], rng: RNGLike = None
) -> NDArray[np.int64]:
    """Draw ``N ~ D_{eta,gamma}`` (App. C, Definition A.1), values in ``{1, 2, ...}``.

    - ``eta = 0``: logarithmic distribution, ``Generator.logseries(1 - gamma)``;
    - ``eta = 1``: ``Geometric(gamma)`` on ``{1, 2, ...}`` (Alg. 1's stopping rule);
    - ``eta > 0`` with ``gamma**eta <= 1/2``: negative binomial ``NB(eta, gamma)`` (number of
      failures) conditioned on ``>= 1`` by rejection; each round keeps a draw with probability
      ``1 - gamma**eta >= 1/2``, so ``R`` draws need about ``log2 R`` rounds;
    - otherwise (``-1 < eta < 0``, or a rejection rate above 1/2): inverse CDF from the pmf,
      with a table cached per ``(eta, gamma)``.

    The draws are those of :func:`tnb_fill` (compiled), in C order of ``size``.
    """
    eta = _check_eta(eta)
    gamma = checks.probability(gamma, "gamma")
    gen = checks.generator(rng)
    method, cdf = tnb_method(eta, gamma)
    out = np.empty(size, dtype=np.int64)
    _tnb_fill(method, eta, gamma, cdf, generator_address(gen), out.reshape(-1))
    return out


@kernel
def _tnb_fill(method: int, eta: float, gamma: float, cdf: Any, pointers: Any, out: Any) -> None:
    # the entry from Python: the generator by address (see dpbandits.jit.generator_at)
    tnb_fill(method, eta, gamma, cdf, generator_at(pointers), out)


# -- the maximum of m Laplace variables ----------------------------------------------------
@kernel
def max_laplace_fill(m: Any, rng: Any, out: Any) -> None:
    """``out[i]`` = the maximum of ``m[i]`` i.i.d. standard Laplace variables (1-D ``m >= 1``,
    unchecked), see :func:`max_laplace`. One ``Exp(1)`` per entry, in order, then the exact
    zeros (probability 0) redrawn in order, round after round, so that ``log(0)`` never
    happens: a batch kernel like numpy's vectorised code it replaces (same draws)."""
    n = m.shape[0]
    zero = False
    for i in range(n):
        out[i] = rng.standard_exponential()
        zero = zero or out[i] == 0.0
    while zero:
        zero = False
        for i in range(n):
            if out[i] == 0.0:
                out[i] = rng.standard_exponential()
                zero = zero or out[i] == 0.0
    for i in range(n):
        log_v = -out[i] / m[i]  # L = -E/m < 0
        if log_v < -_LOG2:  # V < 1/2
            out[i] = log_v + _LOG2
        else:
            out[i] = -_LOG2 - math.log(-math.expm1(log_v))


def max_laplace(m: ArrayLike, rng: RNGLike = None) -> FloatArray:
    """Maximum of ``m`` i.i.d. standard Laplace variables (``m >= 1``, elementwise).

    Inverse CDF of ``V = U^(1/m)``: with ``L = log V = -E/m``, ``E ~ Exp(1)``,
    ``x = log 2 + L`` if ``V < 1/2`` and ``x = -log(2 (1 - V)) = -log 2 - log(-expm1(L))``
    otherwise. Working with ``L`` and ``expm1`` keeps full relative accuracy when ``V`` is
    within 1e-16 of 1 (large ``m``) and in the far tails; ``V`` is never formed. Compiled:
    :func:`max_laplace_fill`.
    """
    mm = np.asarray(m, dtype=np.float64)
    if np.any(~(mm >= 1)):
        raise ValueError("m must be >= 1")
    gen = checks.generator(rng)
    out = np.empty(mm.shape)
    _max_laplace_fill(np.ascontiguousarray(mm).reshape(-1), generator_address(gen), out.reshape(-1))
    return out


@kernel
def _max_laplace_fill(m: Any, pointers: Any, out: Any) -> None:
    max_laplace_fill(m, generator_at(pointers), out)


# -- the selection -------------------------------------------------------------------------
@kernel
def split_uniformly(n: Any, k: int, rng: Any, counts: Any) -> None:
    """Counts ``m ~ Mult(n[r], (1/K, ..., 1/K))`` per row into the flat ``counts`` (row ``r``
    at ``counts[r K : (r + 1) K]``; the caller zeroes it).

    When the draws are few compared with ``R * K`` (the usual case: ``E[N] ~ 1/gamma``), the
    draws themselves are generated and counted (one uniform integer per draw, O(sum n));
    otherwise the multinomial as ``Generator.multinomial`` draws it (a binomial per candidate
    but the last, until the draws are used up; O(R K)). Same law either way. The choice
    depends on every row's ``n``: a batch kernel.
    """
    r = n.shape[0]
    total = 0
    for i in range(r):
        total += n[i]
    if total <= min(4 * r * k, 2**24):
        for i in range(r):
            for _ in range(n[i]):
                counts[i * k + integers_below(k, rng)] += 1
        return
    p = 1.0 / k
    for i in range(r):
        left = n[i]
        remaining_p = 1.0
        for j in range(k - 1):
            x = rng.binomial(left, p / remaining_p)
            counts[i * k + j] = x
            left -= x
            if left <= 0:
                break
            remaining_p -= p
        if left > 0:
            counts[i * k + k - 1] = left


@kernel
def rs_select_rows(q: Any, d: Any, epsilon: float, eta: float, method: int, gamma: float,
                   cdf: Any, rng: Any, out: Any) -> bool:  # fmt: skip
    """Random stopping on the ``R`` rows of ``q``, ``d`` (shape ``(R, K)``) into ``out``; False
    (and nothing drawn) if the noise scale ``(2 + eta) max d / eps`` overflows.

    Draws, as the vectorised sampling of the module docstring: every row's ``N`` (:func:`tnb_fill`),
    then the split of every row's draws over the candidates (:func:`split_uniformly`), then
    the maximum Laplace noise of every drawn (row, candidate) cell in row-major order
    (:func:`max_laplace_fill`). The draws of a row depend on the other rows' (the rounds of
    redraws, the choice of the split), so this kernel selects for a batch, not one row.
    Each row outputs the first best recorded value (``numpy.argmax``'s rule); a cell never
    drawn is never output (it records ``-inf``).
    """
    r, k = q.shape
    d_max = 0.0  # d > 0
    for i in range(r):
        for a in range(k):
            d_max = max(d_max, d[i, a])
    if not math.isfinite((2.0 + eta) * d_max / epsilon):
        return False
    n = np.empty(r, dtype=np.int64)
    tnb_fill(method, eta, gamma, cdf, rng, n)
    counts = np.zeros(r * k, dtype=np.int64)
    split_uniformly(n, k, rng, counts)
    drawn = 0
    for c in range(r * k):
        drawn += counts[c] > 0
    m = np.empty(drawn)
    noise = np.empty(drawn)
    j = 0
    for c in range(r * k):
        if counts[c] > 0:
            m[j] = counts[c]
            j += 1
    max_laplace_fill(m, rng, noise)
    j = 0
    for i in range(r):
        q_max = q[i, 0]
        for a in range(1, k):
            q_max = max(q_max, q[i, a])
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            if counts[i * k + a] > 0:  # a cell never drawn records -inf: never the first max
                # scale, then the exact shift q - max q (a gap beyond the float range: -inf)
                v = noise[j] * ((2.0 + eta) * d[i, a] / epsilon) + (q[i, a] - q_max)
                j += 1
                best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        out[i] = first_max_index(best_a, first_nan)
    return True


def _rs_select(
    q: FloatArray,
    d: FloatArray,
    epsilon: float,
    gamma: float,
    eta: float,
    rng: np.random.Generator,
) -> IntArray:
    try:
        method, cdf = tnb_method(eta, gamma)
    except ValueError:  # gamma too small for a table: the scale check comes first
        _check_scale(d, epsilon, eta)
        raise
    out = np.empty(q.shape[0], dtype=np.int64)
    if not _rs_select_rows(q, d, epsilon, eta, method, gamma, cdf, generator_address(rng), out):
        _check_scale(d, epsilon, eta)
    return out


@kernel
def _rs_select_rows(q: Any, d: Any, epsilon: float, eta: float, method: int, gamma: float,
                    cdf: Any, pointers: Any, out: Any) -> bool:  # fmt: skip
    # the entry from Python: the generator by address (see dpbandits.jit.generator_at)
    return rs_select_rows(q, d, epsilon, eta, method, gamma, cdf, generator_at(pointers), out)


def _check_scale(d: FloatArray, epsilon: float, eta: float) -> None:
    # (2 + eta) d / eps is increasing in d: it overflows somewhere iff it does at max d
    d_max = float(_umax(d, None))
    if not math.isfinite((2.0 + eta) * d_max / epsilon):
        raise ValueError(
            f"epsilon={epsilon!r} is too small for random stopping with max d = "
            f"{d_max:.3g}: the noise scale (2 + eta) d / epsilon overflows; "
            "use epsilon >= "
            f"{(2.0 + eta) * d_max / checks.MAX_NOISE_SCALE:.3g}"
        )


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

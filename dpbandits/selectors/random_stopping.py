"""RNM with random stopping: ``rs`` (Alg. 1, §IV-B) and ``rs_tnb`` (App. C).

Alg. 1 (Liu & Talwar 2019) repeats: draw ``a`` uniformly from the K candidates, record
``q[a] + Lap(3 d[a]/eps)``, stop with probability ``gamma``; then outputs the best recorded
candidate. Papernot & Steinke (2022) replace the Geometric(gamma) number of rounds by
``N ~ D_{eta,gamma}`` (truncated negative binomial, App. C Definition A.1) and the noise by
``Lap((2+eta) d[a]/eps)``; ``eta = 1`` is Alg. 1 exactly, ``eta = 0`` the paper's "improved RS"
(logarithmic distribution).

Exact sampling without a loop over rounds (§IV). Given ``N``, the candidates drawn are a
multinomial split ``m ~ Mult(N, 1/K, ..., 1/K)``; the recorded value of candidate ``a`` that
matters is the maximum of its ``m[a]`` i.i.d. noisy scores, ``q[a] + (2+eta) d[a]/eps * M`` with
``M`` the maximum of ``m[a]`` standard Laplace variables, drawn directly as ``F^{-1}(U^{1/m})``
(:mod:`dpbandits.selectors.max_laplace`). A candidate with ``m[a] = 0`` is never output. The
sampling is compiled (:mod:`dpbandits.core.jit`) and works row by row (:func:`rs_select_rows`):
``N``, its split, the noise of each drawn candidate. The literal loop is kept in
:func:`rs_loop_reference` for the tests only.

The random stream changed once, on 2026-11-23 (docs/performance.md, "Random stopping row by
row, and a faster node noise"): the rounds were drawn for all rows first, then the splits,
then the noise, with numpy's geometric and binomial samplers. Same law, about 3x faster;
tested against the exact output probabilities, the literal loop and the regret distribution
of the earlier stream.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NoReturn

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks
from dpbandits.core.jit import (
    generator_address,
    generator_at,
    inline_kernel,
    integers_below,
    kernel,
    kernel_template,
    popcount,
    specialise,
)
from dpbandits.core.numba_compat import next_uint64
from dpbandits.core.samplers import standard_exponential
from dpbandits.selectors.base import (
    FloatArray,
    IntArray,
    RNGLike,
    Selector,
    prepare_inputs,
)
from dpbandits.selectors.compiled import CompiledKernel, KernelBacked
from dpbandits.selectors.max_laplace import (
    max_laplace_bounds,
    max_laplace_value,
    nonzero_exponential,
)
from dpbandits.selectors.noisy_max import first_max_index, first_max_step, row_maxima

__all__ = [
    "DRAWS_PER_CANDIDATE",
    "GEOMETRIC",
    "LOGSERIES",
    "MIN_GAMMA_GEOMETRIC",
    "NEGATIVE_BINOMIAL",
    "RS",
    "RandomStoppingTNB",
    "TABLE",
    "geometric_rounds",
    "rs_kernel",
    "rs_loop_reference",
    "rs_select_rows",
    "sample_tnb",
    "split_two",
    "split_uniformly",
    "tnb_draw",
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
    from scipy.special import gammaln  # here: scipy.special takes ~0.1 s to import

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
#: How :func:`tnb_draw` draws ``N ~ D_{eta,gamma}`` (chosen by :func:`tnb_method`).
LOGSERIES, GEOMETRIC, NEGATIVE_BINOMIAL, TABLE = 0, 1, 2, 3
_NO_TABLE = np.zeros(0)
_NO_TABLE.setflags(write=False)  # read-only like the tables: one compiled type for both
#: Smallest ``gamma`` of the geometric number of rounds (``eta = 1``): the sampler's
#: ``E / -log(1 - gamma)`` with ``E < 45`` (the largest exponential the ziggurat returns) stays
#: below ``2**62``. Smaller values would mean over 10**15 expected rounds.
MIN_GAMMA_GEOMETRIC = 2.0**-50


@functools.lru_cache(maxsize=64)
def tnb_method(eta: float, gamma: float) -> tuple[int, FloatArray]:
    """``(method, cdf)`` for :func:`tnb_draw` at checked ``eta``, ``gamma``: the sampler of
    :func:`sample_tnb`'s list, and the inverse-CDF table (empty unless ``method == TABLE``).
    Raises ``ValueError`` when ``gamma`` is too small to sample (the message says why)."""
    if eta == 0.0:
        return LOGSERIES, _NO_TABLE
    if eta == 1.0:
        if gamma < MIN_GAMMA_GEOMETRIC:
            raise ValueError(
                f"gamma = {gamma!r} is too small for random stopping: the number of rounds "
                f"(mean 1/gamma) would overflow; use gamma >= {MIN_GAMMA_GEOMETRIC!r}"
            )
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


@inline_kernel
def geometric_rounds(rate: float, bits: Any) -> int:
    """The number of rounds of Alg. 1, ``N ~ Geometric(gamma)`` on ``{1, 2, ...}``, as
    ``1 + floor(E / rate)`` with ``E ~ Exp(1)`` and ``rate = -log(1 - gamma)``:
    ``P(N > k) = P(E >= k rate) = (1 - gamma)^k``. One ziggurat exponential (a 64-bit word of
    the bit generator ``bits``) replaces a uniform and two logarithms."""
    return 1 + np.int64(standard_exponential(bits) / rate)


@inline_kernel
def tnb_draw(method: int, eta: float, gamma: float, rate: float, cdf: Any, rng: Any) -> int:
    """One ``N ~ D_{eta,gamma}`` (App. C, Definition A.1) by ``method`` (see :func:`sample_tnb`);
    ``rate = -log(1 - gamma)``.

    ``GEOMETRIC`` is :func:`geometric_rounds`. The conditioned negative binomial redraws until
    the value is at least 1 (each try succeeds with probability ``1 - gamma**eta >= 1/2``)."""
    if method == GEOMETRIC:
        return geometric_rounds(rate, rng.bit_generator)
    if method == LOGSERIES:
        return np.int64(rng.logseries(1.0 - gamma))
    if method == NEGATIVE_BINOMIAL:
        while True:
            n = np.int64(rng.negative_binomial(eta, gamma))
            if n > 0:
                return n
    return _count_at_most(cdf, rng.random()) + 1


@kernel
def tnb_fill(method: int, eta: float, gamma: float, cdf: Any, rng: Any, out: Any) -> None:
    """Fill the 1-D ``out`` with i.i.d. ``N ~ D_{eta,gamma}`` (:func:`tnb_draw`), in order."""
    rate = -math.log1p(-gamma)
    for i in range(out.shape[0]):
        out[i] = tnb_draw(method, eta, gamma, rate, cdf, rng)


def sample_tnb(
    eta: float, gamma: float, size: int | tuple[int, ...], rng: RNGLike = None
) -> NDArray[np.int64]:
    """Draw ``N ~ D_{eta,gamma}`` (App. C, Definition A.1), values in ``{1, 2, ...}``.

    - ``eta = 0``: logarithmic distribution, ``Generator.logseries(1 - gamma)``;
    - ``eta = 1``: ``Geometric(gamma)`` on ``{1, 2, ...}`` (Alg. 1's stopping rule), as
      ``1 + floor(E / -log(1 - gamma))`` with ``E ~ Exp(1)``; ``gamma >= 2**-50``;
    - ``eta > 0`` with ``gamma**eta <= 1/2``: negative binomial ``NB(eta, gamma)`` (number of
      failures) conditioned on ``>= 1`` by rejection (each try kept with probability
      ``1 - gamma**eta >= 1/2``);
    - otherwise (``-1 < eta < 0``, or a rejection rate above 1/2): inverse CDF from the pmf,
      with a table cached per ``(eta, gamma)``.

    The draws are those of :func:`tnb_fill` (compiled), one value after the other in C order
    of ``size``: the same as the number of rounds that :class:`RS` and
    :class:`RandomStoppingTNB` draw for each row.
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
    # the entry from Python: the generator by address (see dpbandits.core.jit.generator_at)
    tnb_fill(method, eta, gamma, cdf, generator_at(pointers), out)


# -- the selection -------------------------------------------------------------------------
#: :func:`split_uniformly` generates the draws one by one up to this many per candidate (two
#: candidates: up to 64 times as many, one random bit per draw), and above draws the
#: multinomial as a chain of binomials.
DRAWS_PER_CANDIDATE = 16
_64 = np.uint64(64)


#: :func:`split_two` handles up to this many rounds (one random bit each); beyond, the split
#: of two candidates is a binomial (:func:`split_uniformly`).
TWO_WAY_MAX_ROUNDS = 64 * DRAWS_PER_CANDIDATE * 2


@inline_kernel
def split_two(n: int, bits: Any) -> int:
    """The rounds of candidate 1 among ``n <= TWO_WAY_MAX_ROUNDS`` rounds split uniformly
    between two candidates: one random bit per round, 64 rounds per 64-bit word of the bit
    generator ``bits``, counted as the set bits (the last word's top ``n mod 64`` bits, or all
    64). No array: inlined into a row loop, an array argument would cost reference counting."""
    ones = 0
    left = n
    while left > 64:
        ones += popcount(next_uint64(bits))
        left -= 64
    return ones + popcount(next_uint64(bits) >> (_64 - np.uint64(left)))  # the top `left` bits


@inline_kernel
def split_uniformly(n: int, k: int, rng: Any, counts: Any) -> None:
    """Counts ``m ~ Mult(n, (1/K, ..., 1/K))`` into ``counts`` (shape ``(K,)``, zeroed by the
    caller): which candidate each of the ``n`` rounds of Alg. 1 drew.

    Few rounds per candidate (the usual case: ``E[N] ~ 1/gamma``): the rounds are drawn, one
    uniform candidate each (``Generator.integers(0, K)``); for two candidates, one random bit
    each (:func:`split_two`). Many rounds: the multinomial as ``Generator.multinomial`` draws
    it (a binomial per candidate but the last, until the rounds are used up; O(K)). Same law
    either way.
    """
    if k == 2 and n <= TWO_WAY_MAX_ROUNDS:
        ones = split_two(n, rng.bit_generator)
        counts[0] = n - ones
        counts[1] = ones
        return
    if n <= DRAWS_PER_CANDIDATE * k:
        for _ in range(n):
            counts[integers_below(k, rng)] += 1
        return
    p = 1.0 / k
    left = n
    remaining_p = 1.0
    for j in range(k - 1):
        x = rng.binomial(left, p / remaining_p)
        counts[j] = x
        left -= x
        if left <= 0:
            break
        remaining_p -= p
    if left > 0:
        counts[k - 1] = left


@inline_kernel
def _geometric_only(method: int, eta: float, gamma: float, rate: float, cdf: Any,
                    rng: Any) -> int:  # fmt: skip
    """:func:`tnb_draw` for ``method == GEOMETRIC`` only (Alg. 1's rounds)."""
    return geometric_rounds(rate, rng.bit_generator)


def _other_rounds(method: int, eta: float, gamma: float, rate: float, cdf: Any,
                  rng: Any) -> int:  # fmt: skip
    """The rounds of a method other than ``GEOMETRIC`` in :func:`_rs_rows`: :func:`tnb_draw`
    or :func:`_geometric_only`, bound per compiled version."""
    raise NotImplementedError("bound by dpbandits.core.jit.specialise")


@kernel_template
def _rs_rows(q: Any, d: Any, epsilon: float, eta: float, method: int, gamma: float,
             cdf: Any, rng: Any, out: Any) -> bool:  # fmt: skip
    """Random stopping on the ``R`` rows of ``q``, ``d`` (shape ``(R, K)``) into ``out``; False
    (and nothing drawn) if the noise scale ``(2 + eta) max d / eps`` overflows. Compiled as
    :func:`rs_select_rows` (every ``method``) and :func:`rs_geometric_rows` (``GEOMETRIC``
    only: Alg. 1, which then compiles none of the other methods' samplers).

    Each row in turn, as the module docstring samples it: its number of rounds ``N``
    (:func:`tnb_draw`), their split over the candidates (:func:`split_uniformly`), then one
    exponential per drawn candidate in order (:func:`nonzero_exponential`), which fixes the
    maximum of its Laplace noises (:func:`max_laplace_value`). A row's draws depend on nothing
    but its own values. Each row outputs the first best recorded value (``numpy.argmax``'s
    rule); a candidate never drawn is never output.

    The exact values need a logarithm per candidate; most rows are decided without them. Each
    drawn candidate's value is first bounded (:func:`max_laplace_bounds`, an interval ~0.06
    noise scales wide) and widened by ``margin``, far more than the rounding of either
    computation (below); when exactly one interval reaches the highest lower bound, that
    candidate has the highest exact value, and ties are impossible. Otherwise (about 3% of the
    rows of the shift experiment), or when a bound is not finite, the exact values decide.
    Same draws, same outputs: only fewer logarithms (docs/performance.md, round 7).
    """
    r, k = q.shape
    d_max = 0.0  # d > 0
    q_abs = 0.0
    for i in range(r):
        for a in range(k):
            d_max = max(d_max, d[i, a])
            q_abs = max(q_abs, abs(q[i, a]))
    if not math.isfinite((2.0 + eta) * d_max / epsilon):
        return False
    factor = (2.0 + eta) / epsilon
    # Rounding: the exact value x s + (q - q_max), |x| < 70.2 where the bounds are finite, and the
    # bounds are each within ~20 eps (|x| s + 2 |q|) of their real-number values; the margin
    # is 10^4 times that and still ~1e-10 of the intervals' width.
    margin = 1e-12 * (72.0 * factor * d_max + 2.0 * q_abs + 1.0)
    rate = -math.log1p(-gamma)
    bits = rng.bit_generator
    counts = np.empty(k, dtype=np.int64)
    exps = np.empty(k)
    high = np.empty(k)
    q_maxima = np.empty(r)
    row_maxima(q, q_maxima)
    for i in range(r):
        # the same draw as tnb_draw; testing the loop-invariant method here, in the loop itself,
        # lets the compiler specialise the loop for Alg. 1 (12 ns a row faster, measured)
        if method == GEOMETRIC:
            n = geometric_rounds(rate, bits)
        else:
            n = _other_rounds(method, eta, gamma, rate, cdf, rng)
        # Arrays handed to inlined functions here cost reference counting (row_maxima): the
        # split of two candidates is split_uniformly's own, called without the counts
        if k == 2 and n <= TWO_WAY_MAX_ROUNDS:
            ones = split_two(n, bits)
            counts[0] = n - ones
            counts[1] = ones
        else:
            for a in range(k):
                counts[a] = 0
            split_uniformly(n, k, rng, counts)
        q_max = q_maxima[i]
        best_lo = -math.inf
        winner = 0  # the first drawn candidate of highest lower bound
        finite = True
        # the draws first, then the bounds: the bounds of different candidates do not depend
        # on one another, and the processor overlaps them once the draws are out of the way
        for a in range(k):
            if counts[a] > 0:
                exps[a] = nonzero_exponential(bits)
        for a in range(k):
            if counts[a] > 0:
                x_lo, x_hi = max_laplace_bounds(exps[a], np.float64(counts[a]))
                c = q[i, a] - q_max  # a gap beyond the float range: -inf (exact path)
                scale = d[i, a] * factor
                lo = x_lo * scale + c - margin
                hi = x_hi * scale + c + margin
                finite = finite & math.isfinite(lo) & math.isfinite(hi)  # (no branches)
                high[a] = hi
                winner = a if lo > best_lo else winner  # selects: the winner is random
                best_lo = max(best_lo, lo)
            else:
                high[a] = -math.inf  # never drawn: reaches nothing
        # the winner's interval reaches best_lo (lo <= hi); if no other one does, it is the
        # candidate of highest exact value
        reach = 0
        for a in range(k):
            reach += high[a] >= best_lo
        if finite and reach == 1:
            out[i] = winner
            continue
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            if counts[a] > 0:  # a candidate never drawn records -inf: never the first max
                noise = max_laplace_value(exps[a], np.float64(counts[a]))
                # scale, then the exact shift q - max q (a gap beyond the float range: -inf)
                v = noise * ((2.0 + eta) * d[i, a] / epsilon) + (q[i, a] - q_max)
                best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        out[i] = first_max_index(best_a, first_nan)
    return True


#: :func:`_rs_rows` for every method of :func:`tnb_method`.
rs_select_rows = specialise(_rs_rows, _other_rounds=tnb_draw)
#: :func:`_rs_rows` for ``GEOMETRIC`` only (any other method draws Alg. 1's rounds: never
#: called with one).
rs_geometric_rows = specialise(_rs_rows, _other_rounds=_geometric_only)


@kernel
def rs_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """The compiled kernel of :class:`RandomStoppingTNB` (:mod:`dpbandits.selectors.compiled`),
    ``params = (epsilon, eta, gamma, method, cdf)`` (:func:`tnb_method`): :func:`rs_select_rows`;
    False (nothing drawn) when the noise scale overflows."""
    epsilon, eta, gamma, method, cdf = params
    return rs_select_rows(q, d, epsilon, eta, method, gamma, cdf, rng, out)


@kernel
def rs_geometric_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:func:`rs_kernel` for ``method == GEOMETRIC`` (Alg. 1: :class:`RS`, and
    :class:`RandomStoppingTNB` with ``eta = 1``): :func:`rs_geometric_rows`, the same draws,
    without compiling the other methods' samplers (docs/performance.md, "Cold start")."""
    epsilon, eta, gamma, method, cdf = params
    return rs_geometric_rows(q, d, epsilon, eta, method, gamma, cdf, rng, out)


def _rs_kernel(epsilon: float, gamma: float, eta: float) -> CompiledKernel | None:
    try:
        method, cdf = tnb_method(eta, gamma)
    except ValueError:  # gamma too small to sample: select_batch says so
        return None
    kernel_ = rs_geometric_kernel if method == GEOMETRIC else rs_kernel
    return CompiledKernel(kernel_, (float(epsilon), float(eta), float(gamma), method, cdf))


def _refused(d: FloatArray, epsilon: float, gamma: float, eta: float) -> NoReturn:
    """The error of a selection that :func:`_rs_kernel` gives no kernel for (a gamma too
    small to sample) or whose kernel refused its input (a noise scale that overflows): the
    scale first, as the kernel checks it before drawing."""
    _check_scale(d, epsilon, eta)
    tnb_method(eta, gamma)  # raises for a gamma too small to sample
    raise AssertionError("rs_kernel refused a batch with a finite noise scale")


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


class RandomStoppingTNB(KernelBacked, Selector):
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
        tnb_method(self.eta, self.gamma)  # a gamma too small to sample is refused here

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        out = self.run_kernel(q, d, rng)
        if out is None:  # a gamma too small to sample, or a noise scale that overflows
            _refused(d, self.epsilon, self.gamma, self.eta)
        return out

    def kernel_for(self, n_candidates: int) -> CompiledKernel | None:
        return _rs_kernel(self.epsilon, self.gamma, self.eta)


class RS(KernelBacked, Selector):
    """RS_gamma, Alg. 1 (Liu & Talwar 2019, §IV-B): Geometric(gamma) rounds, ``Lap(3 d/eps)``.

    Identical in law to ``rs_tnb`` with ``eta = 1``. eps-DP for any ``0 < gamma < 1``.
    """

    name = "rs"
    guarantee = "eps-DP"
    summary = "Alg. 1: uniform draws with Lap(3d/eps) noise, stop w.p. gamma, best recorded"

    def __init__(self, epsilon: float = 1.0, gamma: float = 0.05) -> None:
        super().__init__(epsilon)
        self.gamma = checks.probability(gamma, "gamma")
        tnb_method(1.0, self.gamma)  # a gamma too small to sample is refused here

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        out = self.run_kernel(q, d, rng)
        if out is None:  # a gamma too small to sample, or a noise scale that overflows
            _refused(d, self.epsilon, self.gamma, 1.0)
        return out

    def kernel_for(self, n_candidates: int) -> CompiledKernel | None:
        return _rs_kernel(self.epsilon, self.gamma, 1.0)


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

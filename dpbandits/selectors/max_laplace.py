"""The maximum of ``m`` i.i.d. standard Laplace variables, drawn directly (random stopping).

Random stopping (Alg. 1, App. C; :mod:`dpbandits.selectors.random_stopping`) records, for each
candidate drawn ``m`` times, only the best of its ``m`` noisy scores: ``q + scale * M`` with
``M`` the maximum of ``m`` standard Laplace variables. ``M`` is drawn from one exponential by
the inverse CDF of ``V = U^(1/m)`` (:func:`max_laplace_value`), compiled
(:mod:`dpbandits.core.jit`); :func:`max_laplace_bounds` brackets the same value without its
logarithm, for the callers that can often decide without it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.core import checks
from dpbandits.core.jit import float_bits, generator_address, generator_at, inline_kernel, kernel
from dpbandits.core.samplers import standard_exponential
from dpbandits.selectors.base import FloatArray, RNGLike

__all__ = [
    "BOUNDS_MIN_T",
    "LOG_SINHC",
    "max_laplace",
    "max_laplace_bounds",
    "max_laplace_draw",
    "max_laplace_fill",
    "max_laplace_value",
    "nonzero_exponential",
]

_LOG2 = math.log(2.0)

#: ``log(sinh(u) / u) = sum_n LOG_SINHC[n - 1] u^(2n)`` with
#: ``LOG_SINHC[n - 1] = 2^(2n) B_2n / (2n (2n)!)`` (``B_2n`` the Bernoulli numbers); for
#: ``u <= log(2)/2`` the terms beyond the ninth are below ``1e-20``.
LOG_SINHC = (
    1.0 / 6.0,
    -1.0 / 180.0,
    1.0 / 2835.0,
    -1.0 / 37800.0,
    1.0 / 467775.0,
    -691.0 / 3831077250.0,
    2.0 / 127702575.0,
    -3617.0 / 2605132530000.0,
    43867.0 / 350813659321125.0,
)
_S1, _S2, _S3, _S4, _S5, _S6, _S7, _S8, _S9 = LOG_SINHC


@inline_kernel
def nonzero_exponential(bits: Any) -> float:
    """``E ~ Exp(1)`` from the ziggurat (:func:`dpbandits.core.samplers.standard_exponential`) of
    the bit generator ``bits``, an exact zero (probability about ``2**-53``) redrawn so that
    ``log(E / m)`` is always finite."""
    e = standard_exponential(bits)
    while e == 0.0:
        e = standard_exponential(bits)
    return e


@inline_kernel
def max_laplace_value(e: float, m: float) -> float:
    """The maximum of ``m >= 1`` i.i.d. standard Laplace variables given ``E = e > 0``
    (:func:`max_laplace`): with ``t = E / m`` (``V = exp(-t)``), ``x = log 2 - t`` if
    ``t > log 2``, else ``x = -log(2 (1 - exp(-t))) = t/2 - log 2 - log t - log(sinh(t/2) /
    (t/2))``, using ``1 - exp(-t) = exp(-t/2) t sinh(t/2)/(t/2)``; the last term is its even
    series (:data:`LOG_SINHC`), exact to ``1e-20`` there. One logarithm and a polynomial
    instead of ``expm1`` and a logarithm (half the time), with the same accuracy for tiny
    ``t``."""
    t = e / m
    if t > _LOG2:  # V < 1/2
        return _LOG2 - t
    w = 0.25 * t * t
    s = w * (_S1 + w * (_S2 + w * (_S3 + w * (_S4 + w * (_S5 + w * (_S6 + w * (_S7 + w * (_S8 + w * _S9))))))))  # fmt: skip  # noqa: E501
    return (0.5 * t - _LOG2) - math.log(t) - s


@inline_kernel
def max_laplace_draw(m: float, bits: Any) -> float:
    """The maximum of ``m >= 1`` i.i.d. standard Laplace variables (:func:`max_laplace`):
    :func:`max_laplace_value` of one :func:`nonzero_exponential` of the bit generator
    ``bits``."""
    return max_laplace_value(nonzero_exponential(bits), m)


#: Below this ``t``, :func:`max_laplace_bounds` gives up (``(-inf, inf)``); from it to
#: ``log 2``, ``|log t| < 69.1``, which the callers' rounding margins assume.
BOUNDS_MIN_T = 1e-30
#: ``max_{0 <= f <= 1} (log2(1 + f) - f) = 0.0860713...`` (at ``f = 1/ln 2 - 1``), rounded up.
_LOG2_EXCESS = 0.0860714
_LN2 = math.log(2.0)
_MANTISSA = np.int64((1 << 52) - 1)
_ULP_ONE = 2.0**-52


@inline_kernel
def max_laplace_bounds(e: float, m: float) -> tuple[float, float]:
    """Bounds ``lo <= x <= hi`` on :func:`max_laplace_value`'s ``x`` for the same ``(e, m)``,
    without a logarithm: ``(x, x)`` itself for ``t = e/m > log 2``, an interval ~0.06 wide for
    ``t`` in ``[BOUNDS_MIN_T, log 2]``, ``(-inf, inf)`` below.

    There ``x = (t/2 - log 2) - log t - S(t)`` with ``0 <= S(t) = log(sinh(t/2)/(t/2)) <=
    t^2/24``; ``t = 2^k (1 + f)`` read off its bits (:func:`dpbandits.core.jit.float_bits`) gives
    ``log t = ln 2 (k + log2(1 + f))`` with ``f <= log2(1 + f) <= f + 0.0860714``. Rounding is
    left to the caller's margin."""
    t = e / m
    if t > _LOG2:  # the exact value, as max_laplace_value computes it
        return _LOG2 - t, _LOG2 - t
    if t < BOUNDS_MIN_T:
        return -math.inf, math.inf
    bits = float_bits(t)
    k = np.float64((bits >> 52) - 1023)
    f = np.float64(bits & _MANTISSA) * _ULP_ONE
    hi = (0.5 * t - _LOG2) - _LN2 * (k + f)
    return hi - _LN2 * _LOG2_EXCESS - t * t * (1.0 / 24.0), hi


@kernel
def max_laplace_fill(m: Any, rng: Any, out: Any) -> None:
    """``out[i]`` = the maximum of ``m[i]`` i.i.d. standard Laplace variables (1-D ``m >= 1``,
    unchecked), in order (:func:`max_laplace_draw`)."""
    bits = rng.bit_generator
    for i in range(m.shape[0]):
        out[i] = max_laplace_draw(m[i], bits)


def max_laplace(m: ArrayLike, rng: RNGLike = None) -> FloatArray:
    """Maximum of ``m`` i.i.d. standard Laplace variables (``m >= 1``, elementwise).

    Inverse CDF of ``V = U^(1/m)``: with ``t = -log V = E/m``, ``E ~ Exp(1)``,
    ``x = log 2 - t`` if ``V < 1/2`` and ``x = -log(2 (1 - V)) = -log(2 (1 - exp(-t)))``
    otherwise (:func:`max_laplace_draw`). Working with ``t`` keeps full relative accuracy when
    ``V`` is within 1e-16 of 1 (large ``m``) and in the far tails; ``V`` is never formed.
    Compiled: :func:`max_laplace_fill`.
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

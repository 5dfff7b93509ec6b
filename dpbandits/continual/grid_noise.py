"""Floating-point-safe noise: discrete Laplace noise on a power-of-two grid.

Textbook Laplace noise added in floating point leaks: which floats ``x + Lap(b)`` can take
depends on ``x``, and Mironov (2012, "On significance of the least significant bits for
differential privacy") recovers inputs from the low-order bits of such releases. The fix used
here is the one of Canonne, Kamath and Steinke (2020, "The discrete Gaussian for differential
privacy") and OpenDP: round the exact value to a grid ``gamma * Z`` and add *discrete* Laplace
noise ``gamma * K``, ``P(K = k) ∝ exp(-|k| gamma / b)``. The release is then a multiple of
``gamma``; with ``gamma`` a power of two every such multiple below ``2**53 * gamma`` is a float,
and sums of them are exact, so nothing about the input hides in the low bits.

Privacy: rounding moves a value by at most ``gamma / 2``, so two neighbouring values whose
difference is at most ``b0`` round to grid points at most ``b0 + gamma`` apart; noise of scale
``b = (b0 + gamma) / eps`` in grid units gives eps-DP, exactly as the continuous mechanism does
with ``b0 / eps``. The cost is that small: :func:`grid_step` picks ``gamma`` about ``2**-12``
times the noise scale, so the extra variance is below 0.1%.

The discrete Laplace variable is the difference of two independent geometric variables
(``K = G1 - G2``, ``P(G = g) = (1 - p) p**g``, ``p = exp(-gamma / b)``), each drawn as
``floor(E b / gamma)`` from a standard exponential ``E`` (``P(G >= g) = P(E >= g gamma / b) =
p**g``): three times faster than NumPy's geometric sampler, which takes a logarithm per draw.
Its probabilities are exact up to the float64 rounding of ``E b / gamma`` (a relative 2**-53,
which moves the floor only when the product lies within that of an integer); the output is an
integer whatever the rounding, so nothing about the input can hide in low-order bits.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks

__all__ = [
    "discrete_laplace",
    "discrete_laplace_pmf",
    "discrete_laplace_units",
    "grid_step",
    "snap",
]

#: The grid step is about this fraction of the noise scale.
GRID_FRACTION = 2.0**-12
#: Largest discrete Laplace scale, in grid steps: draws up to 64 scales stay below 2**53.
MAX_SCALE_UNITS = 2.0**47


def grid_step(scale: float) -> float:
    """The power of two closest below ``scale * GRID_FRACTION``."""
    scale = checks.positive_number(scale, "scale")
    return float(2.0 ** math.floor(math.log2(scale) + math.log2(GRID_FRACTION)))


def snap(x: NDArray[np.float64] | float, gamma: float) -> NDArray[np.float64]:
    """``x`` rounded to the nearest multiple of ``gamma`` (ties to even)."""
    return np.asarray(np.rint(np.asarray(x, dtype=np.float64) / gamma) * gamma)


def discrete_laplace_units(
    rng: np.random.Generator,
    scale_units: float | NDArray[np.float64],
    size: int | tuple[int, ...],
) -> NDArray[np.float64]:
    """:func:`discrete_laplace` as float64 (integer-valued, exact below ``2**53``): the form
    the tree mechanisms sum before multiplying by the grid step."""
    if np.ndim(scale_units) == 0:
        units: float | NDArray[np.float64] = checks.positive_number(scale_units, "scale_units")
    else:
        units = checks.real_array(scale_units, "scale_units")
        if not np.all(units > 0):
            raise ValueError("scale_units must be > 0 everywhere")
    if not np.all(np.asarray(units) <= MAX_SCALE_UNITS):
        raise ValueError(
            f"scale_units must be <= 2**47 (draws up to ~64 scales stay exact integers in "
            f"float64), got a maximum of {np.max(units)!r}"
        )
    shape = (size,) if isinstance(size, int) else tuple(size)
    # G = floor(E s), E ~ Exp(1): P(G >= g) = P(E >= g / s) = p^g, p = exp(-1 / s), geometric
    e = rng.standard_exponential((2, *shape))
    e *= units
    np.floor(e, out=e)
    return np.subtract(e[0], e[1])


def discrete_laplace(
    rng: np.random.Generator,
    scale_units: float | NDArray[np.float64],
    size: int | tuple[int, ...],
) -> NDArray[np.int64]:
    """Integers ``K`` with ``P(K = k) ∝ exp(-|k| / scale_units)``.

    ``scale_units`` is a number or an array broadcasting against ``size`` (one scale per
    column, e.g. per stream), each finite and > 0.
    """
    return discrete_laplace_units(rng, scale_units, size).astype(np.int64)


def discrete_laplace_pmf(k: NDArray[np.int64] | int, scale_units: float) -> NDArray[np.float64]:
    """``P(K = k) = (1 - p) / (1 + p) * p**|k|`` with ``p = exp(-1 / scale_units)``."""
    p = math.exp(-1.0 / scale_units)
    kk = np.abs(np.asarray(k, dtype=np.float64))
    return np.asarray((1.0 - p) / (1.0 + p) * p**kk)

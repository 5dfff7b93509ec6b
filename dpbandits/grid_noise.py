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
(``K = G1 - G2``, ``P(G = g) = (1 - p) p**g``, ``p = exp(-gamma / b)``), drawn with NumPy's
geometric sampler. Its probabilities are exact up to the float64 rounding of ``p``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpbandits import checks

__all__ = ["discrete_laplace", "discrete_laplace_pmf", "grid_step", "snap"]

#: The grid step is about this fraction of the noise scale.
GRID_FRACTION = 2.0**-12


def grid_step(scale: float) -> float:
    """The power of two closest below ``scale * GRID_FRACTION``."""
    scale = checks.positive_number(scale, "scale")
    return float(2.0 ** math.floor(math.log2(scale) + math.log2(GRID_FRACTION)))


def snap(x: NDArray[np.float64] | float, gamma: float) -> NDArray[np.float64]:
    """``x`` rounded to the nearest multiple of ``gamma`` (ties to even)."""
    return np.asarray(np.rint(np.asarray(x, dtype=np.float64) / gamma) * gamma)


def discrete_laplace(
    rng: np.random.Generator,
    scale_units: float | NDArray[np.float64],
    size: int | tuple[int, ...],
) -> NDArray[np.int64]:
    """Integers ``K`` with ``P(K = k) ∝ exp(-|k| / scale_units)``.

    ``scale_units`` is a number or an array broadcasting against ``size`` (one scale per
    column, e.g. per stream), each finite and > 0.
    """
    # P(G = g) = (1 - p) p^g on {0, 1, ...}; numpy's geometric counts trials (>= 1), success 1-p;
    # q = 1 - p by expm1, accurate for a large scale.
    if np.ndim(scale_units) == 0:
        units = np.float64(checks.positive_number(scale_units, "scale_units"))
    else:
        units = checks.real_array(scale_units, "scale_units")
        if not np.all(units > 0):
            raise ValueError("scale_units must be > 0 everywhere")
    with np.errstate(over="ignore"):  # a scale below ~1e-308 units: 1/scale = inf, q = 1
        q = -np.expm1(-1.0 / units)
    g1 = rng.geometric(q, size=size)
    g2 = rng.geometric(q, size=size)
    return np.asarray(g1 - g2, dtype=np.int64)


def discrete_laplace_pmf(k: NDArray[np.int64] | int, scale_units: float) -> NDArray[np.float64]:
    """``P(K = k) = (1 - p) / (1 + p) * p**|k|`` with ``p = exp(-1 / scale_units)``."""
    p = math.exp(-1.0 / scale_units)
    kk = np.abs(np.asarray(k, dtype=np.float64))
    return np.asarray((1.0 - p) / (1.0 + p) * p**kk)

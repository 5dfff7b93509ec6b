"""Node samplers of the tree mechanisms: the law of the noise each node of a continual-release
tree adds to its partial sum (continuous Laplace, or discrete Laplace on a power-of-two grid),
and the fast standard Laplace draws they use (:mod:`dpbandits.continual.tree_noise` builds the
noise tables from them)."""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from dpbandits.continual.grid_noise import discrete_laplace_units
from dpbandits.core.checks import positive_number
from dpbandits.core.jit import generator_address
from dpbandits.core.samplers import fill_standard_laplace

__all__ = ["LAPLACE_NODES", "GridLaplaceNodes", "LaplaceNodes", "NodeSampler", "laplace_unit"]


def laplace_unit(rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.float64]:
    """Standard Laplace draws (scale 1), in C order: ``E * S``, ``E ~ Exp(1)``, ``S`` a fair
    random sign, both from one 64-bit word (:func:`dpbandits.core.samplers.standard_laplace`).

    Exactly Laplace-distributed and about four times as fast as ``Generator.laplace``, which
    matters for the 10^7 node noises of a full table. (Until 2026-11-23 the sign was a separate
    ``Generator.integers`` draw: same law, another random stream; docs/performance.md.)
    """
    out = np.empty(size)
    # as a flat view, whatever the shape: one compiled version of the kernel, not one per
    # number of dimensions (the same draws, in C order)
    fill_standard_laplace(generator_address(rng), out.reshape(-1))
    return out


class NodeSampler(Protocol):
    """Node noise of scale ``s`` is ``units(rng, size, s) * unit(s)``.

    ``s`` is a float or an array broadcasting against ``size`` (one scale per stream).
    """

    def units(self, rng: Any, size: tuple[int, ...] | int, scale: Any) -> NDArray[np.float64]:
        """Node noises of scale ``scale``, in units of :meth:`unit`."""
        ...

    def unit(self, scale: Any) -> Any:
        """The value of one unit for node noise of scale ``scale``."""
        ...

    #: Bytes held per value at the peak of :meth:`units` (its result and its temporaries): what
    #: a caller counts against the machine's memory (:meth:`HybridNoiseBlocks.peak_nbytes`).
    draw_itemsize: int


class LaplaceNodes:
    """Continuous Laplace node noise ``Lap(s)``: unit draws ``Lap(1)``, one unit = ``s``."""

    #: the float64 result only (drawn in place)
    draw_itemsize = 8

    def units(self, rng: Any, size: tuple[int, ...] | int, scale: Any) -> NDArray[np.float64]:
        return laplace_unit(rng, size)

    def unit(self, scale: Any) -> Any:
        return scale


#: The default sampler (stateless, shared).
LAPLACE_NODES = LaplaceNodes()


class GridLaplaceNodes:
    """Discrete Laplace node noise on the grid ``gamma Z``: ``gamma K``, ``P(K = k) ∝
    exp(-|k| gamma / s)`` (Canonne, Kamath, Steinke 2020; :mod:`dpbandits.continual.grid_noise`).

    Node sums whose sensitivity is a multiple ``b`` of ``gamma`` get the same eps as with
    ``Lap(s)``: neighbouring sums shift ``K`` by ``b / gamma`` units and the pmf ratio is at most
    ``exp(b / s)``.  ``gamma`` must be a power of two so that multiples of it add exactly.
    """

    def __init__(self, gamma: float) -> None:
        gamma = positive_number(gamma, "gamma")
        if math.frexp(gamma)[0] != 0.5:
            raise ValueError(f"gamma must be a power of two, got {gamma!r}")
        self.gamma = gamma

    def __repr__(self) -> str:
        return f"GridLaplaceNodes(gamma={self.gamma!r})"

    #: two float64 exponentials per value, and the float64 difference
    draw_itemsize = 24

    def units(self, rng: Any, size: tuple[int, ...] | int, scale: Any) -> NDArray[np.float64]:
        return discrete_laplace_units(rng, np.divide(scale, self.gamma), size)

    def unit(self, scale: Any) -> Any:
        return self.gamma

"""The user's geographic-DP signal: Laplace noise on the feature vector (paper 004, §2.2).

The user agent adds i.i.d. ``Laplace(eta)`` noise (scale ``eta``) to each coordinate of its
feature vector ``f`` and sends ``f + z``. The output density is proportional to
``exp(-|f - y|_1 / eta)``, so by Proposition 1 the mechanism is ``1/eta``-geographic DP in the
l1 distance (Definition 2): ``P(Q f1 in S) <= exp(|f1 - f2|_1 / eta) P(Q f2 in S)``. For users
within l1 distance ``R`` of each other this is ``R/eta``-local DP (§5.2): ``eta = 0.1`` gives
``eps = 1`` for neighbours at distance 0.1. Everything the server does afterwards is
post-processing of the signal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.selectors.base import RNGLike

__all__ = ["check_eta", "local_epsilon", "perturb"]


def check_eta(eta: Any) -> float:
    """``eta`` as a float, or raise unless it is a finite number ``> 0``."""
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.integer, np.floating)):
        raise TypeError(f"eta must be a real number, got {type(eta).__name__}")
    v = float(eta)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"eta (the Laplace scale) must be finite and > 0, got {v!r}")
    return v


def perturb(f: ArrayLike, eta: float, rng: RNGLike = None) -> NDArray[np.float64]:
    """The signal ``f + z``, ``z`` i.i.d. ``Laplace(0, eta)`` per coordinate (§2.2)."""
    e = check_eta(eta)
    fa = np.asarray(f, dtype=np.float64)
    if not np.all(np.isfinite(fa)):
        raise ValueError("feature vectors must be finite")
    gen = np.random.default_rng(rng)
    return fa + gen.laplace(0.0, e, size=fa.shape)


def local_epsilon(eta: float, distance: float) -> float:
    """The local-DP level ``distance / eta`` between users ``distance`` apart in l1 (§5.2)."""
    e = check_eta(eta)
    if isinstance(distance, bool) or not isinstance(distance, (int, float)) or distance < 0:
        raise ValueError(f"distance must be a number >= 0, got {distance!r}")
    return float(distance) / e

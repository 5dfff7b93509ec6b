"""Report-noisy-max selectors: RNM, the exponential mechanism, permute-and-flip, RNMH.

- :class:`RNM` -- eq. (3): ``argmax(q + z)`` with ``z`` i.i.d. with scale ``2D/eps`` where
  ``D = max_a d[a]`` (eq. (2)); exponential (default), Gumbel or Laplace noise (§III-B).
- :class:`ExponentialMechanism` -- ``P(a) ∝ exp(eps q[a] / (2D))``, sampled by Gumbel-max.
- :class:`PermuteAndFlip` -- McKenna & Sheldon (2020); same output law as exponential-noise RNM
  (Ding et al. 2021), SPEC §1.
- :class:`RNMH` -- eq. (4), noise ``Exp(mean 2 d[a]/eps)``; **not DP** (§IV-A counterexample).

Numerics: RNM is invariant to shifting and scaling the scores together with the noise, so we
work with ``u[a] = (q[a] - max q) * eps/(2D) <= 0`` and standard noise. This keeps the maximiser
exact for ``eps = 1e3`` and scores ``1e6`` (no catastrophic rounding in ``q + z``) and never
overflows; an infinite ratio ``eps/(2D)`` gives ``u = -inf`` for every non-maximal score, which
is the correct limit.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from dpbandits.selectors.base import FloatArray, IntArray, Selector

__all__ = ["RNM", "RNMH", "ExponentialMechanism", "PermuteAndFlip", "normalised_gaps"]

NoiseName = Literal["exponential", "gumbel", "laplace"]
NOISES: tuple[str, ...] = ("exponential", "gumbel", "laplace")


def normalised_gaps(q: FloatArray, scale: FloatArray) -> FloatArray:
    """``(q - max q) / scale`` row-wise, ``scale`` of shape ``(R, 1)`` (``> 0``).

    The maximisers get exactly 0; if ``scale`` underflows relative to the gaps the others get
    ``-inf`` (probability 0 in the limit), never NaN.
    """
    with np.errstate(over="ignore"):
        u = q - q.max(axis=1, keepdims=True)  # a gap beyond the float range -> -inf: fine
    with np.errstate(over="ignore", divide="ignore"):
        lam = 1.0 / scale
    if np.all(np.isfinite(lam) & (lam > 0)):
        u *= lam  # in place; 0 * lam = 0 and -inf * lam = -inf: no NaN possible
        return u
    # lam overflowed to inf (scale ~ 0) or underflowed to 0 (huge scale): 0 * inf and
    # -inf * 0 are NaN, so treat the maximisers (gap 0) and -inf gaps explicitly.
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = u * lam
    return np.where(u == 0.0, 0.0, np.where(np.isneginf(u), -np.inf, scaled))


def standard_noise(noise: str, shape: tuple[int, ...], rng: np.random.Generator) -> FloatArray:
    """Standard (scale 1) noise of the given family."""
    if noise == "exponential":
        return rng.standard_exponential(shape)
    if noise == "gumbel":
        return rng.gumbel(size=shape)
    if noise == "laplace":
        return rng.laplace(size=shape)
    raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")


def rnm_select(q: FloatArray, scale: FloatArray, noise: str, rng: np.random.Generator) -> IntArray:
    """``argmax(q + scale * z)`` with standard ``z`` of the given family (shape-normalised)."""
    u = normalised_gaps(q, scale)
    u += standard_noise(noise, q.shape, rng)
    return np.argmax(u, axis=1).astype(np.int64)


class RNM(Selector):
    """Report Noisy Max, eq. (3) (Dwork et al. 2006): ``argmax(q + z)``.

    ``z[a]`` i.i.d. with scale ``2D/eps``, ``D = max_a d[a]`` the global sensitivity (eq. (2)),
    taken per row. ``noise="exponential"`` (the paper's default, mean ``2D/eps``),
    ``"gumbel"`` (the exponential mechanism ``P(a) ∝ exp(eps q[a]/(2D))``) or ``"laplace"``
    (``Lap(2D/eps)``). eps-DP for each noise.
    """

    name = "rnm"
    guarantee = "eps-DP"
    summary = "argmax(q + z), z ~ Exp/Gumbel/Lap with scale 2D/eps, D = max d"

    def __init__(self, epsilon: float = 1.0, noise: NoiseName = "exponential") -> None:
        super().__init__(epsilon)
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        self.noise = noise

    def _select(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        scale = 2.0 * d.max(axis=1, keepdims=True) / self.epsilon
        return rnm_select(q, scale, self.noise, rng)


class ExponentialMechanism(RNM):
    """The exponential mechanism ``P(a) ∝ exp(eps q[a] / (2D))`` (McSherry & Talwar 2007).

    Sampled by the Gumbel-max trick, i.e. ``rnm`` with ``noise="gumbel"`` (SPEC §1); this works
    in log-space, so huge ``eps * q`` never overflows.
    """

    name = "exponential_mechanism"
    summary = "softmax of eps q/(2D) via Gumbel-max"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon, noise="gumbel")


class PermuteAndFlip(Selector):
    """Permute-and-flip (McKenna & Sheldon 2020).

    Visit the candidates in a uniformly random order and accept ``a`` with probability
    ``exp(eps (q[a] - max q) / (2D))``; the first accepted candidate is the output. The coins
    of the candidates are independent of the order, so we flip all coins at once and output a
    uniformly random accepted candidate (the first of a random order among the accepted ones);
    a maximiser always accepts. Same output law as exponential-noise RNM (Ding et al. 2021).
    """

    name = "permute_and_flip"
    guarantee = "eps-DP"
    summary = "random order, accept a w.p. exp(eps (q[a]-max q)/(2D))"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon)

    def _select(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        scale = 2.0 * d.max(axis=1, keepdims=True) / self.epsilon
        u = normalised_gaps(q, scale)  # log acceptance probabilities, <= 0
        # accept iff U <= exp(u) <=> -log U >= -u, -log U ~ Exp(1): log-space; a maximiser (u = 0)
        # always accepts.
        accept = rng.standard_exponential(q.shape) >= -u
        keys = rng.random(q.shape)
        return np.argmax(np.where(accept, keys, -1.0), axis=1).astype(np.int64)


class RNMH(Selector):
    """RNM with heterogeneous noise, eq. (4): ``argmax(q + z)``, ``z[a] ~ Exp(mean 2 d[a]/eps)``.

    **Not differentially private** (§IV-A): with ``d = (0, 1)``, ``q = (0, 1/2)`` and
    ``q' = (0, -1/2)`` candidate 1 has probability 0 under ``q`` and ``1 - e^{-eps/4}`` under
    ``q'``. Kept as a reference; ``private = False``.
    """

    name = "rnmh"
    private = False
    guarantee = "not DP (§IV-A counterexample)"
    summary = "argmax(q + z), z[a] ~ Exp(mean 2 d[a]/eps)"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon)

    def _select(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        # Shift by the row maximum (exact) so that large scores keep the noise's resolution.
        with np.errstate(over="ignore"):
            gaps = q - q.max(axis=1, keepdims=True)
            scale = 2.0 * d / self.epsilon
        if not np.all(np.isfinite(scale)):
            raise ValueError("2 * d / epsilon overflows; rescale q and d")
        z = rng.standard_exponential(q.shape)
        z *= scale
        z += gaps
        return np.argmax(z, axis=1).astype(np.int64)

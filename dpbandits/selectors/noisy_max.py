"""Report-noisy-max selectors: RNM, the exponential mechanism, permute-and-flip, RNMH.

- :class:`RNM` -- eq. (3): ``argmax(q + z)`` with ``z`` i.i.d. with scale ``2D/eps`` where
  ``D = max_a d[a]`` (eq. (2)); exponential (default), Gumbel or Laplace noise (§III-B).
- :class:`ExponentialMechanism` -- ``P(a) ∝ exp(eps q[a] / (2D))``, sampled by Gumbel-max.
- :class:`PermuteAndFlip` -- McKenna & Sheldon (2020); same output law as exponential-noise RNM
  (Ding et al. 2021), §IV.
- :class:`RNMH` -- eq. (4), noise ``Exp(mean 2 d[a]/eps)``; **not DP** (§IV-A counterexample).

Numerics: RNM is invariant to shifting and scaling the scores together with the noise, so we
work with ``u[a] = (q[a] - max q) * eps/(2D) <= 0`` and standard noise. This keeps the maximiser
exact for ``eps = 1e3`` and scores ``1e6`` (no catastrophic rounding in ``q + z``) and never
overflows; an infinite ratio ``eps/(2D)`` gives ``u = -inf`` for every non-maximal score, which
is the correct limit.

Speed: the batch is processed in blocks of rows (:data:`BLOCK` scores) with reused buffers, so
the work stays in cache, and the noise is drawn as exact transforms of standard exponential or
uniform variates (:func:`add_standard_noise`), which are several times cheaper than
``Generator.gumbel`` / ``.laplace`` / ``.exponential(scale=array)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from dpbandits import checks
from dpbandits.selectors.base import FloatArray, IntArray, Selector, row_max

__all__ = [
    "BLOCK",
    "RNM",
    "RNMH",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "add_standard_noise",
    "blocked_gaps_argmax",
    "normalised_gaps",
    "rnm_select",
    "row_blocks",
]

NoiseName = Literal["exponential", "gumbel", "laplace"]
NOISES: tuple[str, ...] = ("exponential", "gumbel", "laplace")

#: Elements per row block. The batch is processed in blocks of about this many scores so that
#: the few float64 work buffers (128 KB each) stay in the L2 cache: at R*K = 10^6 this is
#: about 1.5x faster than whole-batch temporaries, and it also bounds the memory.
BLOCK = 2**14

_umin, _umax = np.minimum.reduce, np.maximum.reduce


def row_blocks(r: int, k: int) -> range:
    """Start rows of the blocks of ``max(1, BLOCK // k)`` rows covering ``r`` rows."""
    return range(0, r, max(1, BLOCK // k))


def normalised_gaps(q: FloatArray, scale: FloatArray) -> FloatArray:
    """``(q - max q) / scale`` row-wise, ``scale`` of shape ``(R, 1)`` (``> 0``).

    The maximisers get exactly 0; if ``scale`` underflows relative to the gaps the others get
    ``-inf`` (probability 0 in the limit), never NaN.
    """
    with np.errstate(over="ignore"):
        u = q - row_max(q)  # a gap beyond the float range -> -inf: fine
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


def add_standard_noise(
    noise: str, u: FloatArray, out: FloatArray, rng: np.random.Generator
) -> FloatArray:
    """``out = u + z`` with ``z`` i.i.d. standard (scale 1) noise of the given family.

    ``u`` holds values in ``[-inf, 0]``; ``out`` is a buffer of the same shape (may not be
    ``u``). Drawn from the cheap standard variates instead of ``Generator.gumbel`` /
    ``.laplace`` (3-4x slower); every formula is an exact transform, so the law is unchanged.
    Call under ``np.errstate(divide="ignore")``: a uniform of exactly 0 (probability 2**-53)
    gives ``log(0) = -inf``, i.e. noise ``-inf``, never NaN.
    """
    if noise == "exponential":
        rng.standard_exponential(out=out)
    elif noise == "gumbel":
        # G = -log(-log U), U ~ U[0, 1): G < 37 is finite or -inf, so u + G is never NaN
        rng.random(out=out)
        np.log(out, out=out)
        np.negative(out, out=out)
        np.log(out, out=out)
        np.negative(out, out=out)
    elif noise == "laplace":
        # inverse CDF with one uniform: for T = U - 1/2, L = sign(T) * -log(1 - 2|T|),
        # computed as copysign(log1p(-2|T|), T) (the log1p is <= 0; U = 0 gives -inf)
        rng.random(out=out)
        out -= 0.5
        mag = np.abs(out)
        mag *= -2.0
        np.log1p(mag, out=mag)
        np.copysign(mag, out, out=out)
    else:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    out += u
    return out


def blocked_gaps_argmax(
    q: FloatArray, lam: FloatArray, pick: Callable[[FloatArray, FloatArray], IntArray]
) -> IntArray:
    """``pick(u, buf)`` on row blocks of the gaps ``u = (q - max q) * lam``; one index per row.

    ``lam`` has shape ``(R, 1)``, entries ``> 0`` (inverse noise scales). ``pick`` gets a block
    ``u`` and a work buffer of the same shape and returns the selected index of each row; it
    runs under ``errstate(over="ignore", divide="ignore")``. The blocks (:data:`BLOCK`) reuse
    two buffers, so the work stays in cache. Maximisers get exactly 0 and gaps beyond the float
    range ``-inf`` (probability 0), never NaN.
    """
    with np.errstate(over="ignore", divide="ignore"):
        return _gaps_argmax(q, lam, pick)


def _gaps_argmax(
    q: FloatArray, lam: FloatArray, pick: Callable[[FloatArray, FloatArray], IntArray]
) -> IntArray:
    """:func:`blocked_gaps_argmax` for a caller that holds ``errstate(over="ignore",
    divide="ignore")`` (one context per selection on the agents' per-step path)."""
    r, k = q.shape
    # (the ufuncs' own reductions: the ndarray methods add a Python layer per call)
    if not (_umin(lam, None) > 0.0 and _umax(lam, None) < np.inf):
        # 1/scale under- or overflowed (extreme eps or d): the careful whole-batch path
        u = normalised_gaps(q, 1.0 / lam)
        return np.asarray(pick(u, np.empty_like(u)), dtype=np.int64)
    rows = max(1, BLOCK // k)
    one = r <= rows  # a single block (the bandit agents' case): no index array to fill
    idx = np.empty(0 if one else r, dtype=np.int64)
    ubuf, zbuf = np.empty((min(rows, r), k)), np.empty((min(rows, r), k))
    for r0 in row_blocks(r, k):  # under errstate: a gap beyond the float range -> -inf
        qb = q[r0 : r0 + rows]
        n = qb.shape[0]
        u = ubuf[:n]
        np.subtract(qb, row_max(qb), out=u)
        u *= lam[r0 : r0 + n]  # finite lam > 0: 0 stays 0, -inf stays -inf
        if one:
            return pick(u, zbuf)
        idx[r0 : r0 + n] = pick(u, zbuf[:n])
    return idx


def _add_noise_argmax(
    noise: str, rng: np.random.Generator, u: FloatArray, buf: FloatArray
) -> IntArray:
    return add_standard_noise(noise, u, buf, rng).argmax(1)


def rnm_select(q: FloatArray, scale: FloatArray, noise: str, rng: np.random.Generator) -> IntArray:
    """``argmax(q + scale * z)`` with standard ``z`` of the given family (shape-normalised).

    ``scale`` has shape ``(R, 1)``, entries ``> 0``.
    """
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    with np.errstate(over="ignore", divide="ignore"):
        lam = 1.0 / scale
    return blocked_gaps_argmax(q, lam, functools.partial(_add_noise_argmax, noise, rng))


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

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        with np.errstate(over="ignore", divide="ignore"):
            lam = self.epsilon / (2.0 * row_max(d))  # 1 / (2D/eps)
            return _gaps_argmax(q, lam, functools.partial(_add_noise_argmax, self.noise, rng))


class ExponentialMechanism(RNM):
    """The exponential mechanism ``P(a) ∝ exp(eps q[a] / (2D))`` (McSherry & Talwar 2007).

    Sampled by the Gumbel-max trick, i.e. ``rnm`` with ``noise="gumbel"`` (§IV); this works
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

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        with np.errstate(over="ignore", divide="ignore"):
            lam = self.epsilon / (2.0 * row_max(d))  # u: log acceptance probs

        def pick(u: FloatArray, x: FloatArray) -> IntArray:
            # Accept a iff U <= exp(u) <=> E >= -u with E = -log U ~ Exp(1) (log-space; a
            # maximiser, u = 0, always accepts). Given the coins, the excesses x = E + u of the
            # accepted candidates are i.i.d. Exp(1) (memorylessness) and independent of which
            # candidates accepted, so the accepted candidate with the smallest excess is a
            # uniformly random one -- the first accepted in a uniformly random order. One draw
            # per candidate instead of a coin and an order key.
            rng.standard_exponential(out=x)
            x += u  # E >= -u <=> E + u >= 0 exactly: a rounded sum has the sign of the exact one
            np.copyto(x, np.inf, where=x < 0.0)  # rejected candidates never come first
            return x.argmin(1)

        with np.errstate(over="ignore", divide="ignore"):
            return _gaps_argmax(q, lam, pick)


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

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        # 2 d / eps is increasing in d: it overflows somewhere iff it does at max d.
        if not math.isfinite(2.0 * float(d.max()) / self.epsilon):
            raise ValueError(
                f"epsilon={self.epsilon!r} is too small for rnmh with max d = "
                f"{float(d.max()):.3g}: "
                f"the noise scale 2 d / epsilon overflows; use epsilon >= "
                f"{2.0 * float(d.max()) / checks.MAX_NOISE_SCALE:.3g}"
            )
        r, k = q.shape
        idx = np.empty(r, dtype=np.int64)
        rows = max(1, BLOCK // k)
        m = min(rows, r)
        gbuf, sbuf, zbuf = np.empty((m, k)), np.empty((m, k)), np.empty((m, k))
        with np.errstate(over="ignore"):
            for r0 in row_blocks(r, k):
                qb = q[r0 : r0 + rows]
                n = qb.shape[0]
                gaps, scale, z = gbuf[:n], sbuf[:n], zbuf[:n]
                # shift by the row maximum (exact) so that large scores keep the noise's
                # resolution; a gap beyond the float range is -inf (probability 0): fine
                np.subtract(qb, row_max(qb), out=gaps)
                np.multiply(d[r0 : r0 + n], 2.0, out=scale)
                scale /= self.epsilon  # 2 d / eps, finite (checked above)
                rng.standard_exponential(out=z)
                z *= scale
                z += gaps
                np.argmax(z, axis=1, out=idx[r0 : r0 + n])
        return idx

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

Speed: each selection is a compiled kernel (:mod:`dpbandits.core.jit`, see ``docs/performance.md``)
working one row at a time -- ``rnm_row``, ``permute_and_flip_row``, ``rnmh_row`` select for one
row and are public so that a compiled bandit agent can call them; ``select_batch`` loops over
the rows in compiled code. The noise is drawn as exact transforms of standard exponential or
uniform variates (:func:`standard_noise`), from the caller's ``numpy.random.Generator`` in
row-major order: the numbers are those of the former numpy implementation, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel, kernel
from dpbandits.selectors.base import FloatArray, IntArray, Selector
from dpbandits.selectors.compiled import CompiledKernel, KernelBacked

__all__ = [
    "NOISES",
    "RNM",
    "RNMH",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "first_max_index",
    "first_max_step",
    "noise_code",
    "permute_and_flip_kernel",
    "permute_and_flip_row",
    "permute_and_flip_rows",
    "rnm_inverse_scale",
    "rnm_kernel",
    "rnm_row",
    "rnm_rows",
    "rnm_select",
    "rnmh_kernel",
    "rnmh_row",
    "rnmh_rows",
    "row_maxima",
    "row_maximum",
    "scaled_gap",
    "standard_noise",
    "store_first_max",
]

NoiseName = Literal["exponential", "gumbel", "laplace"]
#: The noise families; a kernel takes a family by its position here (:func:`noise_code`).
NOISES: tuple[str, ...] = ("exponential", "gumbel", "laplace")


def noise_code(noise: str) -> int:
    """The kernels' code of a noise family (its index in :data:`NOISES`)."""
    return NOISES.index(checks.one_of(noise, NOISES, "noise"))


# -- the compiled kernels (dpbandits.core.jit): one implementation for every entry point ----------
@kernel
def scaled_gap(x: float, m: float, lam: float) -> float:
    """``(x - m) * lam``, the normalised gap of a score ``x`` to its row maximum ``m``.

    ``lam > 0`` is the inverse noise scale. The maximisers get exactly 0 and a gap beyond the
    float range ``-inf`` (probability 0); if ``lam`` is 0 or infinite (an extreme ratio of eps
    and D), ``0 * inf`` and ``-inf * 0`` would be NaN, so the maximisers (gap 0) and ``-inf``
    gaps keep their value.
    """
    g = x - m
    if lam > 0.0 and lam < math.inf:
        return g * lam  # 0 stays 0, -inf stays -inf
    if g == 0.0:
        return 0.0
    if g == -math.inf:
        return -math.inf
    return g * lam


@kernel
def standard_noise(code: int, rng: Any) -> float:
    """One standard (scale 1) noise variate of family ``NOISES[code]``.

    Exact transforms of the cheap standard variates: exponential as drawn by
    ``Generator.standard_exponential``; Gumbel ``-log(-log U)``, ``U ~ U[0, 1)`` (finite or
    ``-inf``, never NaN); Laplace by the inverse CDF with one uniform, ``T = U - 1/2``,
    ``copysign(log1p(-2|T|), T)`` (``U = 0`` gives ``-inf``).
    """
    if code == 0:
        return rng.standard_exponential()
    if code == 1:
        return -math.log(-math.log(rng.random()))
    t = rng.random() - 0.5
    return math.copysign(math.log1p(abs(t) * -2.0), t)


@kernel
def _maximum(m: float, v: float) -> float:
    """``numpy.maximum(m, v)`` as a left-to-right maximum takes it: NaN propagates, and a tie
    gives the later value ``v`` (so a row holding both ``0.0`` and ``-0.0`` gets numpy's zero
    for ``K <= 8``, where the former numpy code took maxima column by column)."""
    return v if (m == m and not (m > v)) else m


@inline_kernel
def row_maximum(x: Any, r: int) -> float:
    """``max x[r]`` of row ``r`` of the 2-D ``x``, column by column as ``numpy.maximum``
    (:func:`_maximum`); inlined into the row loops of the selectors' kernels (a call would cost
    more). It takes the row's index: a view ``x[r]`` would be a new array a row."""
    m = x[r, 0]
    for a in range(1, x.shape[1]):
        m = _maximum(m, x[r, a])
    return m


@kernel
def row_maxima(x: Any, out: Any) -> None:
    """``out[r] = max x[r]`` (:func:`row_maximum`) for every row of the 2-D ``x``.

    For row loops whose body draws random numbers: there, an array handed to an inlined
    function (``row_maximum(q, r)``) costs two atomic reference-count updates a row, which
    numba's reference-count pruning cannot remove across the body's calls to the bit generator
    (~15 ns a row of random stopping, measured); the maxima read from ``out`` cost nothing."""
    for r in range(x.shape[0]):
        out[r] = row_maximum(x, r)


@kernel
def first_max_step(v: float, a: int, best: float, best_a: int, first_nan: int
                   ) -> tuple[float, int, int]:  # fmt: skip
    """One step of ``numpy.argmax``'s scan (the first maximum; the first NaN if there is one)
    over values ``v`` at indices ``a = 0, 1, ...``, without a branch on the values.

    Start from ``(best, best_a, first_nan) = (-inf, 0, -1)``; the answer is
    :func:`first_max_index` of the last triple. A branch on random values (a new maximum?) is
    mispredicted about once per new maximum, which costs more than the comparison itself; here
    ``best`` and ``best_a`` are selects, and the only branch (a NaN, which the selectors never
    produce from finite scores) is never taken."""
    best_a = a if v > best else best_a
    best = max(v, best)  # v if v > best else best: compiled to one maxsd
    if v != v and first_nan < 0:
        first_nan = a
    return best, best_a, first_nan


@kernel
def first_max_index(best_a: int, first_nan: int) -> int:
    """The end of :func:`first_max_step`'s scan: the first NaN's index, else the first
    maximum's (what :func:`dpbandits.core.jit.beats` scanning left to right gives)."""
    return best_a if first_nan < 0 else first_nan


@kernel
def store_first_max(best_a: int, first_nan: int, out: Any, r: int) -> int:
    """Row ``r``'s selection at the end of its scan (:func:`first_max_index`), written into
    ``out[r]`` unless ``out`` is None (a branch numba removes when compiling for None)."""
    best_a = first_max_index(best_a, first_nan)
    if out is not None:
        out[r] = best_a
    return best_a


@kernel
def _regular(lam: float) -> bool:
    """Whether ``lam`` is a usable inverse scale (finite, ``> 0``; False for NaN)."""
    return lam > 0.0 and lam < math.inf


@kernel
def rnm_inverse_scale(d: Any, epsilon: float) -> float:
    """``eps / (2 D)``, ``D = max d`` of one row (eq. (2)): the inverse of RNM's noise scale."""
    return epsilon / (2.0 * row_maximum(d[None, :], 0))


@kernel
def _batch_lam(lam: float, regular: bool) -> float:
    """A row's inverse scale as a batch uses it: when some row's ``lam`` under- or overflowed,
    the batch goes through the noise scale ``1 / lam`` and back (``1 / (1 / lam)``, as the
    numpy code did: within an ulp of ``lam``, and 0 or ``inf`` where ``lam`` is)."""
    return lam if regular else 1.0 / (1.0 / lam)


# -- the row loops: each selection is written once, as a loop over the rows of 2-D arrays
# (indexed ``x[r, a]``), called once per batch. A call per row passing arrays would cost
# ~10-20 ns per array (reference counting), more than the selection itself at small K; the
# one-row kernels call the same loops on a one-row view, with ``out=None`` (the selection of
# the last row is returned). The inverse scale of row r is ``lams[r]``, or ``lam`` when
# ``lams`` is None (not an empty view: a view made and passed costs more than a row's
# selection, and numba compiles the code of a None argument away), through
# :func:`_batch_lam` with ``regular``.
@kernel
def _lams_regular(lams: Any) -> bool:
    """Whether every inverse scale ``lams[r]`` is regular (:func:`_regular`)."""
    regular = True
    for r in range(lams.shape[0]):
        regular = regular and _regular(lams[r])
    return regular


@kernel
def _inverse_scales(d: Any, epsilon: float, lams: Any) -> bool:
    """``lams[r] = eps / (2 max d[r])`` for every row (:func:`rnm_inverse_scale`); whether they
    are all regular. Computed once, before the selection loop, off its critical path."""
    regular = True
    for r in range(d.shape[0]):
        lams[r] = epsilon / (2.0 * row_maximum(d, r))
        regular = regular and _regular(lams[r])
    return regular


@kernel
def _rnm_select_rows(q: Any, lam: float, lams: Any, regular: bool, code: int, rng: Any,
                     out: Any) -> int:  # fmt: skip
    """eq. (3) on every row of the 2-D ``q``: ``argmax(u + z)`` with the gaps
    ``u = (q - max q) * lam`` (:func:`scaled_gap`; ``lam`` per row, see above) and ``z``
    standard noise of family ``NOISES[code]`` drawn for the candidates in order;
    ``numpy.argmax``'s rule. Into ``out[r]`` (unless ``out`` is None); returns the last row's
    selection."""
    k = q.shape[1]
    best_a = 0
    for r in range(q.shape[0]):
        lr = _batch_lam(lam if lams is None else lams[r], regular)
        m = row_maximum(q, r)
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            v = scaled_gap(q[r, a], m, lr) + standard_noise(code, rng)
            best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        best_a = store_first_max(best_a, first_nan, out, r)
    return best_a


@kernel
def _permute_and_flip_rows(q: Any, lam: float, lams: Any, regular: bool, rng: Any,
                           out: Any) -> int:  # fmt: skip
    """Permute-and-flip on every row of the 2-D ``q`` with log acceptance probabilities
    ``u = (q - max q) * lam`` (``lam`` per row as for :func:`_rnm_select_rows`; see
    :class:`PermuteAndFlip`): the accepted candidate (``E + u >= 0``, ``E ~ Exp(1)`` drawn in
    order) of smallest excess ``E + u``. Into ``out[r]`` (unless None); returns the last."""
    k = q.shape[1]
    best_a = 0
    for r in range(q.shape[0]):
        lr = _batch_lam(lam if lams is None else lams[r], regular)
        m = row_maximum(q, r)
        best_a = 0
        best = math.inf
        for a in range(k):
            # E >= -u <=> E + u >= 0 exactly: a rounded sum has the sign of the exact one; a
            # maximiser (u = 0) always accepts, so some candidate does
            x = rng.standard_exponential() + scaled_gap(q[r, a], m, lr)
            # numpy.argmin's first minimum among the accepted (x >= 0; a NaN never comes
            # first), without a branch on the random acceptance
            accepted = x >= 0.0
            best_a = a if accepted & (x < best) else best_a
            best = min(x, best) if accepted else best
        if out is not None:
            out[r] = best_a
    return best_a


@kernel
def _rnmh_select_rows(q: Any, d: Any, epsilon: float, rng: Any, out: Any) -> int:
    """eq. (4) on every row of the 2-D ``q``: ``argmax((q - max q) + E * (2 d / eps))``,
    ``E ~ Exp(1)`` drawn in order. Into ``out[r]`` (unless None); returns the last."""
    k = q.shape[1]
    best_a = 0
    for r in range(q.shape[0]):
        m = row_maximum(q, r)
        best, best_a, first_nan = -math.inf, 0, -1
        for a in range(k):
            v = rng.standard_exponential() * (d[r, a] * 2.0 / epsilon) + (q[r, a] - m)
            best, best_a, first_nan = first_max_step(v, a, best, best_a, first_nan)
        best_a = store_first_max(best_a, first_nan, out, r)
    return best_a


@kernel
def rnm_row(q: Any, lam: float, code: int, rng: Any) -> int:
    """eq. (3) for one row ``q`` (shape ``(K,)``): ``argmax(u + z)`` with the gaps
    ``u = (q - max q) * lam`` (:func:`scaled_gap`), ``lam = 1 / scale``, and ``z`` standard noise
    of family ``NOISES[code]`` drawn for the candidates in order; ``numpy.argmax``'s rule."""
    return _rnm_select_rows(q[None, :], lam, None, True, code, rng, None)


@kernel
def permute_and_flip_row(q: Any, lam: float, rng: Any) -> int:
    """Permute-and-flip for one row ``q`` with log acceptance probabilities
    ``u = (q - max q) * lam`` (see :class:`PermuteAndFlip`): the accepted candidate
    (``E + u >= 0``, ``E ~ Exp(1)`` drawn in order) of smallest excess ``E + u``."""
    return _permute_and_flip_rows(q[None, :], lam, None, True, rng, None)


@kernel
def rnmh_row(q: Any, d: Any, epsilon: float, rng: Any) -> int:
    """eq. (4) for one row: ``argmax((q - max q) + E * (2 d / eps))``, ``E ~ Exp(1)`` drawn in
    order. Shifting by the row maximum (exact) keeps the noise's resolution for large scores;
    a gap beyond the float range is ``-inf`` (probability 0)."""
    return _rnmh_select_rows(q[None, :], d[None, :], epsilon, rng, None)


@kernel
def _rnm_rows_lam(q: Any, lam: Any, code: int, rng: Any, out: Any) -> None:
    _rnm_select_rows(q, 0.0, lam, _lams_regular(lam), code, rng, out)


@kernel
def rnm_rows(q: Any, d: Any, epsilon: float, code: int, rng: Any, out: Any) -> None:
    """:class:`RNM` on a batch: ``out[r] = rnm_row(q[r], eps / (2 max d[r]), code, rng)``."""
    if q.shape[0] == 1:  # one row (one replication): its scale as a scalar, no allocation
        lam = rnm_inverse_scale(d[0], epsilon)
        _rnm_select_rows(q, lam, None, _regular(lam), code, rng, out)
        return
    lams = np.empty(q.shape[0])
    _rnm_select_rows(q, 0.0, lams, _inverse_scales(d, epsilon, lams), code, rng, out)


@kernel
def permute_and_flip_rows(q: Any, d: Any, epsilon: float, rng: Any, out: Any) -> None:
    """:class:`PermuteAndFlip` on a batch, row by row (:func:`permute_and_flip_row`)."""
    if q.shape[0] == 1:  # one row (one replication): its scale as a scalar, no allocation
        lam = rnm_inverse_scale(d[0], epsilon)
        _permute_and_flip_rows(q, lam, None, _regular(lam), rng, out)
        return
    lams = np.empty(q.shape[0])
    _permute_and_flip_rows(q, 0.0, lams, _inverse_scales(d, epsilon, lams), rng, out)


@kernel
def rnmh_rows(q: Any, d: Any, epsilon: float, rng: Any, out: Any) -> float:
    """:class:`RNMH` on a batch, row by row (:func:`rnmh_row`). Returns ``max d``; when
    ``2 max d / eps`` overflows nothing is drawn or written (the caller raises)."""
    dmax = -math.inf
    for r in range(d.shape[0]):
        dm = d[r, 0]
        for a in range(1, d.shape[1]):
            dm = _maximum(dm, d[r, a])
        dmax = max(dmax, dm)  # a row with a NaN is skipped, as the former code did
    # 2 d / eps is increasing in d: it overflows somewhere iff it does at max d
    if not math.isfinite(2.0 * dmax / epsilon):
        return dmax
    _rnmh_select_rows(q, d, epsilon, rng, out)
    return dmax


# -- the compiled-selector kernels (dpbandits.selectors.compiled): kernel(params, q, d, rng, out)
@kernel
def rnm_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`RNM`'s compiled kernel, ``params = (epsilon, noise code)``: :func:`rnm_rows`."""
    rnm_rows(q, d, params[0], params[1], rng, out)
    return True


@kernel
def permute_and_flip_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`PermuteAndFlip`'s compiled kernel, ``params = (epsilon,)``."""
    permute_and_flip_rows(q, d, params[0], rng, out)
    return True


@kernel
def rnmh_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`RNMH`'s compiled kernel, ``params = (epsilon,)``; False (nothing drawn) when
    the noise scale ``2 max d / eps`` overflows."""
    epsilon = params[0]
    d_max = rnmh_rows(q, d, epsilon, rng, out)
    return math.isfinite(2.0 * d_max / epsilon)


# -- the numpy-facing helpers ------------------------------------------------------------------
def _row_lams(lam: FloatArray, r: int) -> FloatArray:
    return np.ascontiguousarray(np.broadcast_to(np.asarray(lam, dtype=np.float64), (r, 1))[:, 0])


def rnm_select(q: FloatArray, scale: FloatArray, noise: str, rng: np.random.Generator) -> IntArray:
    """``argmax(q + scale * z)`` with standard ``z`` of the given family (shape-normalised).

    ``scale`` has shape ``(R, 1)``, entries ``> 0``.
    """
    code = noise_code(noise)
    with np.errstate(over="ignore", divide="ignore"):
        lam = 1.0 / np.asarray(scale, dtype=np.float64)
    out = np.empty(q.shape[0], dtype=np.int64)
    _rnm_rows_lam(q, _row_lams(lam, q.shape[0]), code, rng, out)
    return out


class RNM(KernelBacked, Selector):
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
        self._code = noise_code(noise)
        self.noise = noise

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return CompiledKernel(rnm_kernel, (float(self.epsilon), self._code))


class ExponentialMechanism(RNM):
    """The exponential mechanism ``P(a) ∝ exp(eps q[a] / (2D))`` (McSherry & Talwar 2007).

    Sampled by the Gumbel-max trick, i.e. ``rnm`` with ``noise="gumbel"`` (§IV); this works
    in log-space, so huge ``eps * q`` never overflows.
    """

    name = "exponential_mechanism"
    summary = "softmax of eps q/(2D) via Gumbel-max"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon, noise="gumbel")


class PermuteAndFlip(KernelBacked, Selector):
    """Permute-and-flip (McKenna & Sheldon 2020).

    Visit the candidates in a uniformly random order and accept ``a`` with probability
    ``exp(eps (q[a] - max q) / (2D))``; the first accepted candidate is the output. The coins
    of the candidates are independent of the order, so we flip all coins at once and output a
    uniformly random accepted candidate (the first of a random order among the accepted ones);
    a maximiser always accepts. Same output law as exponential-noise RNM (Ding et al. 2021).

    Accept ``a`` iff ``U <= exp(u)`` <=> ``E >= -u`` with ``E = -log U ~ Exp(1)`` (log-space).
    Given the coins, the excesses ``E + u`` of the accepted candidates are i.i.d. ``Exp(1)``
    (memorylessness) and independent of which candidates accepted, so the accepted candidate
    with the smallest excess is a uniformly random one -- the first accepted in a uniformly
    random order. One draw per candidate instead of a coin and an order key
    (:func:`permute_and_flip_row`).
    """

    name = "permute_and_flip"
    guarantee = "eps-DP"
    summary = "random order, accept a w.p. exp(eps (q[a]-max q)/(2D))"

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return CompiledKernel(permute_and_flip_kernel, (float(self.epsilon),))


class RNMH(KernelBacked, Selector):
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
        out = self.run_kernel(q, d, rng)
        if out is None:  # the noise scale overflows (rnmh_kernel): nothing was drawn
            dmax = float(np.max(d))
            raise ValueError(
                f"epsilon={self.epsilon!r} is too small for rnmh with max d = {dmax:.3g}: "
                f"the noise scale 2 d / epsilon overflows; use epsilon >= "
                f"{2.0 * dmax / checks.MAX_NOISE_SCALE:.3g}"
            )
        return out

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return CompiledKernel(rnmh_kernel, (float(self.epsilon),))

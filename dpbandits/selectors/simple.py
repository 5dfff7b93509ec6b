"""Selectors that ignore the sensitivities: uniform, greedy and k-randomised response (§III-B).

All three use only the *ranking* of the scores (or nothing at all), so ``uses_sensitivities`` is
False. Ties for the maximum are broken uniformly at random (§IV).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbandits.core.jit import (
    generator_address,
    generator_at,
    integers_below,
    kernel,
)
from dpbandits.selectors.base import FloatArray, IntArray, Selector
from dpbandits.selectors.compiled import CompiledKernel, KernelBacked

__all__ = [
    "KRR",
    "Greedy",
    "RankingSelector",
    "Uniform",
    "argmax_random_ties",
    "argmax_ties",
    "argmax_ties_rows",
    "greedy_kernel",
    "krr_kernel",
    "krr_select_rows",
    "uniform_kernel",
    "uniform_rows",
]


# -- the compiled steps (dpbandits.core.jit) ---------------------------------------------------
@kernel
def _argmax_ties_select(q: Any, rng: Any, out: Any) -> int:
    """:func:`argmax_ties` of every row of the 2-D ``q``, in order, into ``out`` (unless None);
    returns the last row's. One call per batch, the rows indexed ``q[r, a]`` (a call per row
    passing an array costs more than the selection), the maximum found without a branch on
    the scores (a data-dependent branch is mispredicted about once per new maximum)."""
    k = q.shape[1]
    first = 0
    for r in range(q.shape[0]):
        top = q[r, 0]
        first = 0
        nan = top != top
        for a in range(1, k):
            v = q[r, a]
            first = a if v > top else first  # the first maximum
            top = max(v, top)
            nan |= v != v
        if nan:  # numpy.maximum gives NaN, which no entry equals: 0, as argmax of all-False
            first = 0
        else:
            c = 0
            for a in range(k):
                c += q[r, a] == top
            if c > 1:
                rank = integers_below(c, rng)
                for a in range(k):
                    if q[r, a] == top:
                        if rank == 0:
                            first = a
                            break
                        rank -= 1
        if out is not None:
            out[r] = first
    return first


@kernel
def argmax_ties(q: Any, rng: Any) -> int:
    """argmax of the 1-D ``q`` with ties broken uniformly at random: the ``j``-th of the ``c``
    maximisers for a uniform rank ``j`` in ``[0, c)``, drawn only when ``c > 1``
    (``rng.integers(0, c)``). A NaN maximum (no entry equals it) gives 0, as numpy's
    ``argmax`` of an all-False mask."""
    return _argmax_ties_select(q[None, :], rng, None)


@kernel
def argmax_ties_rows(q: Any, rng: Any, out: Any) -> None:
    """:func:`argmax_ties` of every row of the 2-D ``q``, in order, into ``out``."""
    _argmax_ties_select(q, rng, out)


@kernel
def uniform_rows(k: int, rng: Any, out: Any) -> None:
    """A uniform index in ``[0, k)`` per entry of ``out``, in order
    (``rng.integers(0, k, size=len(out))``)."""
    for r in range(out.shape[0]):
        out[r] = integers_below(k, rng)


@kernel
def krr_select_rows(q: Any, p_keep: float, rng: Any, out: Any) -> None:
    """k-randomised response on every row of the 2-D ``q`` (§III-B) into ``out``.

    Draws in the order of the batched formulation: the tie-breaking ranks of every row's
    argmax (:func:`argmax_ties`), then one uniform per row (keep the argmax iff it is below
    ``p_keep``), then, for ``K > 2``, one uniform index in ``[0, K - 1)`` per row (shifted
    past the argmax: a uniform other candidate; ``K = 2`` needs no draw). The phases span all
    rows, so this kernel selects for a batch (one row is the case ``R = 1``).
    """
    r, k = q.shape
    _argmax_ties_select(q, rng, out)
    for i in range(r):
        # a discarded argmax is kept as ~argmax (< 0) until its replacement is drawn: no
        # work array
        out[i] = out[i] if rng.random() < p_keep else ~out[i]
    for i in range(r):
        best = out[i]
        kept = best >= 0
        best = best if kept else ~best
        other = integers_below(k - 1, rng) if k > 2 else 0
        other += other >= best  # uniform over the K - 1 candidates other than the argmax
        out[i] = best if kept else other


def argmax_random_ties(q: FloatArray, rng: np.random.Generator) -> IntArray:
    """Row-wise argmax of ``q`` (shape ``(R, K)``), ties broken uniformly at random.

    Rows with a unique maximiser take ``argmax``; in rows with ``c > 1`` maximisers a uniform
    rank ``j`` in ``[0, c)`` picks the ``j``-th maximiser, a uniform choice among them.
    Compiled: :func:`argmax_ties_rows`.
    """
    if q.ndim != 2 or (q.shape[1] == 0 and q.shape[0] > 0):
        raise ValueError(f"q must have shape (R, K) with K >= 1, got {q.shape}")
    out = np.empty(q.shape[0], dtype=np.int64)
    _argmax_ties_rows(q, generator_address(rng), out)
    return out


# the entries from Python: the generator by address (see dpbandits.core.jit.generator_at)
@kernel
def _argmax_ties_rows(q: Any, pointers: Any, out: Any) -> None:
    argmax_ties_rows(q, generator_at(pointers), out)


# -- the compiled-selector kernels (dpbandits.selectors.compiled): kernel(params, q, d, rng, out)
@kernel
def uniform_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`Uniform`'s compiled kernel, ``params = ()``: :func:`uniform_rows`."""
    uniform_rows(q.shape[1], rng, out)
    return True


@kernel
def greedy_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`Greedy`'s compiled kernel, ``params = ()``: :func:`argmax_ties_rows`."""
    argmax_ties_rows(q, rng, out)
    return True


@kernel
def krr_kernel(params: Any, q: Any, d: Any, rng: Any, out: Any) -> bool:
    """:class:`KRR`'s compiled kernel, ``params = (p_keep,)``: :func:`krr_select_rows`."""
    krr_select_rows(q, params[0], rng, out)
    return True


#: The kernels of the selectors without parameters (built once).
_UNIFORM = CompiledKernel(uniform_kernel, ())
_GREEDY = CompiledKernel(greedy_kernel, ())


class RankingSelector(KernelBacked, Selector):
    """A selector that reads at most the ranking of the scores, never the sensitivities ``d``
    (the three of this module), with a compiled kernel that ``select_batch`` runs."""

    uses_sensitivities = False


class Uniform(RankingSelector):
    """Uniform choice among the K candidates: 0-DP (§IV).

    ``epsilon`` is accepted (so that sweeps over eps can include this baseline) but unused.
    """

    name = "uniform"
    guarantee = "0-DP (output independent of the data)"
    summary = "uniform over the K candidates"

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return _UNIFORM


class Greedy(RankingSelector):
    """argmax q with ties broken uniformly at random: the non-private reference (§IV).

    ``epsilon`` is accepted for uniformity with the other selectors but unused.
    """

    name = "greedy"
    private = False
    guarantee = "not private (reference)"
    summary = "argmax q, ties uniformly at random"

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return _GREEDY


class KRR(RankingSelector):
    """k-randomised response (Warner 1965; §III-B).

    Outputs ``argmax q`` (ties at random) with probability ``e^eps / (e^eps + K - 1)`` and each
    other candidate with probability ``1 / (e^eps + K - 1)``. eps-DP for any scores, because the
    output distribution depends on the data only through the argmax.
    """

    name = "krr"
    guarantee = "eps-DP"
    summary = "argmax w.p. e^eps/(e^eps+K-1), else a uniform other candidate"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon)
        self._p_keep: dict[tuple[int, float], float] = {}  # per (K, eps): computed once

    def p_keep(self, k: int) -> float:
        """Probability of outputting the argmax among ``k`` candidates, ``e^eps/(e^eps+k-1)``."""
        p_keep = self._p_keep.get((k, self.epsilon))
        if p_keep is None:
            # e^eps/(e^eps+K-1) written as 1/(1+(K-1)e^-eps): no overflow for large eps.
            p_keep = float(1.0 / (1.0 + (k - 1) * np.exp(-self.epsilon)))
            self._p_keep[(k, self.epsilon)] = p_keep
        return p_keep

    def kernel_for(self, n_candidates: int) -> CompiledKernel:
        return CompiledKernel(krr_kernel, (self.p_keep(n_candidates),))

"""Selectors that ignore the sensitivities: uniform, greedy and k-randomised response (§III-B).

All three use only the *ranking* of the scores (or nothing at all), so ``uses_sensitivities`` is
False. Ties for the maximum are broken uniformly at random (§IV).
"""

from __future__ import annotations

import numpy as np

from dpbandits.selectors.base import FloatArray, IntArray, Selector, row_max

__all__ = ["Greedy", "KRR", "RankingSelector", "Uniform", "argmax_random_ties"]


def argmax_random_ties(q: FloatArray, rng: np.random.Generator) -> IntArray:
    """Row-wise argmax of ``q`` (shape ``(R, K)``), ties broken uniformly at random.

    Rows with a unique maximiser take ``argmax``; in rows with ``c > 1`` maximisers a uniform
    rank ``j`` in ``[0, c)`` picks the ``j``-th maximiser, a uniform choice among them.
    """
    is_max = q == row_max(q)
    out = is_max.argmax(1).astype(np.int64, copy=False)
    # the common case has one maximiser per row: one count instead of per-row sums
    if np.count_nonzero(is_max) > q.shape[0]:
        n_max = is_max.sum(axis=1)
        tied = np.flatnonzero(n_max > 1)
        rank = rng.integers(0, n_max[tied])  # uniform rank among the tied maximisers
        position = np.cumsum(is_max[tied], axis=1) - 1  # rank of each maximiser in its row
        hit = is_max[tied] & (position == rank[:, None])
        out[tied] = np.argmax(hit, axis=1)
    return out


class RankingSelector(Selector):
    """A selector that reads at most the ranking of the scores, never the sensitivities ``d``
    (the three of this module)."""

    uses_sensitivities = False


class Uniform(RankingSelector):
    """Uniform choice among the K candidates: 0-DP (§IV).

    ``epsilon`` is accepted (so that sweeps over eps can include this baseline) but unused.
    """

    name = "uniform"
    guarantee = "0-DP (output independent of the data)"
    summary = "uniform over the K candidates"

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        return np.asarray(rng.integers(0, q.shape[1], size=q.shape[0], dtype=np.int64))


class Greedy(RankingSelector):
    """argmax q with ties broken uniformly at random: the non-private reference (§IV).

    ``epsilon`` is accepted for uniformity with the other selectors but unused.
    """

    name = "greedy"
    private = False
    guarantee = "not private (reference)"
    summary = "argmax q, ties uniformly at random"

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        return argmax_random_ties(q, rng)


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

    def select_batch(self, q: FloatArray, d: FloatArray, rng: np.random.Generator) -> IntArray:
        r, k = q.shape
        best = argmax_random_ties(q, rng)
        p_keep = self._p_keep.get((k, self.epsilon))
        if p_keep is None:
            # e^eps/(e^eps+K-1) written as 1/(1+(K-1)e^-eps): no overflow for large eps.
            p_keep = 1.0 / (1.0 + (k - 1) * np.exp(-self.epsilon))
            self._p_keep[(k, self.epsilon)] = p_keep
        keep = rng.random(r) < p_keep
        if k > 2:
            other = rng.integers(0, k - 1, size=r, dtype=np.int64)
        else:  # integers(0, 1) is constant 0 and draws nothing: skip its overhead
            other = np.zeros(r, dtype=np.int64)
        other += other >= best  # uniform over the K-1 candidates other than `best`
        return np.where(keep, best, other)

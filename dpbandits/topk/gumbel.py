"""Peeling exponential mechanism and its one-shot Gumbel form (Durfee & Rogers 2019).

- :class:`PeelingEM` -- k rounds of the exponential mechanism, each over the items not yet
  chosen, ``P(a) ∝ exp(eps' q[a] / (2D))`` with ``eps' = eps / k`` (Gumbel-max per round).
- :class:`OneShotGumbel` -- add i.i.d. ``Gumbel(2kD/eps)`` noise to every score once and
  report the k largest in noisy order. Durfee & Rogers (2019, Lemma 4.2) show the ranking has
  exactly the peeling law: the Plackett-Luce probabilities

      P(i_1, ..., i_k) = prod_r  w[i_r] / sum_{a not in {i_1..i_{r-1}}} w[a],
      w = exp(eps q / (2 k D)).

- :class:`ExactTopK` -- the true top-k (non-private reference; non-private SIS of paper 002).

Privacy of the first two: each round is an (eps/k)-DP exponential mechanism for scores with
sensitivity ``D`` in any direction (the factor 2 of the exponential mechanism; no monotonicity
is assumed), so the k-ranking is eps-DP (pure) by basic composition: **eps is split evenly,
eps/k per item**. (Durfee & Rogers' bounded-range analysis gives tighter (eps, delta)
composition; we do not use it.)
"""

from __future__ import annotations

import numpy as np

from dpbandits.topk.base import FloatArray, IntArray, TopKSelector

__all__ = [
    "ExactTopK",
    "OneShotGumbel",
    "PeelingEM",
    "PeelingLaw",
    "gumbel_noise",
    "top_k_ordered",
]


def gumbel_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> FloatArray:
    """Standard Gumbel variates ``-log(-log U)`` (``U = 0`` gives ``-inf``, never NaN)."""
    u = rng.random(shape)
    with np.errstate(divide="ignore"):
        return -np.log(-np.log(u))


def top_k_ordered(v: FloatArray, k: int) -> IntArray:
    """Indices of the k largest entries of each row of ``v``, largest first (ties by index)."""
    r, d = v.shape
    if k < d:
        part = np.argpartition(-v, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(d), (r, d)).copy()
    vals = np.take_along_axis(v, part, axis=1)
    # lexsort: primary -value, secondary index -> deterministic order among ties
    rank = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, rank, axis=1).astype(np.int64)


def _scaled_gaps(q: FloatArray, lam: FloatArray) -> FloatArray:
    """``(q - max q) * lam`` (``lam`` ``(R, 1)``, > 0), maximisers exactly 0, clipped at
    ``-1e300`` so that adding noise never gives NaN (a gap beyond the float range has
    probability 0 anyway)."""
    with np.errstate(over="ignore", invalid="ignore"):
        gaps = q - q.max(axis=1, keepdims=True)
        u = gaps * lam
    # 0 * inf (maximiser, lam overflowed) -> 0; -inf * 0 (lam underflowed) -> 0 (uniform)
    u = np.nan_to_num(u, nan=0.0, posinf=0.0, neginf=-1e300)
    return np.maximum(u, -1e300)


class PeelingLaw(TopKSelector):
    """The peeling law of Durfee & Rogers (2019): what :class:`OneShotGumbel` and
    :class:`PeelingEM` share -- the guarantee and the scaled utilities ``eps q / (2 k D)``."""

    guarantee = "eps-DP (pure): k rounds of an (eps/k)-DP exponential mechanism"

    def utilities(self, q: FloatArray, big_d: FloatArray, k: int) -> FloatArray:
        """``(q - max q) eps / (2 k D)`` per row: the log-weights of every round, eps/k each."""
        with np.errstate(over="ignore", divide="ignore"):
            lam = self.epsilon / (2.0 * k * big_d)
        return _scaled_gaps(q, lam)


class OneShotGumbel(PeelingLaw):
    """One-shot top-k: ``top_k(q + Gumbel(2kD/eps))`` in noisy order (Durfee & Rogers 2019).

    eps-DP (pure) for the ranking; eps/k per item (basic composition of the equivalent
    peeling exponential mechanism).
    """

    name = "gumbel"
    summary = "top-k of q + Gumbel(2kD/eps), noisy order (= peeling EM)"

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        v = self.utilities(q, big_d, k) + gumbel_noise(rng, q.shape)
        return top_k_ordered(v, k)


class PeelingEM(PeelingLaw):
    """Peeling: k sequential exponential mechanisms at eps/k over the remaining items.

    Same output law as :class:`OneShotGumbel` (Durfee & Rogers 2019), kept as the textbook
    reference; costs k passes over the scores.
    """

    name = "peeling"
    summary = "k rounds of the exponential mechanism at eps/k, without replacement"

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        u = self.utilities(q, big_d, k)
        r, d = q.shape
        rows = np.arange(r)
        chosen = np.zeros((r, d), dtype=bool)
        out = np.empty((r, k), dtype=np.int64)
        for step in range(k):
            v = u + gumbel_noise(rng, (r, d))
            v[chosen] = -np.inf  # without replacement; u >= -1e300 keeps the others finite
            a = np.argmax(v, axis=1)
            out[:, step] = a
            chosen[rows, a] = True
        return out


class ExactTopK(TopKSelector):
    """The true top-k, largest first, ties by index. **Not private** (non-private SIS)."""

    name = "exact"
    private = False
    guarantee = "not DP (non-private reference)"
    summary = "the true top-k (non-private)"

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        return np.argsort(-q, axis=1, kind="stable")[:, :k].astype(np.int64)
